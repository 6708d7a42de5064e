// weft_rwlock_t: fair reader-writer lock. Waiters queue in arrival order; a
// release grants the head: one writer, or the whole run of readers at the head.
// A reader that arrives while anyone waits queues too, so writers never starve.
//
// readers_: > 0 readers inside, -1 a writer inside (writer_ names it), 0 free.
#include <cerrno>

#include "core/clock.hpp"
#include "core/runtime.hpp"
#include "sync/wait_list.hpp"

namespace weft::detail {
namespace {

constexpr std::uintptr_t tag_reader = 0;
constexpr std::uintptr_t tag_writer = 1;

void unlink_waiter(wait_record* rec) {
    auto* rw = static_cast<weft_rwlock_t*>(rec->queue);
    wait_list(rw->head_, rw->tail_).remove(rec);
}

// Admits waiters from the head of the queue as far as the lock allows (lock
// held): a writer if the lock is free, else the run of readers at the head if
// no writer is inside. Returns the records to wake, linked through next.
wait_record* admit(weft_rwlock_t* rw) {
    wait_list q(rw->head_, rw->tail_);
    if (q.empty() || rw->readers_ < 0) return nullptr;
    if (q.front()->tag == tag_writer) {
        if (rw->readers_ != 0) return nullptr;
        wait_record* r = q.pop_front();
        rw->readers_ = -1;
        rw->writer_ = r->owner_id;
        r->next = nullptr;
        return r;
    }
    wait_record* woken = nullptr;
    wait_record** tail = &woken;
    while (!q.empty() && q.front()->tag == tag_reader) {
        wait_record* r = q.pop_front();
        ++rw->readers_;
        *tail = r;
        tail = &r->next;
    }
    *tail = nullptr;
    return woken;
}

void wake_all(wait_record* list) {
    while (list != nullptr) {
        wait_record* next = list->next;  // read before wake: the record dies with its waiter
        wake(list);
        list = next;
    }
}

int lock_common(weft_rwlock_t* rw, bool writer, std::int64_t deadline_ns) {
    ensure_runtime();
    void* self = owner_self();
    spinlock_ref lk(rw->lock_);
    lk.lock();
    wait_list q(rw->head_, rw->tail_);
    if (rw->readers_ == -1 && rw->writer_ == self) {
        lk.unlock();
        return EDEADLK;
    }
    if (q.empty() && (writer ? rw->readers_ == 0 : rw->readers_ >= 0)) {
        if (writer) {
            rw->readers_ = -1;
            rw->writer_ = self;
        } else {
            ++rw->readers_;
        }
        lk.unlock();
        return 0;
    }
    if (deadline_ns != 0 && deadline_ns <= monotonic_ns()) {
        lk.unlock();
        return ETIMEDOUT;
    }
    wait_record rec;
    q.push_back(&rec, rw, &unlink_waiter);
    rec.tag = writer ? tag_writer : tag_reader;
    rec.owner_id = self;
    int rc = wait(&rec, &rw->lock_, deadline_ns, writer ? "weft_rwlock_wrlock" : "weft_rwlock_rdlock", rw);
    if (rc == ETIMEDOUT) {
        // A writer that gives up may have been what held back the readers
        // queued behind it.
        lk.lock();
        wait_record* woken = admit(rw);
        lk.unlock();
        wake_all(woken);
    }
    return rc;
}

int try_common(weft_rwlock_t* rw, bool writer) {
    ensure_runtime();
    void* self = owner_self();
    spinlock_ref lk(rw->lock_);
    lk.lock();
    int rc = EBUSY;
    if (rw->readers_ == -1 && rw->writer_ == self)
        rc = EDEADLK;
    else if (rw->head_ == nullptr && (writer ? rw->readers_ == 0 : rw->readers_ >= 0)) {
        if (writer) {
            rw->readers_ = -1;
            rw->writer_ = self;
        } else {
            ++rw->readers_;
        }
        rc = 0;
    }
    lk.unlock();
    return rc;
}

}  // namespace
}  // namespace weft::detail

using namespace weft::detail;

extern "C" {

WEFT_API int weft_rwlock_init(weft_rwlock_t* rw) {
    if (rw == nullptr) return EINVAL;
    *rw = weft_rwlock_t{0, 0, nullptr, nullptr, nullptr, {0, 0, 0}};
    return 0;
}

WEFT_API int weft_rwlock_destroy(weft_rwlock_t* rw) {
    if (rw == nullptr) return EINVAL;
    spinlock_ref lk(rw->lock_);
    lk.lock();
    bool busy = rw->readers_ != 0 || rw->head_ != nullptr;
    lk.unlock();
    return busy ? EBUSY : 0;
}

WEFT_API int weft_rwlock_rdlock(weft_rwlock_t* rw) { return rw == nullptr ? EINVAL : lock_common(rw, false, 0); }
WEFT_API int weft_rwlock_wrlock(weft_rwlock_t* rw) { return rw == nullptr ? EINVAL : lock_common(rw, true, 0); }
WEFT_API int weft_rwlock_tryrdlock(weft_rwlock_t* rw) { return rw == nullptr ? EINVAL : try_common(rw, false); }
WEFT_API int weft_rwlock_trywrlock(weft_rwlock_t* rw) { return rw == nullptr ? EINVAL : try_common(rw, true); }

WEFT_API int weft_rwlock_timedrdlock(weft_rwlock_t* rw, const struct timespec* abstime) {
    if (rw == nullptr) return EINVAL;
    std::int64_t deadline = 0;
    if (!deadline_from_timespec(abstime, CLOCK_REALTIME, &deadline)) return EINVAL;
    return lock_common(rw, false, deadline == 0 ? 1 : deadline);
}

WEFT_API int weft_rwlock_timedwrlock(weft_rwlock_t* rw, const struct timespec* abstime) {
    if (rw == nullptr) return EINVAL;
    std::int64_t deadline = 0;
    if (!deadline_from_timespec(abstime, CLOCK_REALTIME, &deadline)) return EINVAL;
    return lock_common(rw, true, deadline == 0 ? 1 : deadline);
}

WEFT_API int weft_rwlock_unlock(weft_rwlock_t* rw) {
    if (rw == nullptr) return EINVAL;
    void* self = owner_self();
    spinlock_ref lk(rw->lock_);
    lk.lock();
    if (rw->readers_ == -1) {
        if (rw->writer_ != self) {
            lk.unlock();
            return EPERM;
        }
        rw->readers_ = 0;
        rw->writer_ = nullptr;
    } else if (rw->readers_ > 0) {
        --rw->readers_;
    } else {
        lk.unlock();
        return EPERM;
    }
    wait_record* woken = admit(rw);
    lk.unlock();
    wake_all(woken);
    return 0;
}

}  // extern "C"
