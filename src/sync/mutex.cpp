// weft_mutex_t: a blocking mutex. Waiters queue in arrival order; unlock
// wakes the first waiter and leaves the mutex free, so that a running thread
// may take it before the woken one has run (barging). A woken waiter that
// finds the mutex taken queues again at the front. A waiter that has kept
// losing so for longer than tun::mutex_handoff_after_ns is handed the mutex
// directly instead, so every wait stays bounded (Go's sync.Mutex "starvation
// mode" works the same way).
//
// Why not always hand off: the new owner is not running. Until its worker
// switches to it, or for a kernel thread outside weft until the kernel wakes
// it from its futex, nobody holds the critical section and everybody else
// queues; the thread that unlocked relocks at once, queues behind it, and the
// queue never drains: a lock convoy. With always-hand-off, 12 threads looping
// on lock/unlock on 2 workers passed the mutex through the queue on every
// operation once the convoy formed (all of them: 226,000 of 240,000 locks),
// each hand-off waiting for its receiver to run (8 us for a weft thread, 14 us
// for a kernel thread, means on a loaded 2-core host); with barging they run
// at the uncontended rate. See docs/design/core.md, "Mutexes".
//
// state_: 0 unlocked, 1 locked, 2 locked and maybe waited on (slow unlock).
// Fast paths (uncontended lock/unlock) are one CAS each, no spinlock.
// Invariant: while the queue is not empty, state_ is 2, or a woken waiter is
// on its way to retry under the spinlock (it then sets 2 or takes the mutex).
//
// Memory ordering: lock's CAS/exchange is acquire and unlock's CAS/store is
// release, so the critical sections are ordered; on a direct hand-off, the
// release/acquire pair of the spinlock (unlocker releases it, the woken
// waiter's wake path acquires the scheduler's queue lock after it) carries the
// order to the new owner.
#include "sync/mutex.hpp"

#include <cerrno>

#include "core/clock.hpp"
#include "core/dispatch.hpp"
#include "core/interrupt.hpp"
#include "core/outside.hpp"
#include "core/runtime.hpp"
#include "core/tunables.hpp"
#include "sync/wait_list.hpp"

namespace weft::detail {

namespace {

constexpr std::uint32_t type_mask = 3;
constexpr std::uint32_t depth_one = 4;  // recursion depth lives above the type bits
constexpr std::uint32_t depth_max = 0xffffffffu / depth_one;

std::uint32_t type_of(const weft_mutex_t* m) { return m->kind_ & type_mask; }
std::uint32_t depth_of(const weft_mutex_t* m) { return m->kind_ / depth_one; }

atomic_ref<std::uint32_t> state(weft_mutex_t* m) { return atomic_ref<std::uint32_t>(m->state_); }
atomic_ref<void*> owner(weft_mutex_t* m) { return atomic_ref<void*>(m->owner_); }

// A waiter's rec.tag: tag_never_lost until it has been woken and found the
// mutex taken, then the CLOCK_MONOTONIC time of that first loss; the unlocker
// sets it to 0 when it hands the waiter the mutex.
constexpr std::uintptr_t tag_never_lost = 1;

void unlink_waiter(wait_record* rec) {
    auto* m = static_cast<weft_mutex_t*>(rec->queue);
    wait_list(m->head_, m->tail_).remove(rec);
}

// Spins briefly before queueing when another worker holds the mutex: a
// critical section of a few hundred ns ends sooner than a park/hand-off.
// Takes the mutex in state `taken`: a woken waiter takes it in state 2, since
// others may still be queued behind it and only its unlock can wake them.
bool spin_acquire(weft_mutex_t* m, std::uint32_t taken) {
    if (g_rt == nullptr || g_rt->nworkers == 1) return false;
    for (int i = 0; i < tun::mutex_spins; ++i) {
        std::uint32_t expected = 0;
        if (state(m).load(memory_order_relaxed) == 0 &&
            state(m).compare_exchange_weak(expected, taken, memory_order_acquire, memory_order_relaxed))
            return true;
        cpu_relax();
    }
    return false;
}

// A wait that a signal interrupted: its handlers run, and the wait goes on.
void take_signals_and_wait_again(interruptible_wait& intr) {
    (void)take_signals(false);
    intr.reset();
}

}  // namespace

void* owner_self() {
    worker* w = current_worker();
    return w != nullptr ? static_cast<void*>(w->current) : outside_owner_id(self_tid());
}

int mutex_lock(weft_mutex_t* m, void* self, std::int64_t deadline_ns) {
    std::uint32_t expected = 0;
    if (state(m).compare_exchange_strong(expected, 1, memory_order_acquire, memory_order_relaxed)) {
        owner(m).store(self, memory_order_relaxed);
        return 0;
    }
    if (owner(m).load(memory_order_relaxed) == self) {
        if (type_of(m) == WEFT_MUTEX_RECURSIVE) {
            if (depth_of(m) >= depth_max) return EAGAIN;
            m->kind_ += depth_one;
            return 0;
        }
        if (type_of(m) == WEFT_MUTEX_ERRORCHECK) return EDEADLK;
        // A normal mutex relocked by its owner deadlocks, as Pthreads says; the
        // deadlock detector will report it.
    }
    wait_record rec;
    rec.owner_id = self;  // who becomes owner on a direct hand-off
    // A signal handler runs during the wait (core/interrupt.hpp), then the
    // wait goes on: a mutex lock never fails with EINTR.
    interruptible_wait intr;
    bool queued = false;     // we have been in the queue (and woken)
    std::int64_t since = 0;  // when we first lost the mutex after a wake (0: not yet)
    for (;;) {
        if (spin_acquire(m, queued ? 2 : 1)) break;
        spinlock_ref lk(m->lock_);
        lk.lock();
        wait_list q(m->head_, m->tail_);
        // Taken here if free: a woken waiter and a newcomer alike. Otherwise
        // state 2 makes the holder's unlock wake the front of the queue.
        if (state(m).exchange(2, memory_order_acquire) == 0) {
            if (q.empty()) state(m).store(1, memory_order_relaxed);  // our unlock stays fast
            lk.unlock();
            break;
        }
        if (deadline_ns != 0 && deadline_ns <= monotonic_ns()) {
            lk.unlock();
            return ETIMEDOUT;
        }
        if (intr.register_first(&rec, &m->lock_)) continue;  // released the lock: try again
        if (intr.interrupted()) {
            lk.unlock();
            take_signals_and_wait_again(intr);
            continue;
        }
        if (!queued) {
            queued = true;
            q.push_back(&rec, m, &unlink_waiter);
            rec.tag = tag_never_lost;
        } else {
            // Woken but beaten to it: keep our place, and from the first such
            // loss on, count the time towards a direct hand-off. The clock is
            // read only here, never on a wake that takes the mutex.
            q.push_front(&rec, m, &unlink_waiter);
            if (since == 0) since = monotonic_ns();
            rec.tag = static_cast<std::uintptr_t>(since);
        }
        rec.futex.store(0, memory_order_relaxed);  // a kernel thread outside weft waits on it again
        int rc = wait(&rec, &m->lock_, deadline_ns, "weft_mutex_lock", m);
        if (rec.tag == 0) return 0;  // the unlocker made us the owner
        if (rc == EINTR) {
            take_signals_and_wait_again(intr);
            continue;
        }
        if (rc != 0) return rc;
    }
    owner(m).store(self, memory_order_relaxed);
    return 0;
}

int mutex_unlock(weft_mutex_t* m, void* self) {
    if (owner(m).load(memory_order_relaxed) != self) {
        if (type_of(m) != WEFT_MUTEX_NORMAL || state(m).load(memory_order_relaxed) == 0) return EPERM;
        // A normal mutex unlocked by a non-owner: undefined in Pthreads; we
        // unlock it (glibc does too) rather than wedge the program.
    }
    if (depth_of(m) > 0) {
        m->kind_ -= depth_one;
        return 0;
    }
    owner(m).store(nullptr, memory_order_relaxed);
    std::uint32_t expected = 1;
    if (state(m).compare_exchange_strong(expected, 0, memory_order_release, memory_order_relaxed)) return 0;
    spinlock_ref lk(m->lock_);
    lk.lock();
    wait_list q(m->head_, m->tail_);
    wait_record* next = q.pop_front();
    while (next != nullptr && waiter_abandoned(next)) next = q.pop_front();
    if (next == nullptr) {
        state(m).store(0, memory_order_release);
        lk.unlock();
        return 0;
    }
    if (next->tag != tag_never_lost &&
        monotonic_ns() - static_cast<std::int64_t>(next->tag) >= tun::mutex_handoff_after_ns) {
        // It has waited long enough: the mutex stays locked, now its.
        state(m).store(q.empty() ? 1 : 2, memory_order_relaxed);
        owner(m).store(next->owner_id, memory_order_relaxed);
        next->tag = 0;
    } else {
        // Free for whoever comes first; the woken waiter retries (lock above).
        state(m).store(0, memory_order_release);
    }
    lk.unlock();
    wake(next);
    return 0;
}

std::uint32_t mutex_release_all(weft_mutex_t* m, void* self) {
    std::uint32_t depth = depth_of(m);
    m->kind_ -= depth * depth_one;
    (void)mutex_unlock(m, self);
    return depth;
}

void mutex_reacquire(weft_mutex_t* m, void* self, std::uint32_t depth) {
    (void)mutex_lock(m, self, 0);
    m->kind_ += depth * depth_one;
}

}  // namespace weft::detail

using namespace weft::detail;

extern "C" {

WEFT_API int weft_mutexattr_init(weft_mutexattr_t* attr) {
    if (attr == nullptr) return EINVAL;
    attr->type = WEFT_MUTEX_DEFAULT;
    return 0;
}
WEFT_API int weft_mutexattr_destroy(weft_mutexattr_t* attr) { return attr == nullptr ? EINVAL : 0; }
WEFT_API int weft_mutexattr_settype(weft_mutexattr_t* attr, int type) {
    if (attr == nullptr || type < WEFT_MUTEX_NORMAL || type > WEFT_MUTEX_ERRORCHECK) return EINVAL;
    attr->type = type;
    return 0;
}
WEFT_API int weft_mutexattr_gettype(const weft_mutexattr_t* attr, int* type) {
    if (attr == nullptr || type == nullptr) return EINVAL;
    *type = attr->type;
    return 0;
}

WEFT_API int weft_mutex_init(weft_mutex_t* m, const weft_mutexattr_t* attr) {
    if (m == nullptr) return EINVAL;
    int type = attr != nullptr ? attr->type : WEFT_MUTEX_DEFAULT;
    if (type < WEFT_MUTEX_NORMAL || type > WEFT_MUTEX_ERRORCHECK) return EINVAL;
    *m = weft_mutex_t{0, static_cast<std::uint32_t>(type), nullptr, 0, 0, nullptr, nullptr};
    return 0;
}

WEFT_API int weft_mutex_destroy(weft_mutex_t* m) {
    if (m == nullptr) return EINVAL;
    if (state(m).load(memory_order_acquire) != 0 || m->head_ != nullptr) return EBUSY;
    return 0;
}

WEFT_API int weft_mutex_lock(weft_mutex_t* m) {
    if (m == nullptr) return EINVAL;
    ensure_runtime();
    return mutex_lock(m, owner_self(), 0);
}

WEFT_API int weft_mutex_trylock(weft_mutex_t* m) {
    if (m == nullptr) return EINVAL;
    ensure_runtime();
    void* self = owner_self();
    std::uint32_t expected = 0;
    if (state(m).compare_exchange_strong(expected, 1, memory_order_acquire, memory_order_relaxed)) {
        owner(m).store(self, memory_order_relaxed);
        return 0;
    }
    if (type_of(m) == WEFT_MUTEX_RECURSIVE && owner(m).load(memory_order_relaxed) == self) {
        if (depth_of(m) >= depth_max) return EAGAIN;
        m->kind_ += depth_one;
        return 0;
    }
    return EBUSY;
}

WEFT_API int weft_mutex_timedlock(weft_mutex_t* m, const struct timespec* abstime) {
    if (m == nullptr) return EINVAL;
    std::int64_t deadline = 0;
    if (!deadline_from_timespec(abstime, CLOCK_REALTIME, &deadline)) return EINVAL;
    ensure_runtime();
    if (deadline == 0) deadline = 1;  // 0 means "no deadline" internally
    return mutex_lock(m, owner_self(), deadline);
}

WEFT_API int weft_mutex_unlock(weft_mutex_t* m) {
    if (m == nullptr) return EINVAL;
    return mutex_unlock(m, owner_self());
}

}  // extern "C"
