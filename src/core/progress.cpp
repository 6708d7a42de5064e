// The progress hook (progress.hpp): one poll for the whole runtime, run by the
// workers from their idle loop and, rate-limited, from pick.
#include "core/progress.hpp"

#include <sched.h>

#include "core/clock.hpp"
#include "core/dispatch.hpp"
#include "core/runtime.hpp"
#include "core/tunables.hpp"
#include "core/wait.hpp"
#include "core/worker.hpp"

namespace weft::detail {

atomic<progress_fn> g_progress_fn{nullptr};

namespace {
atomic<void*> g_ctx{nullptr};
atomic<int> g_inside{0};
atomic<std::int64_t> g_last_ns{0};
atomic<std::int64_t> g_active_ns{0};  // when the hook last did something (coarse clock)
spinlock g_set_lock;
// Picks since this worker last polled the hook or read the clock for it. A
// poll from the idle loop restarts the count, so that the pick that runs the
// thread the poll just woke does not poll again first (a frame taken there
// would find that thread not yet waiting for it).
thread_local std::uint32_t t_picks = 0;
}  // namespace

bool progress_poll_now(std::int64_t now, bool waiting) {
    // seq_cst, with clear_progress_hook's store and load: store-buffering, so
    // either clear sees this worker inside, or this worker sees the hook gone.
    // (It also pairs with set_progress_hook's release, so ctx is the hook's.)
    g_inside.fetch_add(1, memory_order_seq_cst);
    t_picks = 0;
    progress_fn fn = g_progress_fn.load(memory_order_seq_cst);
    bool did = false;
    if (fn != nullptr) {
        did = fn(g_ctx.load(memory_order_relaxed), waiting);  // relaxed: published before fn (release/acquire on g_progress_fn)
        // The precise clock only when the caller read it: an idle worker polls
        // in a tight loop.
        if (now != 0) g_last_ns.store(now, memory_order_relaxed);       // relaxed: a rate limit only
        if (did) g_active_ns.store(coarse_monotonic_ns(), memory_order_relaxed);  // relaxed: a heuristic only
    }
    g_inside.fetch_sub(1, memory_order_release);
    return did;
}

void progress_poll_if_due() {
    if (++t_picks < tun::progress_pick_period) return;
    t_picks = 0;
    std::int64_t now = monotonic_ns();
    if (now - g_last_ns.load(memory_order_relaxed) < tun::progress_busy_ns) return;
    (void)progress_poll_now(now);
}

bool progress_recently_active() {
    return progress_hook_set() && coarse_monotonic_ns() - g_active_ns.load(memory_order_relaxed) < tun::progress_active_ns;
}

bool poll_before_wait(bool (*arrived)(void*), void* ctx) {
    if (!progress_hook_set()) return false;
    worker* w = current_worker();
    if (w == nullptr) return false;
    std::int64_t deadline = 0;
    for (std::uint32_t looks = 1;; ++looks) {
        if (looks % 4 == 1 && worker_may_have_work(w)) return false;  // every 4 looks: a scan of the deques
        // After a poll that brought something, and every 8 looks (another
        // worker's poll may bring it).
        if ((progress_poll_now(0, true) || looks % 8 == 0) && arrived(ctx)) return true;
        // The clock every 64 looks (a look is ~0.1-0.3 us).
        if (looks % 64 == 0) {
            std::int64_t now = monotonic_ns();
            if (deadline == 0) deadline = now + tun::progress_wait_spin_ns;
            else if (now >= deadline) return false;
        }
        cpu_relax();
    }
}

bool set_progress_hook(progress_fn fn, void* ctx) {
    lock_guard<spinlock> g(g_set_lock);
    if (g_progress_fn.load(memory_order_relaxed) != nullptr) return false;
    g_ctx.store(ctx, memory_order_relaxed);
    g_progress_fn.store(fn, memory_order_release);
    return true;
}

void clear_progress_hook() {
    {
        lock_guard<spinlock> g(g_set_lock);
        g_progress_fn.store(nullptr, memory_order_seq_cst);
    }
    // A worker that loaded fn before the store may still be inside it.
    while (g_inside.load(memory_order_seq_cst) != 0) sched_yield();
    g_ctx.store(nullptr, memory_order_relaxed);
}

}  // namespace weft::detail
