// weft::detail — switching between ults and the post-switch actions.
//
// Hot path: everything here runs on every spawn, yield and block.
#include <sched.h>

#include <cstring>

#include "arch/context.hpp"
#include "arch/fiber_sanitizer.hpp"
#include "base/asymmetric_fence.hpp"
#include "core/dispatch.hpp"
#include "core/profile.hpp"
#include "core/progress.hpp"
#include "core/runtime.hpp"
#include "core/thread.hpp"
#include "core/timer.hpp"
#include "core/wait.hpp"
#include "core/worker.hpp"

namespace weft::detail {

namespace {
// True if w has work outside the policy: pinned ults, external wake-ups,
// timers, a progress hook to run (core/progress.hpp).
bool side_work(runtime* rt, worker* w) {
    return w->inbox.maybe_nonempty() || rt->inject.maybe_nonempty() || rt->timers->pending() ||
           progress_hook_set();
}
}  // namespace

// Pops the next ult for w: its inbox (pinned ults), the inject queue (ults
// readied by external threads), expired timers, then the policy; a dropped
// worker (core/active.hpp) only its inbox. A caller that
// holds a primitive's spinlock (block) must not fire timers: a timer takes the
// lock of the primitive its waiter waits on, which may be that very lock.
// From the policy, only what is w's own (pick_local) unless `steal`: only the
// spinning worker looks in the other workers' shares (core/sleep/README.md,
// "The spinning worker"); a policy without pick_local has no such shares.
ult* pick(worker* w, bool fire_timers, bool steal) {
    runtime* rt = g_rt;
    ult* t = w->inbox.pop();
    if (t == nullptr) {
        if (w->dropped.load(memory_order_relaxed)) return nullptr;
        t = rt->inject.pop();
    }
    if (t != nullptr) {
        if (rt->policy->space.on_run != nullptr) rt->policy->space.on_run(rt->policy_state, w->index, t);
        return t;
    }
    if (fire_timers) {
        if (rt->timers->pending()) rt->timers->fire_expired(w);
        progress_at_pick();  // core/progress.hpp: rate-limited, a relaxed load when no hook is set
    }
    if (!steal && rt->policy->pick_local != nullptr) return rt->policy->pick_local(rt->policy_state, w->index);
    return rt->policy->pick_next(rt->policy_state, w->index);
}

namespace {
// The post-switch action proper (see run_post_switch).
void finish_switch(worker* w) {
    ult* prev = w->prev;
    switch (w->pending) {
    case post_switch::none:
        break;
    case post_switch::unlock:
        w->pending = post_switch::none;
        prev->suspended.store(1, memory_order_release);
        spinlock_ref(*w->pending_lock).unlock();  // counted on this worker, where it was taken
        // block() could not fire expired timers while it held that lock; do it
        // now, or a worker whose ults only block and wake one another would
        // never service a timer.
        if (g_rt->timers->pending()) g_rt->timers->fire_expired(w);
        return;
    case post_switch::finish_prev:
        w->pending = post_switch::none;
        finish(w, prev);
        return;
    }
    // Release: whoever picks prev next (maybe already waiting) sees its context.
    prev->suspended.store(1, memory_order_release);
}
}  // namespace

void switch_to(worker*& w, ult* from, ult* to) { switch_inline(w, from, to); }

// Runs on the new ult right after a switch, on the switching worker. On the
// idle ult, it then carries out a handoff (see switch_to): a loop rather than
// a recursion, so that the idle stack does not grow when handoffs follow each
// other (the idle ult resumes inside the loop's switch_to, finds the next
// handoff there and returns to the loop).
void run_post_switch(worker* w) {
    finish_switch(w);
    if (w->handoff == nullptr || w->in_handoff) return;
    w->in_handoff = true;
    while (ult* to = w->handoff) {
        w->handoff = nullptr;
        switch_to(w, w->idle, to);  // from the idle ult: waits for `to` as long as needed
    }
    w->in_handoff = false;
}

// A pinned ult goes to its worker's inbox, never to the policy (policy.hpp,
// "Pinned ults").
void make_ready(worker* w, ult* t, ready_reason why) {
    runtime* rt = g_rt;
    if (t->pinned_worker >= 0) {
        worker* target = rt->workers[t->pinned_worker].get();
        target->inbox.push(t);
        if (target != w) wake_worker(target);
        return;
    }
    if (w == nullptr) {
        rt->inject.push(t);
        notify_work(nullptr);
        return;
    }
    rt->policy->ready(rt->policy_state, w->index, t, why);
    if (rt->nworkers > 1) notify_work(w);
}

worker* yield(worker* w) {
    runtime* rt = g_rt;
    ult* self = w->current;
    ult* next;
    // yield_swap would queue self in the policy: not for a pinned ult; and a
    // dropped worker takes nothing from the policy.
    bool dropped = w->dropped.load(memory_order_relaxed);
    if (rt->policy->yield_swap != nullptr && !side_work(rt, w) && self->pinned_worker < 0 && !dropped) {
        // One queue operation: queue self and take the next (maybe self again).
        next = rt->policy->yield_swap(rt->policy_state, w->index, self);
        if (next == self) {
            check_stack_at_scheduling_point(self);
            return w;
        }
        if (rt->nworkers > 1) notify_work(w);
    } else {
        next = pick(w);
        if (next == nullptr) {
            // A dropped worker hands an unpinned ult over to the active ones.
            if (!dropped || self->pinned_worker >= 0) {
                check_stack_at_scheduling_point(self);
                return w;
            }
            next = w->idle;
        }
        make_ready(w, self, ready_reason::yielded);
    }
    switch_inline(w, self, next);
    return w;
}

worker* migrate(worker* w) {
    ult* self = w->current;
    ult* next = pick(w);
    if (next == nullptr) next = w->idle;
    make_ready(w, self, ready_reason::yielded);  // pinned: goes to its worker's inbox
    switch_inline(w, self, next);
    return w;
}

worker* block(worker* w, std::uint32_t* lock) { return block_inline(w, lock); }

void exit_current(worker* w) { exit_inline(w); }

}  // namespace weft::detail
