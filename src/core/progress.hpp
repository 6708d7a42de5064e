// weft::detail — the progress hook: a poll that the scheduler runs for a layer
// whose work arrives from outside the process (a network), beside the timers.
//
// A network transport (src/net's mpi transport) has requests outstanding that
// complete only when someone calls into it. The workers call its poll:
//   1. an idle worker, at every look of its idle loop (worker.cpp), before it
//      spins, yields or parks. While the hook did something within the last
//      tun::progress_active_ns, an idle worker stays at the yield stage instead
//      of parking (a conversation in progress: the next message is likely
//      near, as an MPI rank polls in MPI_Recv); after that a parked worker
//      sleeps no longer than tun::progress_park_ns while a hook is set, then
//      looks again (an idle node must still receive);
//   2. a busy worker, at a scheduling point (pick, where it fires timers), at
//      most every tun::progress_busy_ns: one relaxed load per pick when no hook
//      is set, and a clock read every tun::progress_pick_period picks when one is;
//   3. a ult about to wait for what the hook brings (a receive on a port,
//      src/net/port.cpp), from the ult itself, while its worker has nothing else
//      to run, for at most tun::progress_wait_spin_ns (poll_before_wait): a
//      reply that comes meanwhile costs neither the ult's switch to the idle
//      loop and back nor its wake-up, as an MPI rank polls inside MPI_Recv.
// The poll must not block: it returns at once when another worker is inside it
// (it try-locks its own state) and wakes threads through the core's wake().
// It runs with no primitive's lock held (pick only calls it when it may fire
// timers, for the same reason: the poll takes ports' locks).
//
// Memory ordering: the hook is published with release and read with acquire,
// so its context is visible to the worker that calls it; clear_progress_hook
// waits until no worker is inside the poll (`inside_`, acquire/release), so
// the transport may free its context right after it returns.
#pragma once

#include <cstdint>

#include "base/primitives.hpp"

namespace weft::detail {

// Returns true when it did something (completed a request, received a frame).
// `waiting`: a ult polls for what it waits for (step 3 above): return as soon
// as something came in, leaving the rest of the step to later polls.
using progress_fn = bool (*)(void* ctx, bool waiting);

// Sets the one hook (a second one is refused: false).
[[nodiscard]] bool set_progress_hook(progress_fn fn, void* ctx);
// Removes it and waits until no worker runs it.
void clear_progress_hook();

// What the inline hooks below call; nothing else names them.
extern atomic<progress_fn> g_progress_fn;
void progress_poll_if_due();
// Runs the hook; `now`: the clock if the caller read it, else 0; `waiting` as
// progress_fn's. True if it did something.
bool progress_poll_now(std::int64_t now, bool waiting = false);

inline bool progress_hook_set() { return g_progress_fn.load(memory_order_relaxed) != nullptr; }
// From pick: polls when a hook is set and tun::progress_busy_ns has passed.
inline void progress_at_pick() {
    if (progress_hook_set()) progress_poll_if_due();
}
// From the idle loop: polls now when a hook is set; true if it did something.
inline bool progress_when_idle() { return progress_hook_set() && progress_poll_now(0); }
// True while the hook did something within tun::progress_active_ns: an idle
// worker keeps polling (yielding the CPU between looks) rather than parking.
// Judged on the coarse clock (CLOCK_MONOTONIC_COARSE, a few ms of resolution
// against a 10 ms window), which costs a poll that did something no precise
// clock read.
bool progress_recently_active();

// From a ult (step 3 above): polls the hook until arrived(ctx), while the
// calling worker has nothing else to run, at most tun::progress_wait_spin_ns.
// True if arrived(ctx) held; false at once with no hook set or outside a worker.
bool poll_before_wait(bool (*arrived)(void*), void* ctx);

}  // namespace weft::detail
