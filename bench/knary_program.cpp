// knary on weft and the measurements of it (knary_program.hpp).
#include "knary_program.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <numeric>

#include <time.h>

#include <weft/weft.h>
#include <weft/weft.hpp>

namespace weft::bench::knary {
namespace {

struct tree {
    shape s;
    long spin;
};

// The node's fixed work: `iters` steps of a 64-bit LCG, one multiply and one
// add each; the empty asm keeps every step (the compiler cannot fold the loop
// or drop it).
[[gnu::noinline]] void busy(long iters, std::uint64_t seed) {
    std::uint64_t x = seed;
    for (long i = 0; i < iters; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        asm volatile("" : "+r"(x));
    }
}

// A node with `levels` levels below and including it; returns the nodes of
// its subtree that ran. The first r children are spawned and joined one at a
// time; the other k - r are all spawned, then all joined.
std::uint64_t node(tree const& t, int levels) {
    busy(t.spin, static_cast<std::uint64_t>(levels));
    if (levels == 1) return 1;
    std::uint64_t ran = 1;
    for (int i = 0; i < t.s.r; ++i) ran += weft::spawn(&node, std::cref(t), levels - 1).join();
    int const parallel = t.s.k - t.s.r;
    if (parallel > 0) {
        std::array<weft::task<std::uint64_t>, max_children> kids;
        for (int i = 0; i < parallel; ++i)
            kids[static_cast<std::size_t>(i)] = weft::spawn(&node, std::cref(t), levels - 1);
        for (int i = 0; i < parallel; ++i) ran += kids[static_cast<std::size_t>(i)].join();
    }
    return ran;
}

// Runs the whole tree on the calling (main) weft thread and checks that as
// many nodes ran as the tree has.
void run_checked(shape s, long spin) {
    tree const t{s, spin};
    std::uint64_t ran = 0;
    try {
        ran = node(t, s.n);
    } catch (std::exception const& e) {
        die("knary %s: %s", shape_name(s).c_str(), e.what());
    }
    if (static_cast<double>(ran) != node_count(s))
        die("knary %s: %llu nodes ran, the tree has %.0f", shape_name(s).c_str(), static_cast<unsigned long long>(ran),
            node_count(s));
}

void start_runtime(int workers, bool measure) {
    weft_config_t cfg{};
    cfg.workers = workers;
    cfg.sched = "ws";
    cfg.measure = measure ? 1 : 0;
    if (int rc = weft_init(&cfg); rc != 0)
        die("weft_init(sched=ws, workers=%d) failed: %s", workers, std::strerror(rc));
}

// The decimal integer `text` if it lies in [min, max], else -1.
long parse_long(std::string const& text, long min, long max) {
    if (text.empty()) return -1;
    char* end = nullptr;
    errno = 0;
    long const v = std::strtol(text.c_str(), &end, 10);
    if (*end != '\0' || errno != 0 || v < min || v > max) return -1;
    return v;
}

}  // namespace

workload knary_workload(shape s, long spin) {
    return {shape_name(s), {}, [s, spin] { run_checked(s, spin); }, {}};
}

std::string shape_name(shape s) { return std::to_string(s.n) + ":" + std::to_string(s.k) + ":" + std::to_string(s.r); }

namespace {
void run_prepared(workload const& w) {
    if (w.prepare) w.prepare();
    w.run();
    if (w.check) w.check();
}
}  // namespace

work_span measure_work_span(workload const& w, int rounds) {
    start_runtime(1, true);
    run_prepared(w);  // warm-up: stacks mapped, caches filled
    std::vector<double> cpu, tinf, work;
    for (int r = 0; r < rounds; ++r) {
        if (w.prepare) w.prepare();
        check(weft_stats_reset(), "weft_stats_reset");
        double const c0 = process_cpu_s();
        w.run();
        double const c1 = process_cpu_s();
        weft_stats_t st{};
        check(weft_stats_get(&st), "weft_stats_get");
        if (w.check) w.check();
        cpu.push_back(c1 - c0);
        tinf.push_back(double(st.span_ns) * 1e-9);
        work.push_back(double(st.work_ns) * 1e-9);
    }
    check(weft_finalize(), "weft_finalize");
    work_span ws;
    ws.t1 = summarize(cpu);
    ws.tinf = summarize(tinf);
    ws.work = summarize(work);
    ws.t1_s = ws.t1.median;
    ws.tinf_s = ws.tinf.median;
    ws.work_s = ws.work.median;
    if (!(ws.t1_s > 0 && ws.tinf_s > 0))
        die("%s: T1 = %g s of CPU, span %g s measured by the runtime (weft_config_t.measure had no effect?)",
            w.name.c_str(), ws.t1_s, ws.tinf_s);
    return ws;
}

std::vector<timed_run> timed_runs(workload const& w, int workers, int rounds, run_hook const& hook) {
    start_runtime(workers, false);
    run_prepared(w);  // warm-up
    std::vector<timed_run> runs;
    for (int r = 0; r < rounds; ++r) {
        if (w.prepare) w.prepare();
        if (hook) hook(r, false);
        timed_run run;
        double const c0 = process_cpu_s();
        run.start_ns = now_ns();
        w.run();
        run.end_ns = now_ns();
        double const c1 = process_cpu_s();
        if (hook) hook(r, true);
        if (w.check) w.check();
        run.wall_s = double(run.end_ns - run.start_ns) * 1e-9;
        run.cpu_s = c1 - c0;
        run.pa_cpu = run.cpu_s / run.wall_s;
        runs.push_back(run);
    }
    check(weft_finalize(), "weft_finalize");
    return runs;
}

std::size_t median_run(std::vector<timed_run> const& runs) {
    std::vector<std::size_t> idx(runs.size());
    std::iota(idx.begin(), idx.end(), std::size_t{0});
    std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return runs[a].wall_s < runs[b].wall_s; });
    return idx[(idx.size() - 1) / 2];
}

option_spec opt_inputs(std::string default_inputs) {
    return {.name = "inputs",
            .kind = opt_kind::list,
            .metavar = "LIST",
            .default_value = std::move(default_inputs),
            .help = "knary inputs n:k:r (depth n, k children per node, the first r run serially)"};
}

option_spec opt_worker_list(std::string default_workers) {
    return {.name = "workers",
            .kind = opt_kind::list,
            .metavar = "LIST",
            .default_value = std::move(default_workers),
            .help = "worker counts P: numbers and ranges, e.g. 1-4,8,16 (more than the CPUs is oversubscription)"};
}

option_spec opt_spin() {
    return {.name = "spin",
            .kind = opt_kind::integer,
            .metavar = "N",
            .default_value = std::to_string(default_spin),
            .help = "busy-loop iterations per node (one multiply-add each)",
            .min = 0,
            .max = 1e9};
}

std::vector<shape> parse_inputs(std::string const& command, std::vector<std::string> const& items) {
    std::vector<shape> out;
    for (auto const& item : items) {
        std::vector<long> v;
        for (std::size_t start = 0;;) {
            std::size_t const colon = item.find(':', start);
            v.push_back(parse_long(item.substr(start, colon == std::string::npos ? colon : colon - start), 0, 1000000));
            if (colon == std::string::npos) break;
            start = colon + 1;
        }
        if (v.size() != 3 || std::count(v.begin(), v.end(), -1) != 0)
            throw usage_error(command + ": --inputs: '" + item +
                              "' is not n:k:r (three non-negative integers, e.g. 6:9:2)");
        shape const s{int(v[0]), int(v[1]), int(v[2])};
        if (std::string const why = check_shape(s); !why.empty())
            throw usage_error(command + ": --inputs: '" + item + "': " + why);
        out.push_back(s);
    }
    return out;
}

std::vector<int> parse_workers(std::string const& command, std::vector<std::string> const& items) {
    constexpr long most = 1024;
    std::vector<int> out;
    for (auto const& item : items) {
        std::size_t const dash = item.find('-');
        long const lo = parse_long(item.substr(0, dash), 1, most);
        long const hi = dash == std::string::npos ? lo : parse_long(item.substr(dash + 1), 1, most);
        if (lo < 0 || hi < 0 || hi < lo)
            throw usage_error(command + ": --workers: '" + item +
                              "' is not a worker count or a range a-b of them, in [1, " + std::to_string(most) + "]");
        for (long w = lo; w <= hi; ++w) out.push_back(int(w));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace weft::bench::knary
