// weft-bench: the command line.
//
//   weft-bench EXPERIMENT [options] [--json]   run one experiment
//   weft-bench list [--json]                   the registered experiments
//   weft-bench demo [--out DIR] ...            every demo experiment + the HTML report
//   weft-bench --help | EXPERIMENT --help
//
// Experiments are not named here: each registers itself (see harness.hpp).
// `demo` runs each experiment in a child process (this executable again, with
// --jsonl), so that one experiment's runtime state, CPU affinity and memory
// high-water marks never leak into the next, and a hang is cut off by a timeout.
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.hpp"

extern char** environ;

namespace wb = weft::bench;
namespace fs = std::filesystem;

namespace {

constexpr int exit_usage = 2;

std::vector<std::string> experiment_names() {
    std::vector<std::string> names;
    for (auto const* e : wb::experiments()) names.push_back(e->name);
    return names;
}

std::string join(std::vector<std::string> const& v, char const* sep) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
    return out;
}

void print_usage(std::FILE* out) {
    std::fprintf(out,
                 "usage: weft-bench EXPERIMENT [options] [--json]\n"
                 "       weft-bench EXPERIMENT --help\n"
                 "       weft-bench list [--json]\n"
                 "       weft-bench demo [--out DIR] [--only NAMES] [--no-report] [--timeout S] [--python PATH]\n"
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
                 "  %-*s  runs every demo experiment, writes out/results.jsonl and out/report/index.html\n",
                 int(w), "list", int(w), "demo");
}

void print_experiment_help(wb::experiment const& e) {
    std::printf("usage: weft-bench %s [options]\n\n%s\n", e.name.c_str(), e.description.c_str());
    if (!e.details.empty()) std::printf("\n%s\n", e.details.c_str());
    auto specs = e.options;
    for (auto const& c : wb::common_options()) specs.push_back(c);
    std::printf("\noptions:\n%s", wb::options_help(specs).c_str());
}

// ---------------------------------------------------------------------------
// Child processes
// ---------------------------------------------------------------------------

constexpr int status_timeout = 124;
constexpr int status_not_found = 127;

// Runs argv (PATH lookup for argv[0]); quiet sends its stdout and stderr to
// /dev/null. Returns the exit status, 128+signal if it was killed, 124 after
// a timeout (it is then killed), 127 if it could not be started.
int run_process(std::vector<std::string> const& args, double timeout_s, bool quiet) {
    std::vector<char*> argv;
    for (auto const& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (quiet) {
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    }
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = 0;
    int const rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return status_not_found;

    std::uint64_t const deadline =
        timeout_s > 0 ? wb::now_ns() + static_cast<std::uint64_t>(timeout_s * 1e9) : UINT64_MAX;
    int status = 0;
    for (;;) {
        pid_t const r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) return status_not_found;
        if (wb::now_ns() > deadline) {
            std::fprintf(stderr, "weft-bench demo: '%s' still running after %.0f s: stopping it\n",
                         join(args, " ").c_str(), timeout_s);
            kill(pid, SIGTERM);
            for (int i = 0; i < 100 && waitpid(pid, &status, WNOHANG) == 0; ++i) usleep(20000);
            if (waitpid(pid, &status, WNOHANG) == 0) {
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
            }
            return status_timeout;
        }
        usleep(10000);
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 1;
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
        int const rc = run_process({c, "-c", "import matplotlib"}, 60, true);
        if (rc == 0) return c;
        if (rc != status_not_found && plain.empty()) plain = c;
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

int cmd_demo(std::vector<std::string> const& args) {
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
         .help = "comma-separated demo experiments to run",
         .choices = demo_names},
        {.name = "no-report", .kind = wb::opt_kind::flag, .help = "do not build the HTML report"},
        {.name = "timeout",
         .kind = wb::opt_kind::number,
         .metavar = "S",
         .default_value = "1200",
         .help = "stop an experiment that runs longer than S seconds",
         .min = 1,
         .max = 1e6},
        {.name = "python",
         .kind = wb::opt_kind::string,
         .metavar = "PATH",
         .help = "Python with matplotlib for the report (default: $WEFT_PYTHON, python3, /usr/bin/python3)"},
        {.name = "help", .kind = wb::opt_kind::flag, .help = "this text"},
    };
    auto const opts = wb::parse_options("weft-bench demo", specs, args);
    if (opts.flag("help")) {
        std::printf(
            "usage: weft-bench demo [options]\n\nRuns every experiment that is part of the demo, each in "
            "its own process at its demo size,\nprints their tables, writes all JSON lines to "
            "OUT/results.jsonl and builds OUT/report/index.html.\n\noptions:\n%s",
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

    wb::table summary({"experiment", "status", "seconds"});
    int failures = 0;
    std::uint64_t const t_demo = wb::now_ns();
    for (auto const* e : queue) {
        std::vector<std::string> child = {exe, e->name};
        child.insert(child.end(), e->demo_args.begin(), e->demo_args.end());
        child.push_back("--jsonl");
        child.push_back(results.string());
        std::printf("\n=== %s: %s\n    $ weft-bench %s\n\n", e->name.c_str(), e->description.c_str(),
                    join(std::vector<std::string>(child.begin() + 1, child.end()), " ").c_str());
        std::uint64_t const t0 = wb::now_ns();
        int const rc = run_process(child, opts.number("timeout"), false);
        double const secs = double(wb::now_ns() - t0) * 1e-9;
        std::string status = "ok";
        if (rc == status_timeout)
            status = "timed out";
        else if (rc > 128)
            status = "killed by signal " + std::to_string(rc - 128);
        else if (rc != 0)
            status = "failed (exit " + std::to_string(rc) + ")";
        if (rc != 0) ++failures;
        summary.add_row({e->name, status, wb::fmt(secs, 1)});
    }

    std::printf("\n=== demo summary (%.1f s)\n", double(wb::now_ns() - t_demo) * 1e-9);
    summary.print(stdout);
    std::printf("results: %s\n", results.c_str());

    bool report_ok = true;
    if (!opts.flag("no-report")) {
        fs::path const report_dir = out / "report";
        std::string const script = wb::find_report_script();
        std::string plain;
        std::string const python = find_python(opts.string("python"), plain);
        if (script.empty()) {
            std::fprintf(stderr,
                         "weft-bench demo: cannot find bench/report/make_report.py (looked beside the sources, "
                         "upward from the executable and from the current directory); set WEFT_BENCH_REPORT "
                         "to its path. The tables above and %s are complete.\n",
                         results.c_str());
            report_ok = false;
        } else if (python.empty() && plain.empty()) {
            std::fprintf(stderr,
                         "weft-bench demo: no python3 found to build the report (install python3 and "
                         "python3-matplotlib, or set WEFT_PYTHON). The tables above and %s are complete.\n",
                         results.c_str());
            report_ok = false;
        } else {
            if (python.empty())
                std::fprintf(stderr,
                             "weft-bench demo: no Python with matplotlib found (tried --python, $WEFT_PYTHON, "
                             "python3, /usr/bin/python3); install python3-matplotlib (Debian) for the plots. "
                             "Building the report without plots.\n");
            std::string const py = python.empty() ? plain : python;
            int const rc = run_process({py, script, results.string(), report_dir.string()}, 600, false);
            if (rc == 0 && !python.empty()) {
                std::printf("report: %s\n", (report_dir / "index.html").c_str());
            } else {
                std::fprintf(stderr, "weft-bench demo: the report is incomplete (%s exited with %d)\n", script.c_str(),
                             rc);
                report_ok = false;
            }
        }
    }
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
    try {
        if (cmd == "--help" || cmd == "-h" || cmd == "help") {
            print_usage(stdout);
            return 0;
        }
        if (cmd == "list") return cmd_list(args);
        if (cmd == "demo") return cmd_demo(args);
        if (auto const* e = wb::find_experiment(cmd)) return cmd_experiment(*e, args);
        std::fprintf(stderr, "weft-bench: unknown experiment '%s'; valid: %s, list, demo (see weft-bench --help)\n",
                     cmd.c_str(), join(experiment_names(), ", ").c_str());
        return exit_usage;
    } catch (wb::usage_error const& err) {
        std::fprintf(stderr, "%s\n", err.what());
        return exit_usage;
    }
}
