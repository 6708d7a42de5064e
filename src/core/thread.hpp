// weft::detail — a thread's lifetime (thread.cpp): creating and joining ults
// from inside the runtime (the C API, the dummy threads of dfs, the filament
// servers), ending and recycling them. The inline fast paths of the C API's
// hot calls are in core/thread_inline.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "weft/weft.h"

namespace weft::detail {

struct worker;
struct ult;
struct runtime;

// Creates (but does not start) a ult running fn(arg), with a handle (u->handle)
// that is joinable, or already claimed if attr asks for a detached thread. If
// extra > 0, reserves that many bytes (64-byte aligned) just below the control
// block at the top of the ult's stack and returns their address in *extra_out:
// room for a C++ closure, with no allocation of its own. w: the calling worker
// or null. attr is trusted (the C API checks it: check_attr in thread_api.cpp).
// EAGAIN: no stack, or no handle left.
[[nodiscard]] int create_ult(worker* w, const weft_attr_t* attr, void* (*fn)(void*), void* arg, std::size_t extra,
                             void** extra_out, ult** out);
// The first function of every ult's own stack (make_context's entry): calls
// the thread's function and ends the thread with its result. The shim's
// forced unwinding (pthread_exit, cancellation) stops at its frame.
void ult_entry(void* arg) noexcept;
// Hands a created ult to the scheduler (the caller may be preempted by it,
// unless the caller is pinned). To run it on one worker only, set
// u->pinned_worker before launching it: the core then keeps it in that
// worker's inbox, outside the policy (src/sched/policy.hpp, "Pinned ults").
void launch_ult(worker* w, ult* u);
// Waits, on a weft thread, for the end of t (claimed by the caller) in a wait
// a signal handler can run in (core/interrupt.hpp: hooks installed): the
// handler runs, then the join waits again.
void join_wait_interruptible(ult* t);
// Joins t, a joinable ult whose handle nobody else was given: claims it, waits
// for it to end, collects its result (retval, and collect(storage, ctx) if
// given), recycles it. EINVAL if its handle was already claimed.
[[nodiscard]] int join_ult(ult* t, void** retval, void (*collect)(void*, void*), void* ctx);
// Main waits until it is the only ult left.
void wait_for_other_ults();
// The overflow report for u, found when u switched out (see switch_inline).
[[noreturn]] void report_overflow_at_switch(ult* u);
// exit_current's step before the last switch: returns the blocked joiner, if any.
struct wait_record* leave(worker* w, ult* self);
// Detaches t, whose handle the caller has claimed: t is recycled when it ends,
// or now if it has ended already.
void detach_claimed(ult* t);
// Post-switch step for u, which has switched away for good: publishes its
// end, or recycles it if detached.
void finish(worker* w, ult* u);
// Gives u's handle, storage and stack back (release_inline, out of line).
void release_ult(worker* w, ult* u);
// Live ults now (sum of the per-worker deltas; exact when no worker runs).
std::int64_t live_ults(runtime* rt);

}  // namespace weft::detail
