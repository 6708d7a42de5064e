// weft_cond_t: condition variable. Waiters queue FIFO; signal wakes the oldest.
// A waiter returns 0 after a signal or broadcast chose it, or after a signal
// handler ran while it waited under the shim (a spurious wake-up; callers
// loop on their predicate).
//
// Lock order: the condition's spinlock, then the mutex's (in wait). Signal and
// broadcast take only the condition's, so there is no cycle.
#include <cerrno>

#include "core/interrupt.hpp"
#include "core/runtime.hpp"
#include "sync/mutex.hpp"
#include "sync/wait_list.hpp"

namespace weft::detail {
namespace {

void unlink_waiter(wait_record* rec) {
    auto* c = static_cast<weft_cond_t*>(rec->queue);
    wait_list q(c->head_, c->tail_);
    q.remove(rec);
    if (q.empty()) c->mutex_ = nullptr;
}

// A signal handler that runs during the wait (core/interrupt.hpp) ends it:
// the handler runs with the mutex released, as on a glibc thread, and the
// wait returns 0 once the mutex is locked again (a spurious wake-up, which
// POSIX allows; the caller's loop on its predicate waits again).
int cond_wait(weft_cond_t* c, weft_mutex_t* m, std::int64_t deadline_ns) {
    ensure_runtime();
    void* self = owner_self();
    if (atomic_ref<void*>(m->owner_).load(memory_order_relaxed) != self) return EPERM;
    wait_record rec;
    interruptible_wait intr;
    spinlock_ref lk(c->lock_);
    lk.lock();
    while (intr.register_first(&rec, &c->lock_)) lk.lock();
    wait_list q(c->head_, c->tail_);
    if (!q.empty() && c->mutex_ != m) {
        lk.unlock();
        return EINVAL;
    }
    if (intr.interrupted()) {
        lk.unlock();
        (void)take_signals(false);
        return 0;
    }
    c->mutex_ = m;
    q.push_back(&rec, c, &unlink_waiter);
    // Release the mutex only once we are queued: a signal sent right after the
    // unlock finds us.
    std::uint32_t depth = mutex_release_all(m, self);
    int rc = wait(&rec, &c->lock_, deadline_ns, "weft_cond_wait", c);
    if (rc == EINTR) {
        (void)take_signals(false);
        rc = 0;
    }
    mutex_reacquire(m, owner_self(), depth);
    return rc;
}

}  // namespace
}  // namespace weft::detail

using namespace weft::detail;

extern "C" {

WEFT_API int weft_condattr_init(weft_condattr_t* attr) {
    if (attr == nullptr) return EINVAL;
    attr->clock = CLOCK_REALTIME;
    return 0;
}
WEFT_API int weft_condattr_destroy(weft_condattr_t* attr) { return attr == nullptr ? EINVAL : 0; }
WEFT_API int weft_condattr_setclock(weft_condattr_t* attr, clockid_t clock) {
    if (attr == nullptr || (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)) return EINVAL;
    attr->clock = static_cast<int>(clock);
    return 0;
}
WEFT_API int weft_condattr_getclock(const weft_condattr_t* attr, clockid_t* clock) {
    if (attr == nullptr || clock == nullptr) return EINVAL;
    *clock = attr->clock;
    return 0;
}

WEFT_API int weft_cond_init(weft_cond_t* c, const weft_condattr_t* attr) {
    if (c == nullptr) return EINVAL;
    *c = weft_cond_t{0, attr != nullptr ? attr->clock : CLOCK_REALTIME, nullptr, nullptr, nullptr, {0, 0}};
    return 0;
}

WEFT_API int weft_cond_destroy(weft_cond_t* c) {
    if (c == nullptr) return EINVAL;
    spinlock_ref lk(c->lock_);
    lk.lock();
    bool busy = c->head_ != nullptr;
    lk.unlock();
    return busy ? EBUSY : 0;
}

WEFT_API int weft_cond_wait(weft_cond_t* c, weft_mutex_t* m) {
    if (c == nullptr || m == nullptr) return EINVAL;
    return cond_wait(c, m, 0);
}

WEFT_API int weft_cond_timedwait(weft_cond_t* c, weft_mutex_t* m, const struct timespec* abstime) {
    if (c == nullptr || m == nullptr) return EINVAL;
    std::int64_t deadline = 0;
    if (!deadline_from_timespec(abstime, c->clock_, &deadline)) return EINVAL;
    if (deadline == 0) deadline = 1;
    return cond_wait(c, m, deadline);
}

WEFT_API int weft_cond_signal(weft_cond_t* c) {
    if (c == nullptr) return EINVAL;
    spinlock_ref lk(c->lock_);
    lk.lock();
    wait_list q(c->head_, c->tail_);
    wait_record* rec = q.pop_front();
    if (q.empty()) c->mutex_ = nullptr;
    lk.unlock();
    if (rec != nullptr) wake(rec);
    return 0;
}

WEFT_API int weft_cond_broadcast(weft_cond_t* c) {
    if (c == nullptr) return EINVAL;
    spinlock_ref lk(c->lock_);
    lk.lock();
    auto* all = static_cast<wait_record*>(c->head_);
    for (wait_record* r = all; r != nullptr; r = r->next) r->linked = false;
    c->head_ = c->tail_ = nullptr;
    c->mutex_ = nullptr;
    lk.unlock();
    while (all != nullptr) {
        wait_record* next = all->next;  // read before wake: the record dies with its waiter
        wake(all);
        all = next;
    }
    return 0;
}

}  // extern "C"
