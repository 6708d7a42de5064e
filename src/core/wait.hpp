// weft::detail — blocking a flow on a wait record, and waking it.
//
// Every blocking primitive (src/sync, join, sleep) follows one protocol:
//   1. take the primitive's spinlock; decide to wait; link a wait_record
//      (on the waiter's stack) into the primitive's queue;
//   2. call wait(rec, lock, deadline): the lock is released only after the
//      waiter's context is saved (a post-switch action), so a waker, which must
//      take the same lock to unlink the record, can never resume a ult whose
//      registers are still live on its worker;
//   3. a waker takes the lock, unlinks the record, sets rec->result, releases
//      the lock, then calls wake(rec) — never touching rec afterwards, since the
//      waiter may return and pop its frame at once.
// A deadline arms a timer (src/core/timer.hpp) that, when it expires, takes the
// same lock and, if the record is still linked, unlinks it through rec->unlink
// and wakes it with ETIMEDOUT. Exactly one of waker and timer wins: the one that
// finds rec->linked under the lock.
//
// An external kernel thread (not a weft worker) waits on rec->futex instead.
#pragma once

#include <cstdint>

#include "base/primitives.hpp"
#include "core/clock.hpp"  // every deadline here is on its monotonic clock
#include "core/current.hpp"

namespace weft::detail {

struct ult;


struct wait_record {
    wait_record() : waiter(current_ult()) {}
    wait_record(const wait_record&) = delete;
    wait_record& operator=(const wait_record&) = delete;

    wait_record* next = nullptr;
    wait_record* prev = nullptr;
    ult* waiter;                             // null: an external kernel thread
    atomic<std::uint32_t> futex{0};          // external waiters: 1 once woken
    int result = 0;                          // 0, or ETIMEDOUT when the timer won
    bool linked = false;                     // guarded by the primitive's lock
    std::uintptr_t tag = 0;                  // primitive-specific (rwlock: reader/writer)
    void* owner_id = nullptr;                // the waiter as a lock owner (owner_self())
    void* queue = nullptr;                   // primitive-specific, for unlink
    void (*unlink)(wait_record*) = nullptr;  // removes rec from its queue (lock held)
};

// Blocks the caller until wake(rec) (or the deadline, if non-zero: absolute
// CLOCK_MONOTONIC nanoseconds). `lock` (a spinlock word) is held on entry and is
// released once the caller is suspended. lock may be null when the waker finds
// rec by other means (join): then the wake may even come before the caller
// has blocked, and wait returns at once; no deadline is allowed then. `what`/`object` describe the wait for
// the deadlock report. Returns rec->result.
int wait(wait_record* rec, std::uint32_t* lock, std::int64_t deadline_ns, const char* what,
         const void* object);

// Makes rec's waiter runnable. Call after unlinking rec and releasing the lock.
void wake(wait_record* rec);
// The same, for a caller that already knows its worker (null: external).
void wake_from(struct worker* w, wait_record* rec);

// Whether rec's waiter is a weft thread that the child of fork() copied from
// its parent: it never runs in the child, so a mutex must not be handed to it
// (the unlock in a pthread_atfork child handler would give the mutex away).
bool waiter_abandoned(wait_record const* rec);
// Returns once no kernel thread outside the workers is inside a wake
// (weft_finalize, before it frees the runtime).
void wait_for_external_wakers();

// Requests the cancellation of t (ult::cancel_requested) and, if t is blocked
// in a cancellable wait (ult::cancel_point), takes it out as a timer would,
// wait() returning ECANCELED. A wait with no lock (join) is not cancellable.
void cancel_wait(ult* t);

// Converts an absolute deadline on `clock` (CLOCK_REALTIME or CLOCK_MONOTONIC)
// to absolute CLOCK_MONOTONIC ns. False if ts is not a valid timespec.
bool deadline_from_timespec(const struct timespec* ts, int clock, std::int64_t* out);

}  // namespace weft::detail
