// weft::detail — thread lifetime: the paths the C API's hot calls inline.
//
// create -> start -> (run) -> exit -> join | detach -> release
//
// Forced inline into weft_thread_create, weft_thread_join and
// weft_thread_exit (thread_api.cpp) for the reason dispatch.hpp gives: each
// frame between the user's call and the context switch is one mispredicted
// return more after the switch. The out-of-line parts are in thread.cpp.
#pragma once

#include <cstdint>
#include <cstdlib>

#include "core/dispatch.hpp"
#include "core/interrupt.hpp"
#include "core/keys.hpp"
#include "core/profile.hpp"
#include "core/runtime.hpp"
#include "core/thread.hpp"
#include "core/wait.hpp"

namespace weft::detail {

// Runs t's key destructors and ends it with retval. Main instead waits for
// the other threads and ends the process (Pthreads semantics).
[[noreturn, gnu::always_inline]] inline void end_thread(ult* self, void* retval) {
    if (self->key_values != nullptr) run_key_destructors(self);
    self->retval = retval;
    if (self->kind == ult_kind::main) {
        wait_for_other_ults();
        std::exit(0);
    }
    if (self->tp != nullptr) g_own_tp_exit(self);
    exit_inline(current_worker());
}

// Hands u to the scheduler. The policy decides whether u runs at once
// (start_inline), unless the pinned-ult rules of src/sched/policy.hpp apply: a
// pinned u goes to its worker's inbox, and the child of a pinned parent is
// made ready through the policy (ready(.., spawned)) while the parent goes on.
// So is every child on a dropped worker (core/active.hpp): it is left to the
// active workers, and the parent goes on until its next scheduling point.
// An external caller's u goes to the inject queue.
[[gnu::always_inline]] inline void launch_inline(worker* w, ult* u) {
    u->started = true;
    // Unpinned is -1: the AND is negative only if neither u nor its parent is
    // pinned (one test for both on the spawn path).
    if (w == nullptr || (u->pinned_worker & w->current->pinned_worker) >= 0 || w->dropped.load(memory_order_relaxed))
        make_ready(w, u, ready_reason::spawned);
    else
        start_inline(w, u);
}

// Gives u's handle, storage and stack back (after its join, or at the end of
// a detached u). w: the calling worker, or null.
[[gnu::always_inline]] inline void release_inline(worker* w, ult* u) {
    runtime* rt = g_rt;
    // The handle first: from here on every copy of it is stale.
    rt->handles.release(w != nullptr ? &w->handles : nullptr, u->handle);
    if (u->storage_release != nullptr) u->storage_release(u->storage);
    if (u->key_values != nullptr) free_key_values(u);
    arch::san_fiber_destroy(&u->san);
    arch::stack s = u->stack;
    u->magic = 0;
    u->~ult();
    rt->stacks->release(s, w != nullptr ? &w->stacks : nullptr);
}

// Blocks the caller (on worker w), whose wait_record t's join_word holds,
// until t's end or an interruption wakes it. The wake may come before it is
// suspended: see ult::suspended.
[[gnu::always_inline]] inline void block_joining(worker* w, ult* t) {
    ult* self = w->current;
    self->wait_kind = "weft_thread_join";
    self->wait_object = t;
    block_inline(w, nullptr);
    self->wait_kind = nullptr;
    self->wait_object = nullptr;
}

// Joins t, whose handle the caller has claimed: waits for t's end, collects
// its result, recycles it. w: the calling worker, or null.
[[gnu::always_inline]] inline void join_claimed_inline(worker* w, ult* t, void** retval, void (*collect)(void*, void*),
                                                       void* ctx) {
    std::uintptr_t s = t->join_word.load(memory_order_acquire);
    if (s == join_running && w != nullptr && signal_hooks_installed()) [[unlikely]] {
        join_wait_interruptible(t);
    } else if (s == join_running) {
        wait_record rec;
        // On a runtime of one worker the child can only exit on this worker,
        // that is, not while we run, and the claim keeps every other joiner
        // and detacher away: a plain store publishes us (the locked CAS would
        // drain every store of the create before it: ~5 ns of the ~60 of a
        // create+join).
        bool published;
        if (w != nullptr && g_rt->nworkers == 1) {
            t->join_word.store(reinterpret_cast<std::uintptr_t>(&rec), memory_order_relaxed);
            published = true;
        } else {
            published = t->join_word.compare_exchange_strong(s, reinterpret_cast<std::uintptr_t>(&rec),
                                                             memory_order_acq_rel, memory_order_acquire);
        }
        if (published) {
            // The ending ult wakes us (or switches straight to us). The wake
            // may come before we are suspended: see ult::suspended.
            if (w != nullptr) {
                block_joining(w, t);
            } else {
                wait(&rec, nullptr, 0, "weft_thread_join", t);
            }
        }
    }
    // exiting: its last switch is in progress; finished follows within instructions.
    while (t->join_word.load(memory_order_acquire) != join_finished) cpu_relax();
    if (retval != nullptr) *retval = t->retval;
    if (collect != nullptr) collect(t->storage, ctx);
    w = current_worker();
    if (g_measure && w != nullptr) profile_join(w, w->current, t);
    release_inline(w, t);
}

}  // namespace weft::detail
