// weft-bench: the command line.
//
//   weft-bench EXPERIMENT [options] [--json]   run one experiment
//   weft-bench list [--json]                   the registered experiments
//   weft-bench demo [--out DIR] ...            every demo experiment, short runs + the HTML report
//   weft-bench all [--out DIR] ...             the same experiments at full size + the report
//   weft-bench --help | EXPERIMENT --help
//
// Experiments are not named here: each registers itself (see harness.hpp).
// `demo` and `all` run each experiment in a child process (this executable again, with
// --jsonl), so that one experiment's runtime state, CPU affinity and memory
// high-water marks never leak into the next, and a hang is cut off by a timeout.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "harness.hpp"

namespace wb = weft::bench;
namespace fs = std::filesystem;
using wb::join;

namespace {

constexpr int exit_usage = 2;

// How long `weft-bench all` takes, for the demo's closing lines and --help:
// estimated from its parts (docs/bench.md, "demo, all and the report"):
// about 28 minutes without suite000 at the paper's sizes, 7-10 with it.
constexpr char const* full_suite_duration = "about 40 minutes";

std::vector<std::string> experiment_names() {
    std::vector<std::string> names;
    for (auto const* e : wb::experiments()) names.push_back(e->name);
    return names;
}

void print_usage(std::FILE* out) {
    std::fprintf(out,
                 "usage: weft-bench EXPERIMENT [options] [--json]\n"
                 "       weft-bench EXPERIMENT --help\n"
                 "       weft-bench list [--json]\n"
                 "       weft-bench demo|all [--out DIR] [--only NAMES] [--no-report] [--timeout S] [--python PATH]\n"
                 "\n"
                 "Benchmarks of the weft user-level threads runtime. Without --json an experiment\n"
                 "prints readable tables; with --json it prints one JSON object per line (JSONL),\n"
                 "each with \"experiment\" and the figures it names. Definitions: docs/bench.md.\n"
                 "\n"
                 "experiments:\n");
    std::size_t w = 4;
    for (auto const* e : wb::experiments()) w = std::max(w, e->name.size());
    for (auto const* e : wb::experiments())
        std::fprintf(out, "  %-*s  %s%s\n", int(w), e->name.c_str(), e->description.c_str(),
                     e->in_demo ? "" : " (not in demo)");
    std::fprintf(out,
                 "\ncommands:\n"
                 "  %-*s  the experiments above, one per line\n"
                 "  %-*s  short runs of every demo experiment (about 80 s), out/results.jsonl, out/report/\n"
                 "  %-*s  the same experiments at full size (%s on 2 cores), same outputs\n",
                 int(w), "list", int(w), "demo", int(w), "all", full_suite_duration);
}

void print_experiment_help(wb::experiment const& e) {
    std::printf("usage: weft-bench %s [options]\n\n%s\n", e.name.c_str(), e.description.c_str());
    if (!e.details.empty()) std::printf("\n%s\n", e.details.c_str());
    auto specs = e.options;
    for (auto const& c : wb::common_options()) specs.push_back(c);
    std::printf("\noptions:\n%s", wb::options_help(specs).c_str());
}

// A Python that can import matplotlib: --python, $WEFT_PYTHON, python3 on
// PATH, /usr/bin/python3 (Debian's, which has python3-matplotlib when the
// PATH one — a pyenv or venv — does not). `plain` gets the first Python found
// at all, for a report without plots.
std::string find_python(std::string const& preferred, std::string& plain) {
    std::vector<std::string> candidates;
    if (!preferred.empty()) candidates.push_back(preferred);
    if (char const* env = std::getenv("WEFT_PYTHON"); env && *env) candidates.emplace_back(env);
    candidates.emplace_back("python3");
    candidates.emplace_back("/usr/bin/python3");
    for (auto const& c : candidates) {
        int const rc = wb::run_with_timeout({c, "-c", "import matplotlib"}, 60, true);
        if (rc == 0) return c;
        if (rc != wb::status_not_found && plain.empty()) plain = c;
    }
    return {};
}

// ---------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------

int cmd_list(std::vector<std::string> const& args) {
    auto opts = wb::parse_options("weft-bench list", {wb::common_options()[0]}, args);
    if (opts.flag("json")) {
        for (auto const* e : wb::experiments()) {
            wb::json_object o;
            o.add("experiment", "list").add("name", e->name).add("description", e->description);
            o.add("in_demo", e->in_demo);
            std::printf("%s\n", o.str().c_str());
        }
        return 0;
    }
    wb::table t({"experiment", "in demo", "description"}, "lll");
    for (auto const* e : wb::experiments()) t.add_row({e->name, e->in_demo ? "yes" : "no", e->description});
    t.print(stdout);
    return 0;
}

// What `demo` and `all` differ in.
struct suite {
    char const* name;         // the command
    bool demo_sizes;          // each experiment's demo_args (short runs), else its defaults
    char const* timeout;      // default --timeout (seconds per experiment)
    char const* description;  // for --help
};

suite const demo_suite{"demo", true, "600",
                       "Runs every experiment that is part of the demo, each in its own process at its demo size\n"
                       "(short runs that still show each paper's point), prints their tables and its progress,\n"
                       "writes all JSON lines to OUT/results.jsonl and builds OUT/report/index.html."};
suite const full_suite{"all", false, "7200",
                       "Runs every experiment of the demo at its full benchmark size and rounds (each experiment's\n"
                       "defaults), each in its own process, prints their tables and its progress, writes all JSON\n"
                       "lines to OUT/results.jsonl and builds OUT/report/index.html. `make bench` runs it."};

std::string fmt_elapsed(double secs) {
    char buf[32];
    if (secs < 60)
        std::snprintf(buf, sizeof buf, "%.1f s", secs);
    else
        std::snprintf(buf, sizeof buf, "%d min %02d s", int(secs) / 60, int(secs) % 60);
    return buf;
}

int cmd_suite(suite const& kind, std::vector<std::string> const& args) {
    std::string const command = std::string("weft-bench ") + kind.name;
    std::vector<std::string> demo_names;
    for (auto const* e : wb::experiments())
        if (e->in_demo) demo_names.push_back(e->name);
    std::vector<wb::option_spec> const specs = {
        {.name = "out",
         .kind = wb::opt_kind::string,
         .metavar = "DIR",
         .default_value = "out",
         .help = "where results.jsonl and report/ go"},
        {.name = "only",
         .kind = wb::opt_kind::list,
         .metavar = "NAMES",
         .default_value = join(demo_names, ","),
         .help = "comma-separated experiments to run",
         .choices = demo_names},
        {.name = "no-report", .kind = wb::opt_kind::flag, .help = "do not build the HTML report"},
        {.name = "timeout",
         .kind = wb::opt_kind::number,
         .metavar = "S",
         .default_value = kind.timeout,
         .help = "stop an experiment that runs longer than S seconds",
         .min = 1,
         .max = 1e6},
        {.name = "python",
         .kind = wb::opt_kind::string,
         .metavar = "PATH",
         .help = "Python with matplotlib for the report (default: $WEFT_PYTHON, python3, /usr/bin/python3)"},
        {.name = "help", .kind = wb::opt_kind::flag, .help = "this text"},
    };
    auto const opts = wb::parse_options(command, specs, args);
    if (opts.flag("help")) {
        std::printf("usage: %s [options]\n\n%s\n\noptions:\n%s", command.c_str(), kind.description,
                    wb::options_help(specs).c_str());
        return 0;
    }

    std::string const exe = wb::self_exe();
    if (exe.empty()) wb::die("cannot find this executable through /proc/self/exe");
    fs::path const out = opts.string("out");
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) wb::die("cannot create '%s': %s", out.c_str(), ec.message().c_str());
    fs::path const results = out / "results.jsonl";
    if (std::FILE* f = std::fopen(results.c_str(), "w")) {
        std::fclose(f);
    } else {
        wb::die("cannot write '%s': %s", results.c_str(), std::strerror(errno));
    }

    auto selected = opts.list("only");
    std::vector<wb::experiment const*> queue;
    for (auto const* e : wb::experiments())
        if (e->in_demo && std::find(selected.begin(), selected.end(), e->name) != selected.end()) queue.push_back(e);
    std::stable_sort(queue.begin(), queue.end(), [](auto* a, auto* b) { return a->demo_order < b->demo_order; });

    // The suite's own record: where, when and from what the figures come. It
    // goes first, so that the report can head its page with it.
    wb::json_object rec;
    rec.add("experiment", "suite").add("suite", kind.name).add("date", wb::utc_now_iso());
    rec.add("commit", wb::source_commit());
    char host[256] = {0};
    if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    rec.add("host", host);
    wb::add_provenance(rec);
    rec.add("experiments", std::vector<std::string>(selected.begin(), selected.end()));

    wb::table summary({"experiment", "status", "seconds"});
    int failures = 0;
    std::uint64_t const t_suite = wb::now_ns();
    auto elapsed = [&] { return double(wb::now_ns() - t_suite) * 1e-9; };
    std::printf("%s: %zu experiment(s) on %s (%d CPUs), commit %s\n", command.c_str(), queue.size(),
                wb::cpu_model().c_str(), int(wb::allowed_cpus().size()), wb::source_commit().c_str());
    std::string timings = "{";
    for (std::size_t i = 0; i < queue.size(); ++i) {
        auto const* e = queue[i];
        std::vector<std::string> child = {exe, e->name};
        if (kind.demo_sizes) child.insert(child.end(), e->demo_args.begin(), e->demo_args.end());
        child.push_back("--jsonl");
        child.push_back(results.string());
        std::printf("\n=== [%zu/%zu] %s: %s  (%s so far)\n    $ weft-bench %s\n\n", i + 1, queue.size(),
                    e->name.c_str(), e->description.c_str(), fmt_elapsed(elapsed()).c_str(),
                    join(std::vector<std::string>(child.begin() + 1, child.end()), " ").c_str());
        std::uint64_t const t0 = wb::now_ns();
        int const rc = wb::run_with_timeout(child, opts.number("timeout"), false);
        double const secs = double(wb::now_ns() - t0) * 1e-9;
        std::string status = "ok";
        if (rc == wb::status_timeout)
            status = "timed out";
        else if (rc > 128)
            status = "killed by signal " + std::to_string(rc - 128);
        else if (rc != 0)
            status = "failed (exit " + std::to_string(rc) + ")";
        if (rc != 0) ++failures;
        summary.add_row({e->name, status, wb::fmt(secs, 1)});
        std::printf("--- [%zu/%zu] %s: %s in %s  (%s so far)\n", i + 1, queue.size(), e->name.c_str(), status.c_str(),
                    fmt_elapsed(secs).c_str(), fmt_elapsed(elapsed()).c_str());
        timings += (i ? "," : "") + wb::json_quote(e->name) + ":" + wb::json_number(secs);
    }
    double const total = elapsed();
    double load_end[1] = {0};
    if (getloadavg(load_end, 1) == 1) rec.add("loadavg_1m_end", load_end[0]);
    rec.add_raw("seconds_per_experiment", timings + "}").add("seconds", total).add("failures", failures);

    std::printf("\n=== %s summary: %s\n", command.c_str(), fmt_elapsed(total).c_str());
    summary.print(stdout);
    std::printf("results: %s\n", results.c_str());
    // Prepended: the records of the experiments are already in the file.
    {
        std::string body;
        if (std::FILE* f = std::fopen(results.c_str(), "r")) {
            char buf[65536];
            std::size_t n = 0;
            while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) body.append(buf, n);
            std::fclose(f);
        }
        std::FILE* f = std::fopen(results.c_str(), "w");
        if (f == nullptr) wb::die("cannot write '%s': %s", results.c_str(), std::strerror(errno));
        std::fprintf(f, "%s\n%s", rec.str().c_str(), body.c_str());
        std::fclose(f);
    }

    bool report_ok = true;
    if (!opts.flag("no-report")) {
        fs::path const report_dir = out / "report";
        std::string const script = wb::find_report_script();
        std::string plain;
        std::string const python = find_python(opts.string("python"), plain);
        if (script.empty()) {
            std::fprintf(stderr,
                         "%s: cannot find bench/report/make_report.py (looked beside the sources, "
                         "upward from the executable and from the current directory); set WEFT_BENCH_REPORT "
                         "to its path. The tables above and %s are complete.\n",
                         command.c_str(), results.c_str());
            report_ok = false;
        } else if (python.empty() && plain.empty()) {
            std::fprintf(stderr,
                         "%s: no python3 found to build the report (install python3 and "
                         "python3-matplotlib, or set WEFT_PYTHON). The tables above and %s are complete.\n",
                         command.c_str(), results.c_str());
            report_ok = false;
        } else {
            if (python.empty())
                std::fprintf(stderr,
                             "%s: no Python with matplotlib found (tried --python, $WEFT_PYTHON, "
                             "python3, /usr/bin/python3); install python3-matplotlib (Debian) for the plots. "
                             "Building the report without plots.\n",
                             command.c_str());
            std::string const py = python.empty() ? plain : python;
            int const rc = wb::run_with_timeout({py, script, results.string(), report_dir.string()}, 600, false);
            if (rc == 0 && !python.empty()) {
                std::printf("report: %s\n", (report_dir / "index.html").c_str());
            } else {
                std::fprintf(stderr, "%s: the report is incomplete (%s exited with %d)\n", command.c_str(),
                             script.c_str(), rc);
                report_ok = false;
            }
        }
    }
    if (kind.demo_sizes)
        std::printf(
            "\nThese were short runs. The full suite, every experiment at its benchmark size and rounds, is\n"
            "`build/release/bin/weft-bench all` (or `make bench`): %s on a 2-core machine.\n",
            full_suite_duration);
    return failures == 0 && report_ok ? 0 : 1;
}

int cmd_experiment(wb::experiment const& e, std::vector<std::string> const& args) {
    if (std::find(args.begin(), args.end(), "--help") != args.end()) {
        print_experiment_help(e);
        return 0;
    }
    auto specs = e.options;
    for (auto const& c : wb::common_options()) specs.push_back(c);
    wb::context ctx(e, wb::parse_options("weft-bench " + e.name, specs, args));
    return e.run(ctx);
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        print_usage(stderr);
        return exit_usage;
    }
    std::string const cmd = args.front();
    args.erase(args.begin());
    // Each experiment runs weft at the worker counts it names and compares it
    // with peers that keep theirs: weft's adaptive controller stays off unless
    // WEFT_ADAPT says otherwise. asat and share set it in their child
    // processes, per mode (docs/bench.md).
    if (setenv("WEFT_ADAPT", "off", /*overwrite=*/0) != 0) {
        std::perror("weft-bench: setenv");
        return 1;
    }
    try {
        if (cmd == "--help" || cmd == "-h" || cmd == "help") {
            print_usage(stdout);
            return 0;
        }
        if (cmd == "list") return cmd_list(args);
        if (cmd == "demo") return cmd_suite(demo_suite, args);
        if (cmd == "all") return cmd_suite(full_suite, args);
        if (auto const* e = wb::find_experiment(cmd)) return cmd_experiment(*e, args);
        std::fprintf(stderr,
                     "weft-bench: unknown experiment '%s'; valid: %s, list, demo, all (see weft-bench --help)\n",
                     cmd.c_str(), join(experiment_names(), ", ").c_str());
        return exit_usage;
    } catch (wb::usage_error const& err) {
        std::fprintf(stderr, "%s\n", err.what());
        return exit_usage;
    }
}
