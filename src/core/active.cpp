// weft::detail — dropping workers and taking them back (active.hpp).
#include "core/active.hpp"

#include <algorithm>
#include <mutex>

#include "core/profile.hpp"
#include "core/runtime.hpp"
#include "core/worker.hpp"

namespace weft::detail {

namespace {
// Changes are rare (at most a few per controller interval): one mutex for all.
std::mutex active_mutex;
}  // namespace

int set_active_workers(runtime* rt, int n) {
    std::lock_guard<std::mutex> g(active_mutex);
    n = std::clamp(n, 1, rt->nworkers);
    int old = rt->active.load(memory_order_relaxed);
    if (n == old) return n;
    if (n < old) rt->workers_dropped.fetch_add(static_cast<std::uint64_t>(old - n), memory_order_relaxed);
    else rt->workers_added.fetch_add(static_cast<std::uint64_t>(n - old), memory_order_relaxed);
    if (n < old) {
        // A running one notices at its next scheduling point. A parked one
        // becomes dormant where it sleeps: out of notify_work's list, so that
        // new work wakes an active worker instead.
        for (int i = n; i < old; ++i) rt->workers[i]->dropped.store(true, memory_order_release);
        rt->active.store(n, memory_order_release);
        lock_guard<spinlock> g(rt->park_lock);
        for (int i = n; i < old; ++i) {
            worker* w = rt->workers[i].get();
            if (!w->parked || w->dormant || w->napping) continue;  // a napping one sees the flag when it wakes
            rt->parked.erase(std::find(rt->parked.begin(), rt->parked.end(), w));
            w->dormant = true;
            rt->sleepers.fetch_sub(1, memory_order_relaxed);
            rt->dormant.fetch_add(1, memory_order_relaxed);
        }
    } else {
        rt->active.store(n, memory_order_release);
        for (int i = old; i < n; ++i) {
            worker* w = rt->workers[i].get();
            w->dropped.store(false, memory_order_seq_cst);
            // A dormant worker registered under park_lock before we look there
            // (and is roused), or takes the lock after us and then sees the flag
            // cleared in its last look (core/sleep/README.md, "Dropped workers").
            wake_worker(w);
        }
    }
    if (g_tracing) rt->active_log.push_back({ticks(), n});
    return n;
}

std::vector<active_change> active_history(runtime* rt) {
    std::lock_guard<std::mutex> g(active_mutex);
    return rt->active_log;
}

}  // namespace weft::detail
