#include "core/wait.hpp"

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>

#include "core/clock.hpp"
#include "core/dispatch.hpp"
#include "core/futex.hpp"
#include "core/outside.hpp"
#include "core/runtime.hpp"
#include "core/timer.hpp"

namespace weft::detail {

bool deadline_from_timespec(const timespec* ts, int clock, std::int64_t* out) {
    if (ts == nullptr || !timespec_valid(*ts)) return false;
    __int128 abs = __int128(ts->tv_sec) * kNsPerSecond + ts->tv_nsec;
    if (clock != CLOCK_MONOTONIC) {
        // Convert once: later jumps of the realtime clock do not move the deadline.
        __int128 now_rt = clock_ns(CLOCK_REALTIME);
        abs = monotonic_ns() + (abs - now_rt);
    }
    if (abs > INT64_MAX / 2) abs = INT64_MAX / 2;  // "never", but still ordered
    *out = abs < 0 ? 0 : static_cast<std::int64_t>(abs);
    return true;
}

namespace {

atomic<int> external_wakes{0};  // wakes by kernel threads that are not workers, in progress

// An external kernel thread waits on the record's futex word.
int wait_futex(wait_record* rec, std::uint32_t* lock, std::int64_t deadline_ns) {
    if (lock == nullptr) {
        while (rec->futex.load(memory_order_acquire) == 0) futex_wait(&rec->futex, 0);
        return rec->result;
    }
    spinlock_ref lk(*lock);
    lk.unlock();
    for (;;) {
        if (rec->futex.load(memory_order_acquire) != 0) return rec->result;
        if (deadline_ns != 0 && monotonic_ns() >= deadline_ns) {
            // Time is up: win the race against a waker, or let it finish.
            lk.lock();
            if (rec->linked) {
                rec->unlink(rec);
                rec->linked = false;
                lk.unlock();
                return ETIMEDOUT;
            }
            lk.unlock();
            while (rec->futex.load(memory_order_acquire) == 0) futex_wait(&rec->futex, 0);
            return rec->result;
        }
        futex_wait(&rec->futex, 0, deadline_ns != 0 ? deadline_ns : INT64_MAX);
    }
}

// The same, listed in the registry of outside waits (core/outside.hpp) for
// the deadlock detector while it lasts. Linked before the primitive's lock is
// released, so a detector that sees the waker's side done also sees the wait.
int wait_external(wait_record* rec, std::uint32_t* lock, std::int64_t deadline_ns, const char* what,
                  const void* object) {
    outside_wait ow;
    ow.tid = self_tid();
    ow.what = what;
    ow.object = object;
    ow.timed = deadline_ns != 0;
    ow.rec = rec;
    outside_wait_begin(&ow);
    int rc = wait_futex(rec, lock, deadline_ns);
    outside_wait_end(&ow);
    return rc;
}

}  // namespace

int wait(wait_record* rec, std::uint32_t* lock, std::int64_t deadline_ns, const char* what, const void* object) {
    worker* w = current_worker();
    if (w == nullptr) return wait_external(rec, lock, deadline_ns, what, object);
    ult* self = w->current;
    bool cancellable = self->cancel_point && !self->cancel_disabled && lock != nullptr;
    if (cancellable) [[unlikely]] {
        spinlock_ref g(self->cancel_guard);
        g.lock();
        if (self->cancel_requested.load(memory_order_acquire) != 0) {
            // Cancelled before it could block: leave the queue at once.
            g.unlock();
            if (rec->linked) {
                rec->unlink(rec);
                rec->linked = false;
            }
            spinlock_ref(*lock).unlock();
            self->cancel_point = false;
            return ECANCELED;
        }
        self->cancel_rec = rec;
        self->cancel_lock = lock;
        g.unlock();
    }
    self->wait_kind = what;
    self->wait_object = object;
    if (deadline_ns == 0) {
        block_inline(w, lock);
    } else {
        timer_entry timer;
        timer.deadline = deadline_ns;
        timer.rec = rec;
        timer.lock = lock;
        g_rt->timers->arm(&timer);
        block_inline(w, lock);
        g_rt->timers->cancel(&timer);
    }
    self->wait_kind = nullptr;
    self->wait_object = nullptr;
    if (cancellable) [[unlikely]] {
        // Withdrawn under the guard: a canceller never touches a record or a
        // lock this thread has left.
        spinlock_ref g(self->cancel_guard);
        g.lock();
        self->cancel_rec = nullptr;
        self->cancel_lock = nullptr;
        g.unlock();
        // Only the first wait of a cancellation point can be cancelled: the
        // next (a condition wait relocking its mutex) must complete.
        self->cancel_point = false;
    }
    return rec->result;
}

void cancel_wait(ult* t) {
    t->cancel_requested.store(1, memory_order_release);
    for (;;) {
        spinlock_ref g(t->cancel_guard);
        g.lock();
        wait_record* rec = t->cancel_rec;
        if (rec == nullptr) {  // not in a cancellable wait: it acts at its next cancellation point
            g.unlock();
            return;
        }
        // The waiter holds its lock until it is suspended, and takes the guard
        // with the lock held: try, and let go of the guard while it finishes.
        spinlock_ref lk(*t->cancel_lock);
        if (!lk.try_lock()) {
            g.unlock();
            cpu_relax();
            continue;
        }
        bool won = rec->linked;
        if (won) {
            rec->unlink(rec);
            rec->linked = false;
            rec->result = ECANCELED;
        }
        lk.unlock();
        g.unlock();
        if (won) wake(rec);  // rec stays valid until this wake: nothing else wakes it now
        return;
    }
}

void wake_from(worker* w, wait_record* rec) {
    ult* t = rec->waiter;
    if (t == nullptr) {
        rec->futex.store(1, memory_order_release);
        // rec may be gone now (the waiter saw the store); a wake on its old
        // address is harmless, futex waiters tolerate spurious wake-ups.
        futex_wake(&rec->futex);
        return;
    }
    // A waiter the child of fork() copied from its parent: it has no worker
    // here, and runs nowhere.
    if (t->magic == ult_magic_abandoned) [[unlikely]]
        return;
    if (w != nullptr) {
        make_ready(w, t, ready_reason::woken);
        return;
    }
    // A kernel thread outside the workers (a program's thread, the poller or
    // a helper of src/io) may still be inside make_ready when the thread it
    // woke has run to its end and weft_finalize runs: counted, so that
    // finalize waits for it before it frees the runtime.
    external_wakes.fetch_add(1, memory_order_seq_cst);
    make_ready(nullptr, t, ready_reason::woken);
    external_wakes.fetch_sub(1, memory_order_release);
}

void wait_for_external_wakers() {
    while (external_wakes.load(memory_order_acquire) != 0) sched_yield();
}

void wake(wait_record* rec) { wake_from(current_worker(), rec); }

bool waiter_abandoned(wait_record const* rec) {
    return rec->waiter != nullptr && rec->waiter->magic == ult_magic_abandoned;
}

}  // namespace weft::detail
