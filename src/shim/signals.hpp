// Signals per weft thread under libweft-pthread (signals.cpp): the pieces the
// shim's start-up, fork handlers and delivery points call.
#pragma once

#include <signal.h>

#include <cstdint>

#include "base/primitives.hpp"
#include "core/ult.hpp"

namespace weft::shim {

// Before weft_init, on the process's first kernel thread: blocks the routed
// signals there, so that every worker (and every kernel thread the runtime
// starts) inherits the block; returns the mask the program had set so far.
std::uint64_t block_routed_signals();
// After weft_init: main's mask (the one block_routed_signals returned), and the
// signal thread that takes every process-directed signal and routes it.
void start_signal_routing(std::uint64_t main_mask);

// Signals sent to the process that no thread has taken yet (bit n-1 for
// signal n). Written under the routing lock (signals.cpp); read without it by
// the delivery points' first look.
extern detail::atomic<std::uint64_t> g_process_pending;

// deliver_pending_signals once it has seen a signal to run (out of line: the
// delivery points are on paths such as pthread_join, where none is pending).
void deliver_pending_signals_now(detail::ult* u);

// A delivery point of weft thread `u` (the caller): runs the action of each
// signal pending for it, or for the process, that it does not block. Three
// loads, inline, when none is.
inline void deliver_pending_signals(detail::ult* u) {
    std::uint64_t const open = ~u->sig_mask.load(detail::memory_order_relaxed);
    if (((u->sig_pending.load(detail::memory_order_relaxed) | g_process_pending.load(detail::memory_order_relaxed)) &
         open) != 0)
        deliver_pending_signals_now(u);
}

// For the life of the object, the calling weft thread's own mask is its
// kernel thread's, as a call that starts a program hands it on (exec.cpp);
// on a kernel thread outside weft it does nothing.
class program_mask {
public:
    program_mask();
    ~program_mask();
    program_mask(const program_mask&) = delete;
    program_mask& operator=(const program_mask&) = delete;

private:
    bool set_ = false;
    sigset_t saved_;
};

// ppoll, pselect and epoll_pwait with a signal mask on a weft thread: for the
// life of the object the calling weft thread's mask is `mask` (the call then
// waits without one, parked, and a signal the mask lets through interrupts it
// as any other); at the end, signals that mask lets through run their
// handlers under it, as the kernel runs them before it restores the mask, and
// then the thread's own mask is back. Null mask, or a kernel thread outside
// weft: nothing (applied() false: the call takes the mask itself).
class call_mask {
public:
    explicit call_mask(const sigset_t* mask);
    ~call_mask();
    call_mask(const call_mask&) = delete;
    call_mask& operator=(const call_mask&) = delete;
    bool applied() const { return u_ != nullptr; }

private:
    detail::ult* u_ = nullptr;
    std::uint64_t saved_ = 0;
};

// fork(): the routing lock is held across the copy; the child, which has no
// signal thread, starts its own, with no signal pending.
void signals_fork_prepare();
void signals_fork_parent();
void signals_fork_child();

}  // namespace weft::shim
