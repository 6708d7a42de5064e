// The progress hook (progress.hpp): one poll for the whole runtime, run by the
// workers from their idle loop and, rate-limited, from pick.
#include "core/progress.hpp"

#include <sched.h>

#include "core/tunables.hpp"
#include "core/wait.hpp"

namespace weft::detail {

namespace progress_detail {

atomic<progress_fn> g_fn{nullptr};

namespace {
atomic<void*> g_ctx{nullptr};
atomic<int> g_inside{0};
atomic<std::int64_t> g_last_ns{0};
atomic<std::int64_t> g_active_ns{0};  // when the hook last did something
spinlock g_set_lock;
// Picks since this worker last read the clock for the hook.
thread_local std::uint32_t t_picks = 0;
}  // namespace

bool poll_now(std::int64_t now) {
    // seq_cst, with clear_progress_hook's store and load: store-buffering, so
    // either clear sees this worker inside, or this worker sees the hook gone.
    // (It also pairs with set_progress_hook's release, so ctx is the hook's.)
    g_inside.fetch_add(1, memory_order_seq_cst);
    progress_fn fn = g_fn.load(memory_order_seq_cst);
    bool did = false;
    if (fn != nullptr) {
        did = fn(g_ctx.load(memory_order_relaxed));  // relaxed: published before fn (release/acquire on g_fn)
        // The clock only when needed: an idle worker polls in a tight loop.
        if (did && now == 0) now = monotonic_ns();
        if (now != 0) g_last_ns.store(now, memory_order_relaxed);      // relaxed: a rate limit only
        if (did) g_active_ns.store(now, memory_order_relaxed);         // relaxed: a heuristic only
    }
    g_inside.fetch_sub(1, memory_order_release);
    return did;
}

void poll_if_due() {
    if (++t_picks < tun::progress_pick_period) return;
    t_picks = 0;
    std::int64_t now = monotonic_ns();
    if (now - g_last_ns.load(memory_order_relaxed) < tun::progress_busy_ns) return;
    (void)poll_now(now);
}

}  // namespace progress_detail

using namespace progress_detail;

bool progress_recently_active() {
    return progress_hook_set() &&
           monotonic_ns() - g_active_ns.load(memory_order_relaxed) < tun::progress_active_ns;
}

bool set_progress_hook(progress_fn fn, void* ctx) {
    lock_guard<spinlock> g(g_set_lock);
    if (g_fn.load(memory_order_relaxed) != nullptr) return false;
    g_ctx.store(ctx, memory_order_relaxed);
    g_fn.store(fn, memory_order_release);
    return true;
}

void clear_progress_hook() {
    {
        lock_guard<spinlock> g(g_set_lock);
        g_fn.store(nullptr, memory_order_seq_cst);
    }
    // A worker that loaded fn before the store may still be inside it.
    while (g_inside.load(memory_order_seq_cst) != 0) sched_yield();
    g_ctx.store(nullptr, memory_order_relaxed);
}

}  // namespace weft::detail
