// weft::detail — the switching paths, inline.
//
// Every function here is forced inline into its callers on purpose: after a
// switch the CPU's return-stack predictor holds the *other* ult's call chain,
// so each return on the way back up from switch_context mispredicts (~15-20
// cycles each, measured with `perf stat -e branch-misses`). Each frame kept out
// of the path between the user's call and switch_context is one mispredicted
// return less per switch. The out-of-line entry points (block, exit_current,
// switch_to) live in dispatch.cpp for the paths where a frame does not matter.
#pragma once

#include <sched.h>

#include <cstring>

#include "arch/context.hpp"
#include "arch/fiber_sanitizer.hpp"
#include "core/current.hpp"
#include "core/profile.hpp"
#include "core/runtime.hpp"
#include "core/thread.hpp"
#include "core/thread_pointer.hpp"
#include "core/tunables.hpp"
#include "core/wait.hpp"
#include "core/worker.hpp"

namespace weft::detail {

// The out-of-line entry points (dispatch.cpp).
// All take the calling worker and return the worker the caller resumed on.
worker* yield(worker* w);
// Suspends the current ult, releasing *lock once it is saved.
worker* block(worker* w, std::uint32_t* lock);
[[noreturn]] void exit_current(worker* w);
// Moves the current ult to the worker it is pinned to (suspends it here).
worker* migrate(worker* w);
// Makes t runnable. w is the calling worker or null (external caller).
void make_ready(worker* w, ult* t, ready_reason why);
void run_post_switch(worker* w);
void switch_to(worker*& w, ult* from, ult* to);
ult* pick(worker* w, bool fire_timers = true, bool steal = false);

// The two words of libstdc++'s/libc++abi's per-thread __cxa_eh_globals.
inline constexpr std::size_t eh_bytes = 2 * sizeof(void*);

// An overflow that got past the guard is reported before the thread can run
// on: a frame below the stack (larger than the guard, in code built without
// stack probes) or, on a canary stack, an overwritten canary. Checked for the
// thread a worker switches away from, and by a yield that finds nothing else
// to run (it does not switch, but is a scheduling point all the same).
[[gnu::always_inline]] inline void check_stack_at_scheduling_point(ult* u) {
    if (arch::stack_pointer_below(u->stack) ||
        (u->stack.guard == arch::guard_kind::canary && !arch::stack_canary_intact(u->stack)))
        report_overflow_at_switch(u);
}

// Switches from `from` (the current ult of w) to `to`. On return the caller is
// running again, possibly on another worker: w is updated.
[[gnu::always_inline]] inline void switch_inline(worker*& w, ult* from, ult* to) {
    // `to` may have been readied while its last worker was still switching
    // away from it: wait until its context is saved (a few instructions).
    // But that worker may itself be waiting here for `from`, if `from` too was
    // readied before being suspended (a joiner woken before it blocked, a
    // yield, a preemption) and that worker picked it: each waits for the
    // other's ult, for ever. So after a short spin, unless `from` is the idle
    // ult (in no ready set: nobody waits for it), save `from` first by
    // switching to the idle ult, which then waits for `to` (handoff, in
    // run_post_switch). Found by dfs, whose pick order makes it likely.
    // The idle ult waits as long as needed, but past the short spin it yields
    // the CPU between looks: the worker still switching away from `to` has
    // then most likely been preempted (more workers than CPUs, or another
    // program), and may be waiting for this very CPU: under ws a thief woken
    // by a push (notify_work) may be placed on the pusher's CPU, after the
    // parent was queued and before it was switched away from (start_inline).
    // Spinning would keep the CPU from it for the rest of the time slice
    // (docs/design/ws.md, "A worker preempted holding work").
    if (to->suspended.load(memory_order_acquire) == 0) {
        int spins = 0;
        while (to->suspended.load(memory_order_acquire) == 0) {
            if (++spins > tun::handoff_spins) {
                if (from != w->idle) {
                    w->handoff = to;
                    to = w->idle;
                    break;
                }
                sched_yield();
                continue;
            }
            cpu_relax();
        }
    }
    to->suspended.store(0, memory_order_relaxed);
    w->current = to;
    w->prev = from;
    // Thread-local storage follows a ult that has its own (core/thread_pointer.hpp):
    // for ults without, as all of weft's own programs, one test of two loads.
    if ((reinterpret_cast<std::uintptr_t>(from->tp) | reinterpret_cast<std::uintptr_t>(to->tp)) != 0) [[unlikely]]
        switch_thread_pointer(w, to);
    w->switches.store(w->switches.load(memory_order_relaxed) + 1, memory_order_relaxed);
    if (g_measure) profile_switch(w, from, to);
    // C++ exception state is per kernel thread; carry it with the ult.
    std::memcpy(from->eh_state, w->eh_globals, eh_bytes);
    std::memcpy(w->eh_globals, to->eh_state, eh_bytes);
    check_stack_at_scheduling_point(from);
    // Nothing instrumented may run between this hook and the switch.
    arch::san_before_switch(&from->san, &to->san, w->pending == post_switch::finish_prev);
    void* arg = arch::switch_context(&from->ctx, &to->ctx, w);
    w = static_cast<worker*>(arg);
    arch::san_after_switch(&from->san);
    run_post_switch(w);
}

[[gnu::always_inline]] inline worker* block_inline(worker* w, std::uint32_t* lock) {
    ult* self = w->current;
    runtime* rt = g_rt;
    if (rt->policy->space.on_block != nullptr) rt->policy->space.on_block(rt->policy_state, w->index, self);
    ult* next = pick(w, /*fire_timers=*/lock == nullptr);
    if (next == self) {
        // Woken before it could block (lock-free wake-ups such as join).
        if (lock != nullptr) spinlock_ref(*lock).unlock();
        return w;
    }
    if (next == nullptr) next = w->idle;
    if (lock != nullptr) {
        w->pending = post_switch::unlock;
        w->pending_lock = lock;
    }
    switch_inline(w, self, next);
    return w;
}

// Hands a new child of the running ult, which is not pinned (launch_inline
// decides), to the policy; a child-first policy (ws, dfs) runs it at once and
// queues the caller. Inlined into weft_thread_create: under ws the
// parent resumes here after the child's whole run, and each frame between the
// user's call and this switch is one more mispredicted return (see above).
[[gnu::always_inline]] inline worker* start_inline(worker* w, ult* child) {
    runtime* rt = g_rt;
    ult* self = w->current;
    if (rt->policy->spawn(rt->policy_state, w->index, self, child)) {
        // Child first: the parent is queued now (see ult::suspended) and runs
        // when the policy says.
        make_ready(w, self, ready_reason::preempted_by_child);
        switch_inline(w, self, child);
        return w;
    }
    if (rt->nworkers > 1) notify_work(w);
    return w;
}

[[gnu::always_inline, noreturn]] inline void exit_inline(worker* w) {
    ult* self = w->current;
    runtime* rt = g_rt;
    wait_record* joiner = leave(w, self);
    ult* next = pick(w);
    if (joiner != nullptr) {
        ult* j = joiner->waiter;
        // With nothing else to run here, switch straight to the joiner: one
        // switch instead of two (via the idle ult), and no policy order is
        // bypassed since the joiner would be the only ready ult.
        if (next == nullptr && j != nullptr && (j->pinned_worker < 0 || j->pinned_worker == w->index) &&
            !w->dropped.load(memory_order_relaxed)) {
            next = j;
            if (rt->policy->space.on_run != nullptr) rt->policy->space.on_run(rt->policy_state, w->index, j);
        } else {
            wake_from(w, joiner);
        }
    }
    // After the next ult is chosen: until then the policy may count self as
    // the one this worker runs (dfs: a large allocation elsewhere must not see
    // the worker idle between self's end and its joiner's start).
    if (rt->policy->space.on_exit != nullptr) rt->policy->space.on_exit(rt->policy_state, w->index, self);
    if (next == nullptr) next = w->idle;
    w->pending = post_switch::finish_prev;
    switch_inline(w, self, next);
    __builtin_unreachable();
}

}  // namespace weft::detail
