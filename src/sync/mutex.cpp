// weft_mutex_t: a blocking mutex whose waiters are served first come, first
// served, with direct hand-off: unlock gives the mutex to the first waiter
// instead of letting a newcomer barge in. With user-level threads a hand-off
// costs one switch (tens of ns), so the throughput that barging buys kernel
// mutexes is small here, while hand-off makes waits bounded and fair.
//
// state_: 0 unlocked, 1 locked, 2 locked and maybe waited on (slow unlock).
// Fast paths (uncontended lock/unlock) are one CAS each, no spinlock.
//
// Memory ordering: lock's CAS is acquire and unlock's CAS/store is release, so
// the critical sections are ordered; on hand-off, the release/acquire pair of
// the spinlock (unlocker releases it, the woken waiter's wake path acquires the
// scheduler's queue lock after it) carries the order to the new owner.
#include "sync/mutex.hpp"

#include <cerrno>

#include "core/runtime.hpp"
#include "sync/wait_list.hpp"

namespace weft::detail {

namespace {

thread_local char external_marker;

constexpr std::uint32_t type_mask = 3;
constexpr std::uint32_t depth_one = 4;  // recursion depth lives above the type bits
constexpr std::uint32_t depth_max = 0xffffffffu / depth_one;

std::uint32_t type_of(const weft_mutex_t* m) { return m->kind_ & type_mask; }
std::uint32_t depth_of(const weft_mutex_t* m) { return m->kind_ / depth_one; }

atomic_ref<std::uint32_t> state(weft_mutex_t* m) { return atomic_ref<std::uint32_t>(m->state_); }
atomic_ref<void*> owner(weft_mutex_t* m) { return atomic_ref<void*>(m->owner_); }

void unlink_waiter(wait_record* rec) {
    auto* m = static_cast<weft_mutex_t*>(rec->queue);
    wait_list(m->head_, m->tail_).remove(rec);
}

// Spins briefly before queueing when another worker holds the mutex: a
// critical section of a few hundred ns ends sooner than a park/hand-off.
bool spin_acquire(weft_mutex_t* m) {
    if (g_rt == nullptr || g_rt->nworkers == 1) return false;
    for (int i = 0; i < 64; ++i) {
        std::uint32_t expected = 0;
        if (state(m).load(memory_order_relaxed) == 0 &&
            state(m).compare_exchange_weak(expected, 1, memory_order_acquire, memory_order_relaxed))
            return true;
        cpu_relax();
    }
    return false;
}

}  // namespace

void* owner_self() {
    worker* w = current_worker();
    return w != nullptr ? static_cast<void*>(w->current) : static_cast<void*>(&external_marker);
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
    if (spin_acquire(m)) {
        owner(m).store(self, memory_order_relaxed);
        return 0;
    }
    spinlock_ref lk(m->lock_);
    lk.lock();
    if (state(m).exchange(2, memory_order_acquire) == 0) {
        // Released meanwhile, and nobody queued (they would hold lk): ours.
        // State stays 2, so our unlock takes the slow path once: harmless.
        lk.unlock();
        owner(m).store(self, memory_order_relaxed);
        return 0;
    }
    if (deadline_ns != 0 && deadline_ns <= monotonic_ns()) {
        lk.unlock();
        return ETIMEDOUT;
    }
    wait_record rec;
    rec.owner_id = self;  // who becomes owner on hand-off
    wait_list(m->head_, m->tail_).push_back(&rec, m, &unlink_waiter);
    // On a normal wake-up the unlocker has made us the owner already.
    return wait(&rec, &m->lock_, deadline_ns, "weft_mutex_lock", m);
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
    if (next == nullptr) {
        state(m).store(0, memory_order_release);
        lk.unlock();
        return 0;
    }
    // Hand-off: the mutex stays locked, now owned by the first waiter.
    state(m).store(q.empty() ? 1 : 2, memory_order_relaxed);
    owner(m).store(next->owner_id, memory_order_relaxed);
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
