// weft-bench matmul: Narlikar & Blelloch's divide-and-conquer matrix multiply (Figure 4)
// under every scheduler, beside the serial program and the same algorithm on
// OpenMP tasks and oneTBB (Figures 5, 7 and 8 of the paper).
//
// C = A * B for n x n doubles by 8 recursive forks into quadrants, a temporary
// T per level from weft_malloc, then a parallel divide-and-conquer C += T; the
// serial kernel below the leaf size (apps/matmul/matmul.hpp). For each version
// and worker count: time (median over rounds, spread), speedup over serial,
// peak heap (weft's allocator; the peers count their mallocs), most threads
// live, stack bytes mapped at the peak, work T1 and span T-inf (measured by the
// runtime along fork/join edges). Every run's result, written over a C filled
// with NaN, is checked against the serial one. The "small stack"/"large stack" variants run fifo with 16 KiB and 1 MiB
// default stacks (the paper's "Orig + small stk" against Solaris' 1 MB default).
//
// Every configuration of a worker count (the ceiling, weft's variants, the
// peers) runs once per round, in turn, each right after a serial run: a
// speedup is the median over rounds of that paired ratio, and one above the
// ceiling measured in the same rounds is flagged (above_ceiling), not a
// result.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <weft/weft.h>
#include <weft/weft.hpp>

#include "harness.hpp"
#include "matmul_peers.hpp"
#include "serial_copies.hpp"
#include "settle.hpp"

namespace weft::bench::matmul {

using apps::matmul::view;

inputs::inputs(std::size_t n, std::size_t leaf) : a(n), b(n), ref(n), p{n, leaf, a.v, b.v} {
    apps::matmul::fill(a.v, n, 1);
    apps::matmul::fill(b.v, n, 2);
    apps::matmul::serial_exec serial;
    apps::matmul::multiply(serial, a.v, b.v, ref.v, n, leaf);
}

void poison(view c, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) c.at(i, j) = std::numeric_limits<double>::quiet_NaN();
}

void verify(view c, view ref, std::size_t n, char const* what, int workers) {
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
            if (!(std::fabs(c.at(i, j) - ref.at(i, j)) <= 1e-9))
                die("matmul: %s on %d worker%s: C(%zu, %zu) = %g, serial gives %g", what, workers,
                    workers == 1 ? "" : "s", i, j, c.at(i, j), ref.at(i, j));
}

namespace {

bool power_of_two(std::size_t x) { return x != 0 && (x & (x - 1)) == 0; }

struct variant {
    std::string sched;
    std::size_t stack_size;  // 0: the runtime default
    std::string label;
};

int run(context& ctx) {
    auto const& o = ctx.opts();
    std::size_t const n = static_cast<std::size_t>(o.integer("n"));
    std::size_t const leaf = static_cast<std::size_t>(o.integer("leaf"));
    int const rounds = static_cast<int>(o.integer("rounds"));
    if (!power_of_two(n / leaf) || n % leaf != 0)
        throw usage_error("--n " + std::to_string(n) + " --leaf " + std::to_string(leaf) +
                          ": n / leaf must be a power of two (e.g. --n 1024 --leaf 64)");
    std::vector<int> workers;
    for (auto const& w : o.list("workers")) {
        char* end = nullptr;
        long v = std::strtol(w.c_str(), &end, 10);
        if (*end != '\0' || v < 1 || v > 1024)
            throw usage_error("--workers: '" + w + "' is not a worker count (a list like 1,2)");
        workers.push_back(static_cast<int>(v));
    }
    std::vector<variant> variants;
    for (auto const& s : o.list("sched")) variants.push_back({s, static_cast<std::size_t>(o.integer("stack-size")), s});
    if (!o.flag("no-stack-variants")) {
        variants.push_back({"fifo", 16 * 1024, "fifo+small-stack"});
        variants.push_back({"fifo", 1024 * 1024, "fifo+large-stack"});
    }

    inputs in(n, leaf);  // also the serial warm-up: pages of A, B and the result touched once
    matrix& a = in.a;
    matrix& b = in.b;
    matrix& ref = in.ref;
    problem const& prob = in.p;
    matrix c(n);

    ctx.say("C = A * B, n = %zu, leaf %zu, %d round(s) per configuration%s\n", n, leaf, rounds,
            build_warning().empty() ? "" : (" [" + build_warning() + "]").c_str());

    // Serial: plain calls, same kernel, same temporaries.
    std::vector<double> serial_times;
    std::size_t serial_heap = 0;
    // One serial run (seconds). Every configuration below runs one before
    // each of its timed rounds, and its speedup is over those: the machine's
    // speed drifts by 10-50% within a minute here, which would otherwise fall
    // on the comparison of configurations run a minute apart.
    auto serial_round = [&] {
        apps::matmul::serial_exec ex;
        std::uint64_t t0 = now_ns();
        apps::matmul::multiply(ex, a.v, b.v, ref.v, n, leaf);
        serial_heap = ex.heap_peak;
        return static_cast<double>(now_ns() - t0) / 1e9;
    };
    for (int r = 0; r < rounds; ++r) serial_times.push_back(serial_round());
    summary const serial = summarize(serial_times);

    table t({"version", "workers", "time s", "spread", "speedup", "peak heap MiB", "x serial heap", "max live",
             "stack MiB", "T1 s", "Tinf s", "T1/Tinf"});
    auto mib = [](double bytes) { return fmt(bytes / (1024.0 * 1024.0), 1); };

    auto emit_serial = [&] {
        json_object rec = ctx.record();
        rec.add("version", "serial").add("sched", "serial").add("workers", 1).add("n", n).add("leaf", leaf);
        rec.add_summary("time_s", serial);
        rec.add("speedup_vs_serial", 1.0).add("peak_heap_bytes", serial_heap).add("serial_heap_bytes", serial_heap);
        add_provenance(rec);
        ctx.emit(rec);
        t.add_row({"serial", "1", fmt(serial.median, 3), fmt_pct(serial.spread), "1.00x", mib(serial_heap), "1.00x", "-",
                   "-", "-", "-", "-"});
    };
    emit_serial();

    // Every configuration of a worker count (the ceiling, weft's variants,
    // the peers) runs once per round, in turn, each right after a serial run
    // that its speedup is over: a configuration's rounds are spread over the
    // whole block, so that a fast or slow minute of this machine falls on
    // all of them alike instead of on the one that ran then.
    struct peer {
        char const* name;
        bool built;
        peer_result (*fn)(problem const&, view, int);
    };
    static peer const peers[] = {
#if WEFT_HAVE_OPENMP
        {"openmp", true, &run_openmp},
#else
        {"openmp", false, nullptr},
#endif
#if WEFT_HAVE_TBB
        {"tbb", true, &run_tbb},
#else
        {"tbb", false, nullptr},
#endif
    };
    struct config {
        std::string label;
        variant const* weft = nullptr;  // a weft variant,
        peer const* peer_of = nullptr;  // a peer,
        bool copies = false;            // or the ceiling
        std::vector<double> times{}, paired_serial{};
        weft_stats_t worst{};
        std::size_t peak = 0;
    };
    if (!o.flag("no-peers"))
        for (auto const& p : peers)
            if (!p.built) ctx.warn("%s is not installed: no %s row (make deps installs it)", p.name, p.name);

    // One weft run of variant v on w workers (a runtime of its own, started
    // and ended around it, with an untimed run first: stacks and pages).
    auto weft_round = [&](config& cf, int w) {
        variant const& v = *cf.weft;
        weft_config_t cfg{};
        cfg.workers = w;
        cfg.sched = v.sched.c_str();
        cfg.stack_size = v.stack_size;
        cfg.measure = 1;
        if (int rc = weft_init(&cfg); rc != 0)
            die("weft_init(sched=%s, workers=%d) failed: %s", v.sched.c_str(), w, std::strerror(rc));
        weft_exec ex;
        poison(c.v, n);
        apps::matmul::multiply(ex, a.v, b.v, c.v, n, leaf);  // warm-up: stacks, pages
        verify(c.v, ref.v, n, v.label.c_str(), w);
        cf.paired_serial.push_back(serial_round());
        poison(c.v, n);
        check(weft_stats_reset(), "weft_stats_reset");
        std::uint64_t t0 = now_ns();
        apps::matmul::multiply(ex, a.v, b.v, c.v, n, leaf);
        cf.times.push_back(static_cast<double>(now_ns() - t0) / 1e9);
        verify(c.v, ref.v, n, v.label.c_str(), w);
        weft_stats_t s;
        check(weft_stats_get(&s), "weft_stats_get");
        check(weft_finalize(), "weft_finalize");
        // Memory figures: the worst round; work and span: the last.
        weft_stats_t& worst = cf.worst;
        worst.heap_bytes_peak = std::max(worst.heap_bytes_peak, s.heap_bytes_peak);
        worst.max_live_threads = std::max(worst.max_live_threads, s.max_live_threads);
        worst.stack_bytes_peak = std::max(worst.stack_bytes_peak, s.stack_bytes_peak);
        worst.work_ns = s.work_ns;
        worst.span_ns = s.span_ns;
        worst.steals = s.steals;
        worst.quota_preemptions = s.quota_preemptions;
        worst.dummy_threads = s.dummy_threads;
        worst.threads_created = s.threads_created;
    };
    auto peer_round = [&](config& cf, int w) {
        peer const& p = *cf.peer_of;
        cf.paired_serial.push_back(serial_round());
        poison(c.v, n);
        peer_result res = p.fn(prob, c.v, w);
        cf.times.push_back(res.time_s);
        cf.peak = std::max(cf.peak, res.peak_heap_bytes);
        verify(c.v, ref.v, n, p.name, w);
        settle();  // its idle threads stop spinning before the next configuration runs
    };

    // A speedup above the machine's ceiling at the same worker count, measured
    // in the same rounds, is a fast minute or a measurement gone wrong, not a
    // result: its row says so (above_ceiling) and the table marks it.
    std::size_t flagged = 0;
    auto ceiling_fields = [&](json_object& rec, double speedup, double ceiling) {
        if (ceiling <= 0) return;
        rec.add("ceiling", ceiling).add("above_ceiling", speedup > ceiling);
        if (speedup > ceiling) ++flagged;
    };
    auto speedup_text = [](double speedup, double ceiling) {
        return fmt_ratio(speedup) + (ceiling > 0 && speedup > ceiling ? " (above ceiling: not a result)" : "");
    };

    for (int w : workers) {
        t.add_separator();
        std::vector<config> configs;
        if (w > 1) configs.push_back(config{.label = "serial x" + std::to_string(w) + " (ceiling)", .copies = true});
        for (auto const& v : variants) configs.push_back(config{.label = v.label, .weft = &v});
        if (!o.flag("no-peers"))
            for (auto const& p : peers)
                if (p.built) configs.push_back(config{.label = p.name, .peer_of = &p});

        // The ceiling's copies (serial_copies.hpp): their threads live through every round.
        std::vector<matrix> outs;
        for (int i = 0; i < w; ++i) outs.emplace_back(n);
        std::unique_ptr<serial_copies> copies;
        if (w > 1) {
            copies = std::make_unique<serial_copies>(w, [&](int i) {
                apps::matmul::serial_exec ex;
                apps::matmul::multiply(ex, a.v, b.v, outs[static_cast<std::size_t>(i)].v, n, leaf);
            });
            (void)copies->round();  // warm-up: the copies' pages
        }
        for (config& cf : configs)
            if (cf.peer_of != nullptr) {
                poison(c.v, n);
                (void)cf.peer_of->fn(prob, c.v, w);  // warm-up: the peer's threads, pages
                verify(c.v, ref.v, n, cf.peer_of->name, w);
                settle();
            }
        for (int r = 0; r < rounds; ++r) {
            ctx.progress("%d worker%s, round %d of %d: %zu configurations in turn, each after a serial run", w,
                         w == 1 ? "" : "s", r + 1, rounds, configs.size());
            for (config& cf : configs) {
                if (cf.copies) {
                    cf.paired_serial.push_back(serial_round());
                    cf.times.push_back(copies->round());
                } else if (cf.weft != nullptr) {
                    weft_round(cf, w);
                } else {
                    peer_round(cf, w);
                }
            }
        }
        for (matrix const& m : outs)
            if (w > 1) verify(m.v, ref.v, n, "a serial copy", w);

        double ceiling = 0;
        for (config const& cf : configs) {
            summary const st = summarize(cf.times);
            if (cf.copies) {
                ceiling = w * median_of_ratios(cf.paired_serial, cf.times);
                json_object rec = ctx.record();
                rec.add("version", "serial_copies").add("sched", "serial_copies").add("workers", w).add("n", n);
                rec.add("leaf", leaf).add_summary("time_s", st);
                rec.add_summary("serial_time_s", summarize(cf.paired_serial));
                rec.add("speedup_vs_serial", ceiling).add("paired_ratio_to", "serial");
                add_provenance(rec);
                ctx.emit(rec);
                t.add_row({cf.label, std::to_string(w), fmt(st.median, 3), fmt_pct(st.spread), fmt_ratio(ceiling),
                           "-", "-", "-", "-", "-", "-", "-"});
                continue;
            }
            double const speedup = median_of_ratios(cf.paired_serial, cf.times);
            // The fields every parallel configuration's row has, in this order.
            json_object rec = ctx.record();
            char const* version = cf.weft != nullptr ? "weft" : cf.peer_of->name;
            std::string const sched = cf.weft != nullptr ? cf.weft->sched : std::string(version);
            rec.add("version", version).add("sched", sched).add("variant", cf.label).add("workers", w);
            rec.add("n", n).add("leaf", leaf).add_summary("time_s", st);
            rec.add_summary("serial_time_s", summarize(cf.paired_serial));
            rec.add("speedup_vs_serial", speedup).add("paired_ratio_to", "serial");
            ceiling_fields(rec, speedup, ceiling);
            if (cf.weft != nullptr) {
                variant const& v = *cf.weft;
                weft_stats_t const& worst = cf.worst;
                double const par = worst.span_ns != 0 ? static_cast<double>(worst.work_ns) / worst.span_ns : 0.0;
                rec.add("stack_size", v.stack_size).add("peak_heap_bytes", worst.heap_bytes_peak);
                rec.add("serial_heap_bytes", serial_heap);
                rec.add("heap_vs_serial", static_cast<double>(worst.heap_bytes_peak) / serial_heap);
                rec.add("max_live_threads", worst.max_live_threads).add("threads_created", worst.threads_created);
                rec.add("stack_bytes_peak", worst.stack_bytes_peak);
                rec.add("work_s", worst.work_ns / 1e9).add("span_s", worst.span_ns / 1e9).add("parallelism", par);
                rec.add("steals", worst.steals).add("quota_preemptions", worst.quota_preemptions);
                rec.add("dummy_threads", worst.dummy_threads);
                t.add_row({v.label, std::to_string(w), fmt(st.median, 3), fmt_pct(st.spread),
                           speedup_text(speedup, ceiling), mib(worst.heap_bytes_peak),
                           fmt_ratio(static_cast<double>(worst.heap_bytes_peak) / serial_heap),
                           fmt_sig(worst.max_live_threads), mib(worst.stack_bytes_peak), fmt(worst.work_ns / 1e9, 3),
                           fmt(worst.span_ns / 1e9, 4), fmt(par, 1)});
            } else {
                char const* name = cf.peer_of->name;
                rec.add("peak_heap_bytes", cf.peak).add("serial_heap_bytes", serial_heap);
                rec.add("heap_vs_serial", static_cast<double>(cf.peak) / serial_heap);
                t.add_row({name, std::to_string(w), fmt(st.median, 3), fmt_pct(st.spread),
                           speedup_text(speedup, ceiling), mib(cf.peak),
                           fmt_ratio(static_cast<double>(cf.peak) / serial_heap), "-", "-", "-", "-", "-"});
            }
            add_provenance(rec);
            ctx.emit(rec);
        }
    }
    ctx.print(t, "matmul: time and memory per scheduler (Narlikar & Blelloch, Figures 5, 7, 8)");
    if (flagged > 0)
        ctx.warn("%zu speedup%s above the machine's ceiling measured in the same rounds (serial xW): not %s; run again "
                 "on a quieter machine",
                 flagged, flagged == 1 ? "" : "s", flagged == 1 ? "a result" : "results");
    return 0;
}

registrar const reg{experiment{
    .name = "matmul",
    .description = "Narlikar & Blelloch's divide-and-conquer matrix multiply: time, memory, live threads, T1/Tinf",
    .details = "C = A * B (n x n doubles) by 8 recursive forks with a temporary per level and a parallel add,\n"
               "serial kernel below --leaf. Runs the serial program, weft under each --sched at each --workers,\n"
               "fifo with small (16 KiB) and large (1 MiB) stacks, and the same algorithm on OpenMP tasks and\n"
               "oneTBB. Times are medians over --rounds; memory figures are the worst round. Every configuration\n"
               "of a worker count runs once per round, in turn, each right after a serial run; a speedup is the\n"
               "median of the rounds' ratios to those serial runs (paired). 'serial xW (ceiling)' runs W copies\n"
               "of the serial program at once: W x its ratio is the most any parallel version can reach on this\n"
               "machine; a speedup above it in the same run is flagged (above_ceiling), not a result. See\n"
               "docs/bench.md.",
    .options = {{.name = "n", .kind = opt_kind::integer, .metavar = "N", .default_value = "1024",
                 .help = "matrix order", .min = 2, .max = 16384},
                {.name = "leaf", .kind = opt_kind::integer, .metavar = "N", .default_value = "64",
                 .help = "serial kernel below this order (n / leaf must be a power of two)", .min = 1, .max = 16384},
                {.name = "workers", .kind = opt_kind::list, .metavar = "LIST", .default_value = "1,2",
                 .help = "worker counts to run (more than the CPUs is oversubscription)"},
                {.name = "sched", .kind = opt_kind::list, .metavar = "LIST", .default_value = "fifo,lifo,dfs,ws",
                 .help = "weft schedulers to run"},
                {.name = "stack-size", .kind = opt_kind::size, .metavar = "BYTES", .default_value = "0",
                 .help = "default stack size for the --sched runs (0: the runtime default)", .min = 0,
                 .max = 1073741824.0},
                {.name = "no-stack-variants", .kind = opt_kind::flag,
                 .help = "skip fifo with 16 KiB and 1 MiB stacks (the paper's small-stack variant)"},
                {.name = "no-peers", .kind = opt_kind::flag, .help = "skip OpenMP tasks and oneTBB"},
                opt_rounds(3)},
    .run = run,
    .in_demo = true,
    .demo_args = {"--n", "512", "--rounds", "3"},
    .demo_order = 20,
}};

}  // namespace
}  // namespace weft::bench::matmul
