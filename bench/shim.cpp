// weft-bench shim: Narlikar & Blelloch's claim ("Pthreads for Dynamic and
// Irregular Parallelism") measured on an unmodified Pthreads program. The same
// binary, compiled once as a plain Pthreads program (bench/plain_pthreads/dcmm.c:
// the divide-and-conquer matrix multiply with a pthread_create per recursive
// call), runs
//   (a) on glibc's threads,
//   (b) under libweft-pthread (LD_PRELOAD) with each --sched,
//   (c) beside the weft-native version of the same algorithm
//       (apps/matmul/matmul.hpp with weft threads, in a child of this tool),
//   (d) serially (every pthread_create a plain call), without the shim: the
//       ceiling of the glibc / shim target is glibc's time over the serial
//       time divided among the CPUs,
// and a coarse program (bench/plain_pthreads/coarse.c: a thread per worker, fixed
// row blocks) on glibc's threads and under the shim. Every run is a child
// process of its own, so that its peak RSS (wait4's ru_maxrss) is its own.
//
// Rounds are interleaved: each round runs every version once, in turn, and a
// target ratio is the median over rounds of the ratio within a round.
//
// The shim rows' memory figures are weft's, as for the native rows: the most
// threads live and the heap's high-water mark through the shim's malloc
// (WEFT_STATS=1: "heap bytes (malloc) N (peak P)", every block the process
// holds, A, B and C included), against the same program's serial run ("dcmm N
// LEAF serial": plain calls) under the shim, counted the same way. The glibc
// and native rows count the temporaries alone (the program's count, weft's
// weft_malloc), against the serial recursion's temporaries. Each
// run's checksum of C is compared with the glibc run's (exactly for the same
// binary under the shim; to 1e-9 relative for the native version, compiled
// separately).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <weft/weft.h>

#include "harness.hpp"
#include "matmul_peers.hpp"

namespace weft::bench::shim {
namespace {

// One run's figures, from the program's output line and wait4.
struct run_result {
    double time_s = 0;
    double checksum = 0;
    long long max_live_threads = 0;
    long long peak_heap_bytes = 0;
    long long peak_rss_bytes = 0;
    long long weft_max_live = -1;   // weft's statistics (runs under the shim): most threads live
    long long weft_heap_peak = -1;  // and the shim's malloc high-water mark
};

// "key=value key=value ...": the value of key, or dies naming the line.
std::string field(std::string const& line, std::string const& key, std::string const& what) {
    std::size_t at = 0;
    while ((at = line.find(key + "=", at)) != std::string::npos) {
        if (at == 0 || line[at - 1] == ' ') {
            std::size_t const start = at + key.size() + 1;
            return line.substr(start, line.find_first_of(" \n", start) - start);
        }
        at += key.size();
    }
    die("shim: %s printed no %s: '%s'", what.c_str(), key.c_str(), line.c_str());
}

// Runs exe with args and env and reads its line. With `weft_stats`, under the
// shim with WEFT_STATS=1, whose statistics (on stderr, at exit) are read too:
// sh merges the program's stderr into the pipe and execs it, so that wait4
// still reports the program's own peak RSS.
run_result run_child(std::string const& exe, std::vector<std::string> args, std::vector<std::string> env,
                     std::string const& what, bool weft_stats = false) {
    std::string path = exe;
    if (weft_stats) {
        env.push_back("WEFT_STATS=1");
        args.erase(args.begin());
        args.insert(args.begin(), {"sh", "-c", "exec \"$0\" \"$@\" 2>&1", exe});
        path = "/bin/sh";
    }
    piped_child const child = spawn_piped(path, args, env);
    std::string const out = read_all(child.out_fd);
    int status = 0;
    struct rusage ru {};
    while (wait4(child.pid, &status, 0, &ru) < 0)
        if (errno != EINTR) die("wait4: %s", std::strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("shim: %s %s (output: '%s')", what.c_str(),
            WIFEXITED(status) ? ("exited with status " + std::to_string(WEXITSTATUS(status))).c_str()
                              : ("was killed by signal " + std::to_string(WTERMSIG(status))).c_str(),
            out.c_str());
    run_result r;
    r.time_s = std::strtod(field(out, "time_s", what).c_str(), nullptr);
    r.checksum = std::strtod(field(out, "checksum", what).c_str(), nullptr);
    r.max_live_threads = std::strtoll(field(out, "max_live_threads", what).c_str(), nullptr, 10);
    r.peak_heap_bytes = std::strtoll(field(out, "peak_heap_bytes", what).c_str(), nullptr, 10);
    r.peak_rss_bytes = static_cast<long long>(ru.ru_maxrss) * 1024;  // Linux: kilobytes
    if (weft_stats) {
        r.weft_max_live = static_cast<long long>(number_after(out, "most threads live"));
        r.weft_heap_peak = peak_on_line(out, "heap bytes (malloc)");
        if (r.weft_max_live < 0 || r.weft_heap_peak < 0)
            die("shim: %s printed no weft statistics (WEFT_STATS=1: \"most threads live\" and \"heap bytes "
                "(malloc)\"): '%s'",
                what.c_str(), out.c_str());
    }
    return r;
}

// The native version, in a child (--native-child): the same multiply on weft
// threads (apps/matmul with bench/matmul's weft_exec: every fork a weft thread,
// temporaries from weft_malloc), printing dcmm.c's line. Its heap figure is
// weft's heap high-water mark; its live threads, weft's most threads live.
int run_native_child(context& ctx) {
    auto const& o = ctx.opts();
    std::size_t const n = static_cast<std::size_t>(o.integer("n"));
    std::size_t const leaf = static_cast<std::size_t>(o.integer("leaf"));
    std::string const sched = o.list("sched").front();
    weft_config_t cfg{};
    cfg.workers = static_cast<int>(o.integer("workers"));
    cfg.sched = sched.c_str();
    if (int rc = weft_init(&cfg); rc != 0) die("weft_init(sched=%s) failed: %s", sched.c_str(), std::strerror(rc));
    matmul::matrix a(n), b(n), c(n);
    apps::matmul::fill(a.v, n, 1);
    apps::matmul::fill(b.v, n, 2);
    matmul::weft_exec ex;
    check(weft_stats_reset(), "weft_stats_reset");
    std::uint64_t const t0 = now_ns();
    apps::matmul::multiply(ex, a.v, b.v, c.v, n, leaf);
    double const t = static_cast<double>(now_ns() - t0) / 1e9;
    weft_stats_t s;
    check(weft_stats_get(&s), "weft_stats_get");
    check(weft_finalize(), "weft_finalize");
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) sum += c.v.at(i, j);
    std::printf("native n=%zu leaf=%zu time_s=%.6f checksum=%.17g max_live_threads=%llu peak_heap_bytes=%llu\n", n,
                leaf, t, sum, static_cast<unsigned long long>(s.max_live_threads),
                static_cast<unsigned long long>(s.heap_bytes_peak));
    return 0;
}

// The serial program's heap high-water mark: the temporaries on one path of
// the recursion, n^2 + (n/2)^2 + ... doubles down to the leaf (what
// apps::matmul::serial_exec measures, without running it).
long long serial_heap_bytes(std::size_t n, std::size_t leaf) {
    long long bytes = 0;
    for (std::size_t m = n; m > leaf; m /= 2) bytes += static_cast<long long>(m * m * sizeof(double));
    return bytes;
}

struct version {
    std::string program;  // dcmm, coarse
    std::string kind;     // glibc, shim, native
    std::string sched;    // "kernel" for glibc's threads
    std::vector<run_result> runs{};
    std::string label() const {
        return program + " " + kind + (kind == "glibc" || kind == "serial" ? "" : " " + sched);
    }
};

int run(context& ctx) {
    auto const& o = ctx.opts();
    if (o.flag("native-child")) return run_native_child(ctx);
    std::size_t const n = static_cast<std::size_t>(o.integer("n"));
    std::size_t const leaf = static_cast<std::size_t>(o.integer("leaf"));
    int const rounds = static_cast<int>(o.integer("rounds"));
    if (n % leaf != 0 || ((n / leaf) & (n / leaf - 1)) != 0)
        throw usage_error("--n " + std::to_string(n) + " --leaf " + std::to_string(leaf) +
                          ": n / leaf must be a power of two (e.g. --n 1024 --leaf 64)");
    if (!std::string_view(WEFT_BUILD_SANITIZE).empty())
        die("shim: this weft-bench is built with sanitizers (%s), which cannot run programs under libweft-pthread "
            "(docs/shim.md, \"With sanitizers\"); use the release build",
            WEFT_BUILD_SANITIZE);
    int const workers = confine_to_cpus(static_cast<int>(o.integer("workers")));
    if (workers < o.integer("workers"))
        ctx.warn("only %d CPU%s available: --workers %lld asks for more", workers, workers == 1 ? "" : "s",
                 o.integer("workers"));
    std::string const self = self_exe();
    if (self.empty()) die("shim: cannot find this executable through /proc/self/exe (needed for the native runs)");
    for (char const* path : {WEFT_SHIM_LIBRARY, WEFT_SHIM_DCMM, WEFT_SHIM_COARSE})
        if (access(path, R_OK) != 0)
            die("shim: %s is missing (%s): build the weft-bench target, which builds it", path, std::strerror(errno));

    std::vector<version> vs;
    vs.push_back({"dcmm", "glibc", "kernel"});
    // The same binary with plain calls for pthread_create, on one CPU and no
    // shim: the time the ceiling below divides among the CPUs.
    vs.push_back({"dcmm", "serial", "none"});
    for (auto const& s : o.list("sched")) vs.push_back({"dcmm", "shim", s});
    for (auto const& s : o.list("sched")) vs.push_back({"dcmm", "native", s});
    vs.push_back({"coarse", "glibc", "kernel"});
    vs.push_back({"coarse", "shim", "ws"});

    std::string const ns = std::to_string(n), ls = std::to_string(leaf), ws = std::to_string(workers);
    std::vector<std::string> const no_shim = {"LD_PRELOAD", "WEFT_STATS", "WEFT_TRACE"};
    auto run_version = [&](version const& v) {
        std::vector<std::string> env = no_shim;
        env.push_back("WEFT_WORKERS=" + ws);
        env.push_back("WEFT_SCHED=" + v.sched);
        if (v.kind == "shim") env.push_back(std::string("LD_PRELOAD=") + WEFT_SHIM_LIBRARY);
        if (v.kind == "native")
            return run_child(
                self, {self, "shim", "--native-child", "--n", ns, "--leaf", ls, "--workers", ws, "--sched", v.sched},
                env, v.label());
        bool const shim = v.kind == "shim";
        if (v.kind == "serial") return run_child(WEFT_SHIM_DCMM, {WEFT_SHIM_DCMM, ns, ls, "serial"}, env, v.label());
        if (v.program == "dcmm") return run_child(WEFT_SHIM_DCMM, {WEFT_SHIM_DCMM, ns, ls}, env, v.label(), shim);
        return run_child(WEFT_SHIM_COARSE, {WEFT_SHIM_COARSE, ns, ls, ws}, env, v.label(), shim);
    };
    // The serial program's heap under the shim, for the shim rows (see the top).
    std::vector<std::string> serial_env = no_shim;
    serial_env.insert(serial_env.end(), {"WEFT_WORKERS=1", std::string("LD_PRELOAD=") + WEFT_SHIM_LIBRARY});
    long long const shim_serial_heap =
        run_child(WEFT_SHIM_DCMM, {WEFT_SHIM_DCMM, ns, ls, "serial"}, serial_env, "dcmm serial under the shim", true)
            .weft_heap_peak;

    ctx.say("C = A * B, n = %zu, leaf %zu, %d worker%s (CPUs), %d interleaved round(s)%s\n", n, leaf, workers,
            workers == 1 ? "" : "s", rounds, build_warning().empty() ? "" : (" [" + build_warning() + "]").c_str());
    std::map<std::string, double> reference;  // program -> the glibc run's checksum
    for (int r = 0; r < rounds; ++r) {
        ctx.progress("round %d of %d: %zu versions in turn", r + 1, rounds, vs.size());
        for (version& v : vs) {
            run_result const res = run_version(v);
            auto const [it, first] = reference.emplace(v.program, res.checksum);
            double const want = it->second;
            bool const same_binary = v.kind != "native";
            bool const ok = same_binary ? res.checksum == want
                                        : std::fabs(res.checksum - want) <= 1e-9 * std::max(1.0, std::fabs(want));
            if (!first && !ok)
                die("shim: %s computed checksum %.17g, %s on glibc's threads %.17g", v.label().c_str(), res.checksum,
                    v.program.c_str(), want);
            v.runs.push_back(res);
        }
    }

    long long const serial_heap = serial_heap_bytes(n, leaf);
    auto find = [&](std::string const& program, std::string const& kind, std::string const& sched) -> version const* {
        for (auto const& v : vs)
            if (v.program == program && v.kind == kind && (sched.empty() || v.sched == sched)) return &v;
        return nullptr;
    };
    auto times = [](version const& v) {
        std::vector<double> t;
        for (auto const& r : v.runs) t.push_back(r.time_s);
        return t;
    };

    table t({"program", "version", "sched", "time s", "spread", "x glibc", "peak RSS MiB", "peak heap MiB",
             "x serial heap", "most threads live"});
    auto mib = [](double bytes) { return fmt(bytes / (1024.0 * 1024.0), 1); };
    for (auto const& v : vs) {
        summary const st = summarize(times(v));
        bool const shim = v.kind == "shim";
        long long rss = 0, heap = 0, live = 0;
        for (auto const& r : v.runs) {
            rss = std::max(rss, r.peak_rss_bytes);
            heap = std::max(heap, shim ? r.weft_heap_peak : r.peak_heap_bytes);
            live = std::max(live, shim ? r.weft_max_live : r.max_live_threads);
        }
        long long const serial = v.program != "dcmm" ? 0 : shim ? shim_serial_heap : serial_heap;
        json_object rec = ctx.record();
        rec.add("program", v.program).add("version", v.kind).add("sched", v.sched).add("n", n);
        rec.add("time_s", st.median).add("peak_rss_bytes", rss).add("peak_heap_bytes", heap);
        rec.add("serial_heap_bytes", serial).add("max_live_threads", live);
        ctx.emit(rec);
        version const* g = find(v.program, "glibc", "");
        double const vs_glibc = median_of_ratios(times(*g), times(v));
        t.add_row({v.program, v.kind, v.sched, fmt(st.median, 3), fmt_pct(st.spread), fmt_ratio(vs_glibc), mib(rss),
                   mib(heap), v.program == "dcmm" ? fmt_ratio(static_cast<double>(heap) / serial) : "-",
                   std::to_string(live)});
    }
    ctx.print(t, "shim: one unmodified Pthreads program on glibc's threads, under libweft-pthread, and weft-native");

    // The targets (issue: Narlikar & Blelloch's claim on an unmodified program).
    table tt({"target", "value", "bound", "met"});
    auto target = [&](char const* name, double value, double bound, bool at_least) {
        bool const met = at_least ? value >= bound : value <= bound;
        json_object rec = ctx.record();
        rec.add("target", name).add("value", value).add("bound", bound).add("met", met);
        ctx.emit(rec);
        tt.add_row({name, fmt(value, 3), (at_least ? ">= " : "<= ") + fmt(bound, 2), met ? "yes" : "no"});
    };
    version const* glibc = find("dcmm", "glibc", "");
    version const* shim_ws = find("dcmm", "shim", "ws");
    version const* native_ws = find("dcmm", "native", "ws");
    version const* shim_dfs = find("dcmm", "shim", "dfs");
    if (shim_ws != nullptr) {
        target("dcmm_glibc_time_over_shim_ws", median_of_ratios(times(*glibc), times(*shim_ws)), 10, true);
        // The most any threads package can reach at this grain on this
        // machine: glibc's time over the serial program's divided among the
        // CPUs (a perfect speedup, nothing spent on threads), the median over
        // rounds of that within a round. Below the bound, the target is out
        // of reach here whatever the shim costs.
        std::vector<double> serial_per_cpu = times(*find("dcmm", "serial", ""));
        for (double& x : serial_per_cpu) x /= workers;
        double const ceiling = median_of_ratios(times(*glibc), serial_per_cpu);
        json_object rec = ctx.record();
        rec.add("ceiling", "dcmm_glibc_time_over_shim_ws").add("value", ceiling).add("bound", 10);
        rec.add("reachable", ceiling >= 10).add("cpus", workers);
        ctx.emit(rec);
        tt.add_row({"  its ceiling here: glibc / (serial / " + std::to_string(workers) + " CPUs)", fmt(ceiling, 3),
                    ">= " + fmt(10, 2), ceiling >= 10 ? "reachable" : "out of reach"});
        target("dcmm_shim_ws_time_over_native_ws", median_of_ratios(times(*shim_ws), times(*native_ws)), 1.1, false);
    }
    if (shim_dfs != nullptr) {
        long long heap = 0;
        for (auto const& r : shim_dfs->runs) heap = std::max(heap, r.weft_heap_peak);
        target("dcmm_shim_dfs_heap_over_serial", static_cast<double>(heap) / shim_serial_heap, 1.2, false);
    }
    target("coarse_shim_time_over_glibc",
           median_of_ratios(times(*find("coarse", "shim", "ws")), times(*find("coarse", "glibc", ""))), 1.03, false);
    ctx.print(tt, "shim: targets (ratios are medians over rounds of the ratio within a round)");
    return 0;
}

registrar const reg{experiment{
    .name = "shim",
    .description = "one unmodified Pthreads program (thread per recursive call) on glibc, under the shim, and native",
    .details =
        "bench/plain_pthreads/dcmm.c, Narlikar & Blelloch's divide-and-conquer matrix multiply with a pthread_create\n"
        "per recursive call, compiled once as a plain Pthreads program, runs on glibc's threads, under\n"
        "libweft-pthread (LD_PRELOAD) with each --sched, and beside the weft-native version of the same\n"
        "algorithm; bench/plain_pthreads/coarse.c (a thread per worker, fixed row blocks) runs on glibc's threads\n"
        "and under the shim; dcmm.c also serially (plain calls, no shim) for the glibc / shim ws target's\n"
        "ceiling here, glibc's time / (serial time / CPUs). Every run is a process of its own: time (the multiply, "
        "timed by the program),\n"
        "peak RSS (wait4), peak heap and most threads live (weft's statistics under the shim: the shim's\n"
        "malloc count of the whole heap, against the program's serial run under the shim; the program's\n"
        "count of its temporaries on glibc, weft_malloc's for native, against the serial recursion's).\n"
        "Rounds are interleaved; target ratios are medians of ratios within a round. See docs/bench.md\n"
        "and docs/shim.md.",
    .options = {{.name = "n",
                 .kind = opt_kind::integer,
                 .metavar = "N",
                 .default_value = "1024",
                 .help = "matrix order",
                 .min = 2,
                 .max = 16384},
                {.name = "leaf",
                 .kind = opt_kind::integer,
                 .metavar = "N",
                 .default_value = "64",
                 .help = "serial kernel below this order, and the coarse program's tile (n / leaf a power of two)",
                 .min = 1,
                 .max = 16384},
                {.name = "workers",
                 .kind = opt_kind::integer,
                 .metavar = "N",
                 .default_value = "2",
                 .help = "CPUs the runs are confined to: weft's workers, the coarse program's threads",
                 .min = 1,
                 .max = 1024},
                opt_sched_list("fifo,dfs,ws", "weft schedulers for the shim and native runs"),
                {.name = "native-child",
                 .kind = opt_kind::flag,
                 .help = "internal: run the native version once with the first --sched and print its line"},
                opt_rounds(3)},
    .run = run,
    .in_demo = true,
    .demo_args = {"--n", "256", "--leaf", "32", "--rounds", "2"},
    .demo_order = 25,
}};

}  // namespace
}  // namespace weft::bench::shim
