// weft_sem_t: counting semaphore. A post with waiters hands its unit straight
// to the oldest waiter (the value stays 0), so waiters are served FIFO.
#include <cerrno>

#include "core/clock.hpp"
#include "core/interrupt.hpp"
#include "core/runtime.hpp"
#include "sync/wait_list.hpp"

namespace weft::detail {
namespace {

void unlink_waiter(wait_record* rec) {
    auto* s = static_cast<weft_sem_t*>(rec->queue);
    wait_list(s->head_, s->tail_).remove(rec);
}

// Under s->lock_: takes a unit if there is one.
bool take_unit(weft_sem_t* s) {
    if (s->value_ == 0) return false;
    --s->value_;
    return true;
}

// sem_wait's wait when signal hooks are installed (the caller holds s's lock
// and found no unit): a signal handler that runs while it waits
// (core/interrupt.hpp) ends it with EINTR, as on Linux, where glibc's
// sem_wait is a futex wait: a timed wait always, an untimed one unless every
// handler had SA_RESTART (then the kernel restarts it, and so does this loop).
[[gnu::noinline]] int sem_wait_interruptible(weft_sem_t* s, std::int64_t deadline_ns) {
    spinlock_ref lk(s->lock_);
    wait_record rec;
    interruptible_wait intr;
    for (;;) {
        if (deadline_ns != 0 && deadline_ns <= monotonic_ns()) {
            lk.unlock();
            return ETIMEDOUT;
        }
        int rc = EINTR;
        if (intr.register_first(&rec, &s->lock_)) {
            rc = 0;  // released the lock: look again
        } else if (intr.interrupted()) {
            lk.unlock();
        } else {
            wait_list(s->head_, s->tail_).push_back(&rec, s, &unlink_waiter);
            rc = wait(&rec, &s->lock_, deadline_ns, "weft_sem_wait", s);
            if (rc != EINTR) return rc;
        }
        if (rc == EINTR) {
            if (take_signals(deadline_ns == 0) == EINTR) return EINTR;
            intr.reset();  // restarted, or no handler ran: the wait goes on
        }
        lk.lock();
        if (take_unit(s)) {
            lk.unlock();
            return 0;
        }
    }
}

int sem_wait(weft_sem_t* s, std::int64_t deadline_ns) {
    ensure_runtime();
    spinlock_ref lk(s->lock_);
    lk.lock();
    if (take_unit(s)) {
        lk.unlock();
        return 0;
    }
    // One relaxed load more than a wait nothing can interrupt.
    if (signal_hooks_installed()) [[unlikely]]
        return sem_wait_interruptible(s, deadline_ns);
    if (deadline_ns != 0 && deadline_ns <= monotonic_ns()) {
        lk.unlock();
        return ETIMEDOUT;
    }
    wait_record rec;
    wait_list(s->head_, s->tail_).push_back(&rec, s, &unlink_waiter);
    return wait(&rec, &s->lock_, deadline_ns, "weft_sem_wait", s);
}

}  // namespace
}  // namespace weft::detail

using namespace weft::detail;

extern "C" {

WEFT_API int weft_sem_init(weft_sem_t* s, unsigned int value) {
    if (s == nullptr || value > WEFT_SEM_VALUE_MAX) return EINVAL;
    *s = weft_sem_t{0, value, nullptr, nullptr, 0};
    return 0;
}

WEFT_API int weft_sem_destroy(weft_sem_t* s) {
    if (s == nullptr) return EINVAL;
    spinlock_ref lk(s->lock_);
    lk.lock();
    bool busy = s->head_ != nullptr;
    lk.unlock();
    return busy ? EBUSY : 0;
}

WEFT_API int weft_sem_wait(weft_sem_t* s) { return s == nullptr ? EINVAL : sem_wait(s, 0); }

WEFT_API int weft_sem_trywait(weft_sem_t* s) {
    if (s == nullptr) return EINVAL;
    spinlock_ref lk(s->lock_);
    lk.lock();
    int rc = EAGAIN;
    if (s->value_ > 0) {
        --s->value_;
        rc = 0;
    }
    lk.unlock();
    return rc;
}

WEFT_API int weft_sem_timedwait(weft_sem_t* s, const struct timespec* abstime) {
    if (s == nullptr) return EINVAL;
    std::int64_t deadline = 0;
    if (!deadline_from_timespec(abstime, CLOCK_REALTIME, &deadline)) return EINVAL;
    if (deadline == 0) deadline = 1;
    return sem_wait(s, deadline);
}

WEFT_API int weft_sem_post(weft_sem_t* s) {
    if (s == nullptr) return EINVAL;
    spinlock_ref lk(s->lock_);
    lk.lock();
    wait_record* rec = wait_list(s->head_, s->tail_).pop_front();
    if (rec == nullptr) {
        if (s->value_ >= WEFT_SEM_VALUE_MAX) {
            lk.unlock();
            return EOVERFLOW;
        }
        ++s->value_;
    }
    lk.unlock();
    if (rec != nullptr) wake(rec);
    return 0;
}

WEFT_API int weft_sem_getvalue(weft_sem_t* s, int* value) {
    if (s == nullptr || value == nullptr) return EINVAL;
    *value = static_cast<int>(atomic_ref<std::uint32_t>(s->value_).load(memory_order_relaxed));
    return 0;
}

}  // extern "C"
