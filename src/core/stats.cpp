#include "core/stats.hpp"

#include <cerrno>
#include <algorithm>
#include <cinttypes>

#include "core/clock.hpp"
#include "core/dispatch.hpp"
#include "core/profile.hpp"
#include "core/runtime.hpp"
#include "core/thread.hpp"
#include "core/timer.hpp"
#include "core/wait.hpp"

namespace weft::detail {

namespace {

// Busy time is derived: wall time since the worker started, minus idle time.
std::uint64_t busy_ns_of(const worker& w, std::int64_t now) {
    std::int64_t start = w.started_ns.load(memory_order_relaxed);
    if (start == 0) return 0;
    std::int64_t wall = now - start;
    std::int64_t idle = static_cast<std::int64_t>(w.idle_ns.load(memory_order_relaxed));
    return wall > idle ? static_cast<std::uint64_t>(wall - idle) : 0;
}

void fill(runtime* rt, weft_stats_t* out) {
    *out = weft_stats_t{};
    std::int64_t now = monotonic_ns();
    for (auto& w : rt->workers) {
        out->context_switches += w->switches.load(memory_order_relaxed);
        out->threads_created += w->created.load(memory_order_relaxed);
        out->parks += w->parks.load(memory_order_relaxed);
        out->idle_ns += w->idle_ns.load(memory_order_relaxed);
        out->busy_ns += busy_ns_of(*w, now);
    }
    out->threads_created += rt->external_created.load(memory_order_relaxed);
    std::int64_t live = live_ults(rt);
    out->threads_live = live > 0 ? static_cast<std::uint64_t>(live) : 0;
    std::uint64_t max_live = rt->max_live_base.load(memory_order_relaxed);
    for (auto& w : rt->workers) max_live = std::max(max_live, w->max_live_seen.load(memory_order_relaxed));
    out->max_live_threads = std::max(max_live, out->threads_live);
    out->stack_bytes_mapped = rt->stacks->bytes_mapped();
    out->stack_bytes_peak = rt->stacks->bytes_peak();
    out->wakeups = rt->wakeups.load(memory_order_relaxed);
    out->timers_fired = rt->timers->fired();
    out->workers = rt->nworkers;
    out->active_workers = rt->active.load(memory_order_relaxed);
    out->adapt_readings = rt->adapt_readings.load(memory_order_relaxed);
    out->workers_dropped = rt->workers_dropped.load(memory_order_relaxed);
    out->workers_added = rt->workers_added.load(memory_order_relaxed);
    if (g_measure) {
        if (worker* me = current_worker(); me != nullptr) profile_checkpoint(me);
        out->work_ns = profile_work_ns(rt);
        out->span_ns = profile_span_ns(rt);
    }
    heap_add_stats(out);
    if (rt->policy->add_stats != nullptr) rt->policy->add_stats(rt->policy_state, out);
}

}  // namespace

void print_stats(std::FILE* out) {
    runtime* rt = g_rt;
    if (rt == nullptr) return;
    weft_stats_t s;
    fill(rt, &s);
    std::fprintf(out,
                 "weft statistics (%s scheduler, %d workers)\n"
                 "  threads created        %" PRIu64 "\n"
                 "  threads live now       %" PRIu64 "\n"
                 "  most threads live      %" PRIu64 "\n"
                 "  context switches       %" PRIu64 "\n"
                 "  stack bytes mapped     %" PRIu64 " (peak %" PRIu64 ")\n"
                 "  parks / wake-ups       %" PRIu64 " / %" PRIu64 "\n"
                 "  timers fired           %" PRIu64 "\n",
                 rt->policy->name, rt->nworkers, s.threads_created, s.threads_live, s.max_live_threads,
                 s.context_switches, s.stack_bytes_mapped, s.stack_bytes_peak, s.parks, s.wakeups, s.timers_fired);
    if (s.adapt_readings != 0 || s.workers_dropped != 0 || s.workers_added != 0)
        std::fprintf(out, "  active workers now     %d (%" PRIu64 " readings, %" PRIu64 " dropped, %" PRIu64 " added)\n",
                     s.active_workers, s.adapt_readings, s.workers_dropped, s.workers_added);
    if (s.steals != 0 || s.failed_steals != 0)
        std::fprintf(out, "  steals / failed / naps %" PRIu64 " / %" PRIu64 " / %" PRIu64 "\n", s.steals,
                     s.failed_steals, s.steal_naps);
    if (s.quota_preemptions != 0 || s.dummy_threads != 0)
        std::fprintf(out, "  quota preemptions      %" PRIu64 " (dummy threads %" PRIu64 ")\n", s.quota_preemptions,
                     s.dummy_threads);
    if (s.heap_bytes_peak != 0)
        std::fprintf(out, "  heap bytes (%s) %" PRIu64 " (peak %" PRIu64 ")\n", heap_source, s.heap_bytes,
                     s.heap_bytes_peak);
    if (g_measure)
        std::fprintf(out, "  work T1 / span Tinf    %.3f ms / %.3f ms (parallelism %.2f)\n", s.work_ns / 1e6,
                     s.span_ns / 1e6, s.span_ns != 0 ? static_cast<double>(s.work_ns) / static_cast<double>(s.span_ns) : 0.0);
    // Filaments (src/fil/): their counters are the workers' (worker::fil),
    // which their public call maps to weft_fil_stats_t.
    if (weft_fil_stats_t f{}; weft_fil_stats_get(&f) == 0 && f.regions != 0) {
        std::fprintf(out,
                     "  filament regions       %" PRIu64 " (sweeps %" PRIu64 ")\n"
                     "  filaments created / run %" PRIu64 " / %" PRIu64 "\n"
                     "  forks / pruned / stolen %" PRIu64 " / %" PRIu64 " / %" PRIu64 "\n"
                     "  pool sweeps coarsened  %" PRIu64 " (1-D %" PRIu64 ", 2-D %" PRIu64 "; general %" PRIu64 ")\n",
                     f.regions, f.sweeps, f.filaments_created, f.filaments_run, f.forks, f.forks_pruned, f.steals,
                     f.pools_dense_1d + f.pools_dense_2d, f.pools_dense_1d, f.pools_dense_2d, f.pools_general);
    }
    std::int64_t now = monotonic_ns();
    for (auto& w : rt->workers) {
        std::fprintf(out, "  worker %-3d busy %10.3f ms  idle %10.3f ms  switches %" PRIu64 "  parks %" PRIu64 "\n",
                     w->index, busy_ns_of(*w, now) / 1e6, w->idle_ns.load(memory_order_relaxed) / 1e6,
                     w->switches.load(memory_order_relaxed), w->parks.load(memory_order_relaxed));
    }
}

}  // namespace weft::detail

using namespace weft::detail;

extern "C" {

WEFT_API int weft_stats_get(weft_stats_t* out) {
    if (out == nullptr || g_rt == nullptr) return EINVAL;
    fill(g_rt, out);
    return 0;
}

WEFT_API int weft_worker_stats_get(int worker_index, weft_worker_stats_t* out) {
    runtime* rt = g_rt;
    if (out == nullptr || rt == nullptr || worker_index < 0 || worker_index >= rt->nworkers) return EINVAL;
    const worker& w = *rt->workers[worker_index];
    out->context_switches = w.switches.load(memory_order_relaxed);
    out->threads_created = w.created.load(memory_order_relaxed);
    out->parks = w.parks.load(memory_order_relaxed);
    out->idle_ns = w.idle_ns.load(memory_order_relaxed);
    out->busy_ns = busy_ns_of(w, monotonic_ns());
    return 0;
}

WEFT_API int weft_stats_reset(void) {
    runtime* rt = g_rt;
    if (rt == nullptr) return EINVAL;
    std::int64_t now = monotonic_ns();
    for (auto& w : rt->workers) {
        w->switches.store(0, memory_order_relaxed);
        w->created.store(0, memory_order_relaxed);
        w->parks.store(0, memory_order_relaxed);
        w->idle_ns.store(0, memory_order_relaxed);
        w->started_ns.store(now, memory_order_relaxed);
        for (auto& c : w->fil) c.store(0, memory_order_relaxed);  // the filaments' share (src/fil/stats.hpp)
    }
    rt->external_created.store(0, memory_order_relaxed);
    std::int64_t live = live_ults(rt);
    rt->max_live_base.store(live > 0 ? static_cast<std::uint64_t>(live) : 0, memory_order_relaxed);
    for (auto& w : rt->workers) {
        w->max_live_seen.store(0, memory_order_relaxed);
        w->live_high.store(0, memory_order_relaxed);
    }
    rt->wakeups.store(0, memory_order_relaxed);
    rt->adapt_readings.store(0, memory_order_relaxed);
    rt->workers_dropped.store(0, memory_order_relaxed);
    rt->workers_added.store(0, memory_order_relaxed);
    rt->timers->reset_stats();
    if (g_measure) profile_reset(rt);
    heap_reset_stats();
    if (rt->policy->reset_stats != nullptr) rt->policy->reset_stats(rt->policy_state);
    rt->stacks->reset_peak();
    return 0;
}

WEFT_API void weft_stats_print(void) { print_stats(stderr); }

}  // extern "C"
