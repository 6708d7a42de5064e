// weft::detail — preemption by the runtime, for weft's allocator (src/mem).
//
// Narlikar & Blelloch's space-efficient scheduler stops a thread at two allocation-driven
// points: when it has allocated more than its memory quota K since it was last
// scheduled (preempt), and before an allocation larger than K, which it delays
// behind about size/K dummy threads forked as a binary tree (run_dummies). The
// allocator asks the policy (sched_policy_def::space.on_alloc) which one applies;
// this file carries them out with the ordinary dispatch steps.
#include <sched.h>

#include <algorithm>
#include <cstdint>

#include "base/primitives.hpp"
#include "core/clock.hpp"
#include "core/dispatch.hpp"
#include "core/preempt.hpp"
#include "core/runtime.hpp"
#include "core/thread.hpp"
#include "core/tunables.hpp"
#include "core/wait.hpp"
#include "core/worker.hpp"

namespace weft::detail {

namespace {

// A dummy thread: it does nothing but take a place in the policy's order. Its
// argument is the size of the subtree it roots (itself included); it forks the
// rest as two halves, left first (the higher priority under dfs), and joins
// them. A subtree that cannot be created (no stack) is skipped: the delay is a
// scheduling device, and an allocation must not fail for want of it.
void* dummy_main(void* arg);

const weft_attr_t dummy_attr{0, WEFT_CREATE_JOINABLE, 0, "weft-dummy"};

ult* fork_dummy(std::uintptr_t subtree) {
    worker* w = current_worker();
    ult* u = nullptr;
    if (create_ult(w, &dummy_attr, &dummy_main, reinterpret_cast<void*>(subtree), 0, nullptr, &u) != 0)
        return nullptr;
    launch_ult(w, u);  // under dfs the child runs at once; we resume after it yields the worker
    return u;
}

void* dummy_main(void* arg) {
    auto rest = reinterpret_cast<std::uintptr_t>(arg) - 1;
    std::uintptr_t left = rest / 2, right = rest - left;
    ult* kids[2] = {nullptr, nullptr};
    if (left != 0) kids[0] = fork_dummy(left);
    if (right != 0) kids[1] = fork_dummy(right);
    for (ult* k : kids)
        if (k != nullptr) (void)join_ult(k, nullptr, nullptr, nullptr);  // joinable, not joined elsewhere: cannot fail
    return nullptr;
}

}  // namespace

worker* preempt(worker* w) {
    ult* self = w->current;
    // Ready first, then pick: the policy compares self with every other ready
    // ult (dfs: by priority), so self may well come back at once. Making self
    // ready before it is suspended is the usual protocol (ult::suspended).
    make_ready(w, self, ready_reason::preempted);
    ult* next = pick(w);
    if (next == self) return w;  // still the one to run: nothing to switch
    // Null: another worker took self between the two steps; it waits for our
    // switch (ult::suspended), and this worker has nothing else to run.
    if (next == nullptr) next = w->idle;
    switch_to(w, self, next);
    return w;
}

worker* run_dummies(worker* w, std::uint32_t n) {
    if (n == 0) return w;
    (void)w;  // fork_dummy reads the current worker: launching may move us
    if (ult* root = fork_dummy(n); root != nullptr) (void)join_ult(root, nullptr, nullptr, nullptr);
    return current_worker();
}

worker* await_turn(worker* w, std::uint32_t n) {
    runtime* rt = g_rt;
    auto turn = rt->policy->space.alloc_turn;
    if (turn == nullptr) return w;
    // Two bounds, both proportional to the allocation's dummy threads: pieces
    // of higher-priority work run first on this worker (many: a thread that
    // stole the top of the order may wait out a whole subproblem that way),
    // and each stretch of waiting while such work runs on another worker
    // (short: that work may itself be waiting for this thread).
    std::uint64_t runs_left = std::uint64_t(n) * tun::alloc_turn_runs_per_dummy;
    const std::int64_t wait_limit = std::min(std::int64_t(n) * tun::alloc_turn_wait_ns_per_dummy, tun::alloc_turn_max_wait_ns);
    std::int64_t waiting_since = -1;
    for (;;) {
        ult* self = w->current;
        // alloc_turn would queue self in the policy, which never holds a
        // pinned ult (policy.hpp, "Pinned ults"): it goes ahead.
        if (self->pinned_worker >= 0) return w;
        bool wait = false;
        ult* next = turn(rt->policy_state, w->index, self, &wait);
        if (next != self) {  // self is queued: run the higher-priority work first
            waiting_since = -1;
            if (rt->nworkers > 1) notify_work(w);
            switch_to(w, self, next);
            if (--runs_left == 0) return w;
            continue;
        }
        if (!wait) return w;
        std::int64_t now = monotonic_ns();
        if (waiting_since < 0) waiting_since = now;
        else if (now - waiting_since >= wait_limit) return w;
        // Spin at first; then give the CPU away between looks, in case the
        // work this thread waits for runs on a worker the OS has descheduled
        // (more workers than CPUs).
        if (now - waiting_since < tun::alloc_turn_spin_ns) {
            for (int i = 0; i < 64; ++i) cpu_relax();
        } else {
            sched_yield();
        }
    }
}

}  // namespace weft::detail
