// weft-bench oversub: Arora, Blumofe & Plaxton's "performance without yield"
// ("Thread scheduling for multiprogrammed multiprocessors", the plot of
// speedup against processes on a machine with fewer processors).
//
// One program, Narlikar & Blelloch's divide-and-conquer matrix multiply
// (apps/matmul, as `weft-bench matmul` runs it), on P = 1, 2, 4, 8, 16 workers
// confined to --cpus CPUs (2 by default): P above the CPUs is oversubscription,
// the multiprogrammed case the paper is about. Versions:
//   weft, yield on    ws, an idle worker sched_yield()s between failed rounds
//                     of steals (the paper's yield; the runtime's default);
//   weft, yield off   ws with WEFT_WS_YIELD=off: those rounds pause-spin, as
//                     the other policies' idle loops do;
//   omp_active, omp_passive   the same algorithm on OpenMP tasks (libgomp) with
//                     OMP_WAIT_POLICY=active / passive, which libgomp reads
//                     once at start-up: each round of them runs in a child
//                     process (this executable again, --omp-child) with the
//                     variable set;
//   tbb               the same algorithm on oneTBB, a task_arena of P slots
//                     under a global_control of P threads.
// Each round runs every version once, in an order rotated by one each round,
// and each version there runs the serial program once and then every P, so
// that the runs a ratio compares are close in time (this machine's speed
// drifts within seconds: docs/bench.md, "matmul"). Each run is a fresh
// runtime (or process) with a warm-up multiply before the timed one, and every
// result is checked against the serial one. Reported per (version, P): the
// median wall time and its spread, the speedup over the version's serial runs
// of the same rounds, and the speed relative to 2 workers; then the target: ws
// with the yield keeps >= 0.85 of its 2-worker speed at the largest P.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <weft/weft.h>

#include "harness.hpp"
#include "knary_program.hpp"
#include "matmul_peers.hpp"

namespace weft::bench::oversub {
namespace {

using apps::matmul::view;
using matmul::matrix;
using matmul::problem;

// The target: ws with the yield on, at the largest P, keeps this much
// of its speed on 2 workers.
constexpr double target_speed_ratio = 0.85;
constexpr int base_workers = 2;

enum class kind { weft_yield, weft_no_yield, omp_active, omp_passive, tbb };

struct version {
    kind k;
    char const* name;   // the JSON "version"
    char const* label;  // the table's and the plot's
    int yield;          // 1 / 0: weft with the yield on / off; -1: not weft
    bool built;
};

std::vector<version> versions() {
    return {
        {kind::weft_yield, "weft", "weft (ws), yield on", 1, true},
        {kind::weft_no_yield, "weft", "weft (ws), yield off", 0, true},
        {kind::omp_active, "omp_active", "OpenMP, OMP_WAIT_POLICY=active", -1, WEFT_HAVE_OPENMP != 0},
        {kind::omp_passive, "omp_passive", "OpenMP, OMP_WAIT_POLICY=passive", -1, WEFT_HAVE_OPENMP != 0},
        {kind::tbb, "tbb", "oneTBB", -1, WEFT_HAVE_TBB != 0},
    };
}

// --- the weft versions ------------------------------------------------------------

struct weft_run {
    double wall_s;
    weft_stats_t stats;
};

// A fresh ws runtime on `workers` workers with the yield on or off
// (WEFT_WS_YIELD: the runtime reads it in weft_init), a warm-up multiply, the
// timed one, both checked.
weft_run run_weft(problem const& p, view c, view ref, int workers, bool yield) {
    // run() added the variable before any other thread existed; replacing its
    // value frees nothing (glibc keeps the old string), so oneTBB's threads,
    // the only others, stay safe even if they read the environment.
    if (setenv("WEFT_WS_YIELD", yield ? "on" : "off", 1) != 0) die("setenv: %s", std::strerror(errno));
    weft_config_t cfg{};
    cfg.workers = workers;
    cfg.sched = "ws";
    cfg.stats = WEFT_CONFIG_OFF;
    if (int rc = weft_init(&cfg); rc != 0) die("weft_init(ws, %d workers) failed: %s", workers, std::strerror(rc));
    char const* what = yield ? "weft, yield on" : "weft, yield off";
    matmul::weft_exec ex;
    matmul::poison(c, p.n);
    apps::matmul::multiply(ex, p.a, p.b, c, p.n, p.leaf);  // warm-up: stacks, pages
    matmul::verify(c, ref, p.n, what, workers);
    matmul::poison(c, p.n);
    check(weft_stats_reset(), "weft_stats_reset");
    std::uint64_t const t0 = now_ns();
    apps::matmul::multiply(ex, p.a, p.b, c, p.n, p.leaf);
    double const wall = static_cast<double>(now_ns() - t0) / 1e9;
    weft_run out{wall, {}};
    check(weft_stats_get(&out.stats), "weft_stats_get");
    check(weft_finalize(), "weft_finalize");
    matmul::verify(c, ref, p.n, what, workers);
    return out;
}

// --- the peers ----------------------------------------------------------------------

#if WEFT_HAVE_TBB
double run_tbb(problem const& p, view c, view ref, int workers) {
    matmul::poison(c, p.n);
    (void)matmul::run_tbb(p, c, workers);  // warm-up: the threads
    matmul::verify(c, ref, p.n, "oneTBB", workers);
    matmul::poison(c, p.n);
    double const wall = matmul::run_tbb(p, c, workers).time_s;
    matmul::verify(c, ref, p.n, "oneTBB", workers);
    return wall;
}
#endif

// One OpenMP round in a child process: this executable with --omp-child and
// OMP_WAIT_POLICY=policy, which prints "wall_s SECONDS" on its stdout.
double run_omp_child(std::string const& exe, char const* policy, int workers, std::size_t n, std::size_t leaf) {
    std::vector<std::string> args = {exe,        "oversub", "--omp-child",         "--workers", std::to_string(workers),
                                     "--n",      std::to_string(n), "--leaf", std::to_string(leaf)};
    std::string const setting = std::string("OMP_WAIT_POLICY=") + policy;
    int status = 0;
    std::string const out = run_piped(exe, args, {setting}, &status);
    double wall = -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || std::sscanf(out.c_str(), "wall_s %lf", &wall) != 1 ||
        wall <= 0)
        die("the OpenMP child (OMP_WAIT_POLICY=%s, %d threads) failed: exit status %d, output '%s'", policy, workers,
            WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out.c_str());
    return wall;
}

// --omp-child: one OpenMP round in this process (the parent set
// OMP_WAIT_POLICY): the serial reference, a warm-up, the timed run, checked.
int run_omp_child_body(context& ctx, std::size_t n, std::size_t leaf, int workers) {
#if WEFT_HAVE_OPENMP
    (void)ctx;
    matmul::inputs const in(n, leaf);
    problem const& p = in.p;
    matrix const& ref = in.ref;
    matrix c(n);
    matmul::poison(c.v, n);
    (void)matmul::run_openmp(p, c.v, workers);  // warm-up: the threads
    matmul::verify(c.v, ref.v, n, "OpenMP", workers);
    matmul::poison(c.v, n);
    double const wall = matmul::run_openmp(p, c.v, workers).time_s;
    matmul::verify(c.v, ref.v, n, "OpenMP", workers);
    std::printf("wall_s %.9g\n", wall);
    return 0;
#else
    (void)n, (void)leaf, (void)workers;
    ctx.warn("OpenMP is not built into this weft-bench");
    return 1;
#endif
}

// --- the experiment -------------------------------------------------------------------

struct cell {
    std::vector<double> wall;
    std::vector<double> parks, steals, failed_steals;  // weft only
};

int run(context& ctx) {
    auto const& o = ctx.opts();
    std::string const command = "weft-bench oversub";
    std::size_t const n = static_cast<std::size_t>(o.integer("n"));
    std::size_t const leaf = static_cast<std::size_t>(o.integer("leaf"));
    if (n % leaf != 0 || ((n / leaf) & (n / leaf - 1)) != 0)
        throw usage_error(command + ": --n " + std::to_string(n) + " --leaf " + std::to_string(leaf) +
                          ": n / leaf must be a power of two (e.g. --n 512 --leaf 64)");
    std::vector<int> const workers = knary::parse_workers(command, o.list("workers"));
    if (o.flag("omp-child")) return run_omp_child_body(ctx, n, leaf, workers.front());

    int const rounds = static_cast<int>(o.integer("rounds"));
    int const cpus = confine_to_cpus(static_cast<int>(o.integer("cpus")));
    if (cpus < o.integer("cpus"))
        ctx.warn("only %d CPU%s available: --cpus %lld asks for more", cpus, cpus == 1 ? "" : "s", o.integer("cpus"));
    std::string const exe = self_exe();
    if (exe.empty()) die("cannot find this executable through /proc/self/exe (needed for the OpenMP children)");

    std::vector<version> vs;
    for (version const& v : versions()) {
        if (o.flag("no-peers") && v.yield < 0) continue;
        if (!v.built) {
            ctx.warn("%s is not built into this weft-bench: no %s rows (make deps installs it)", v.label, v.name);
            continue;
        }
        vs.push_back(v);
    }

    matmul::inputs in(n, leaf);  // also the serial warm-up
    matrix& a = in.a;
    matrix& b = in.b;
    matrix& ref = in.ref;
    problem const& prob = in.p;
    matrix c(n);
    auto serial_round = [&] {
        apps::matmul::serial_exec ex;
        std::uint64_t const t0 = now_ns();
        apps::matmul::multiply(ex, a.v, b.v, ref.v, n, leaf);
        return static_cast<double>(now_ns() - t0) / 1e9;
    };

    ctx.say("matmul n = %zu, leaf %zu, on %d CPU%s; P = workers (threads); %d interleaved round(s)%s\n", n, leaf, cpus,
            cpus == 1 ? "" : "s", rounds, build_warning().empty() ? "" : (" [" + build_warning() + "]").c_str());

    // Added now, while this is the only thread: run_weft only replaces its value.
    if (setenv("WEFT_WS_YIELD", "on", 1) != 0) die("setenv: %s", std::strerror(errno));
    std::vector<double> serial;                                 // every serial run
    std::vector<std::vector<double>> paired_serial(vs.size());  // per version, one per round
    std::map<std::pair<std::size_t, int>, cell> cells;          // (version index, P)
    for (int r = 0; r < rounds; ++r) {
        ctx.progress("round %d/%d", r + 1, rounds);
        for (std::size_t k = 0; k < vs.size(); ++k) {
            std::size_t const vi = (k + static_cast<std::size_t>(r)) % vs.size();
            paired_serial[vi].push_back(serial_round());
            serial.push_back(paired_serial[vi].back());
            for (int w : workers) {
                cell& cl = cells[{vi, w}];
                switch (vs[vi].k) {
                case kind::weft_yield:
                case kind::weft_no_yield: {
                    weft_run const res = run_weft(prob, c.v, ref.v, w, vs[vi].yield == 1);
                    cl.wall.push_back(res.wall_s);
                    cl.parks.push_back(static_cast<double>(res.stats.parks));
                    cl.steals.push_back(static_cast<double>(res.stats.steals));
                    cl.failed_steals.push_back(static_cast<double>(res.stats.failed_steals));
                    break;
                }
                case kind::omp_active:
                    cl.wall.push_back(run_omp_child(exe, "active", w, n, leaf));
                    break;
                case kind::omp_passive:
                    cl.wall.push_back(run_omp_child(exe, "passive", w, n, leaf));
                    break;
                case kind::tbb:
#if WEFT_HAVE_TBB
                    cl.wall.push_back(run_tbb(prob, c.v, ref.v, w));
#endif
                    break;
                }
            }
        }
    }

    bool const has_base = std::find(workers.begin(), workers.end(), base_workers) != workers.end();
    summary const serial_sum = summarize(serial);
    table t({"version", "P", "wall s", "spread", "speedup", "speed vs P=2", "parks", "failed steals"});
    t.add_row({"serial", "1", fmt(serial_sum.median, 4), fmt_pct(serial_sum.spread), "1.00x", "-", "-", "-"});
    {
        json_object rec = ctx.record();
        rec.add("version", "serial").add_null("yield").add("label", "serial").add("workers", 1).add("run_cpus", cpus);
        rec.add("n", n).add("leaf", leaf).add_summary("wall_s", serial_sum).add("speedup_vs_serial", 1.0);
        rec.add("rounds", rounds);
        add_provenance(rec);
        ctx.emit(rec);
    }
    for (std::size_t vi = 0; vi < vs.size(); ++vi) {
        version const& v = vs[vi];
        t.add_separator();
        for (int w : workers) {
            cell const& cl = cells[{vi, w}];
            summary const st = summarize(cl.wall);
            double const speedup = median_of_ratios(paired_serial[vi], cl.wall);
            json_object rec = ctx.record();
            rec.add("version", v.name);
            if (v.yield < 0) rec.add_null("yield");
            else rec.add("yield", v.yield == 1);
            rec.add("label", v.label).add("workers", w).add("run_cpus", cpus).add("oversubscribed", w > cpus);
            rec.add("n", n).add("leaf", leaf).add_summary("wall_s", st);
            rec.add_summary("serial_s", summarize(paired_serial[vi]));
            rec.add("speedup_vs_serial", speedup);
            std::string vs_base = "-";
            if (has_base) {
                double const ratio = median_of_ratios(cells[{vi, base_workers}].wall, cl.wall);
                rec.add("speed_vs_2_workers", ratio);
                vs_base = fmt(ratio, 2);
            }
            std::string parks = "-", failed = "-";
            if (v.yield >= 0) {
                rec.add("parks", median(cl.parks)).add("steals", median(cl.steals));
                rec.add("failed_steals", median(cl.failed_steals));
                parks = fmt_sig(median(cl.parks));
                failed = fmt_sig(median(cl.failed_steals));
            }
            rec.add("rounds", rounds);
            add_provenance(rec);
            ctx.emit(rec);
            t.add_row({v.label, std::to_string(w) + (w > cpus ? "*" : ""), fmt(st.median, 4), fmt_pct(st.spread),
                       fmt_ratio(speedup), vs_base, parks, failed});
        }
    }
    ctx.print(t, "oversub: matmul on P workers, * = more than the CPUs (Arora, Blumofe & Plaxton, "
                 "\"Performance without yield\"); speeds are medians of per-round ratios");

    // The target: ws with the yield at the largest P against 2 workers.
    int const top = workers.back();
    if (has_base && top > base_workers) {
        auto ratio_of = [&](int yield) {
            for (std::size_t vi = 0; vi < vs.size(); ++vi)
                if (vs[vi].yield == yield)
                    return median_of_ratios(cells[{vi, base_workers}].wall, cells[{vi, top}].wall);
            return 0.0;
        };
        double const on = ratio_of(1), off = ratio_of(0);
        bool const met = on >= target_speed_ratio;
        json_object rec = ctx.record();
        rec.add("target", true).add("workers", top).add("base_workers", base_workers).add("run_cpus", cpus);
        rec.add("speed_ratio_yield_on", on).add("speed_ratio_yield_off", off);
        rec.add("target_speed_ratio", target_speed_ratio).add("met", met).add("rounds", rounds);
        add_provenance(rec);
        ctx.emit(rec);
        ctx.say("target: ws with the yield on %d workers keeps %.2f of its speed on %d (>= %.2f) [%s]; "
                "with the yield off, %.2f\n",
                top, on, base_workers, target_speed_ratio, met ? "MET" : "MISSED", off);
    }
    return 0;
}

registrar const reg{experiment{
    .name = "oversub",
    .description = "Arora, Blumofe & Plaxton's \"performance without yield\": matmul on 1-16 workers on 2 CPUs, "
                   "ws with and without its yield, OpenMP, oneTBB",
    .details = "Narlikar & Blelloch's matrix multiply (as weft-bench matmul) on each of --workers P workers, the\n"
               "process confined to --cpus CPUs (P above that is oversubscription). Versions: weft (ws) with the\n"
               "idle workers' sched_yield between failed steal rounds (the default) and without it\n"
               "(WEFT_WS_YIELD=off); OpenMP tasks with OMP_WAIT_POLICY=active and passive (each run in a child\n"
               "process started with the variable set); oneTBB with P threads. Each of --rounds rounds runs every\n"
               "version in a rotated order, each as the serial program and then every P; each run starts a fresh\n"
               "runtime, warms up, and is checked against the serial result. Reported: median wall time and\n"
               "spread, speedup (median of the per-round ratios to the version's serial run), speed relative to\n"
               "P = 2 (median of per-round ratios), and the\n"
               "target: ws with the yield keeps >= 0.85 of its 2-worker speed at the largest P. See docs/bench.md.",
    .options = {{.name = "n", .kind = opt_kind::integer, .metavar = "N", .default_value = "1024",
                 .help = "matrix order", .min = 2, .max = 16384},
                {.name = "leaf", .kind = opt_kind::integer, .metavar = "N", .default_value = "64",
                 .help = "serial kernel below this order (n / leaf must be a power of two)", .min = 1, .max = 16384},
                knary::opt_worker_list("1,2,4,8,16"),
                {.name = "cpus", .kind = opt_kind::integer, .metavar = "N", .default_value = "2",
                 .help = "confine the run to the first N CPUs this process may use", .min = 1, .max = 1024},
                {.name = "no-peers", .kind = opt_kind::flag, .help = "run the weft versions only"},
                {.name = "omp-child", .kind = opt_kind::flag,
                 .help = "internal: one OpenMP run on the first --workers count, printing 'wall_s SECONDS' (oversub "
                         "starts itself this way with OMP_WAIT_POLICY set)"},
                opt_rounds(7)},
    .run = run,
    .in_demo = true,
    .demo_args = {"--n", "512", "--leaf", "64", "--rounds", "3"},
    .demo_order = 45,
}};

}  // namespace
}  // namespace weft::bench::oversub
