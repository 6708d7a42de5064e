// Reader-writer locks: a pthread_rwlock_t holds a weft_rwlock_t. glibc's
// PTHREAD_RWLOCK_INITIALIZER is 56 zero bytes, an unlocked weft_rwlock_t
// (WEFT_RWLOCK_INITIALIZER): no first-use conversion.
//
// weft's rwlock is fair (arrival order, docs/shim.md): the kind attribute
// (glibc's reader/writer preference) is kept and read back but changes
// nothing, and a thread that takes a read lock again while a writer waits
// queues behind the writer.
#include <cerrno>

#include "shim/shim.hpp"

using namespace weft::shim;

static_assert(sizeof(weft_rwlock_t) <= sizeof(pthread_rwlock_t), "weft_rwlock_t must fit in pthread_rwlock_t");
static_assert(alignof(weft_rwlock_t) <= alignof(pthread_rwlock_t));

namespace {

weft_rwlock_t* wr(pthread_rwlock_t* rw) { return reinterpret_cast<weft_rwlock_t*>(rw); }
int& kind_of(pthread_rwlockattr_t* a) { return *reinterpret_cast<int*>(a); }
int kind_of(const pthread_rwlockattr_t* a) { return *reinterpret_cast<const int*>(a); }

int timed(int (*lock)(weft_rwlock_t*, const struct timespec*), pthread_rwlock_t* rw, clockid_t clock,
          const struct timespec* abstime) {
    if (rw == nullptr) return EINVAL;
    struct timespec rt;
    if (int rc = convert_deadline(clock, abstime, CLOCK_REALTIME, &rt); rc != 0) return rc;
    errno_keeper keep;
    return lock(wr(rw), &rt);
}

// POSIX gives the try forms EBUSY alone: weft's EDEADLK (the caller holds the
// write lock) is EBUSY here, as glibc answers.
int busy_for_deadlock(int rc) { return rc == EDEADLK ? EBUSY : rc; }

}  // namespace

extern "C" {

int pthread_rwlock_init(pthread_rwlock_t* rw, const pthread_rwlockattr_t*) {
    return rw == nullptr ? EINVAL : weft_rwlock_init(wr(rw));
}

int pthread_rwlock_destroy(pthread_rwlock_t* rw) { return rw == nullptr ? EINVAL : weft_rwlock_destroy(wr(rw)); }

int pthread_rwlock_rdlock(pthread_rwlock_t* rw) {
    if (rw == nullptr) return EINVAL;
    errno_keeper keep;
    return weft_rwlock_rdlock(wr(rw));
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t* rw) {
    return rw == nullptr ? EINVAL : busy_for_deadlock(weft_rwlock_tryrdlock(wr(rw)));
}

int pthread_rwlock_timedrdlock(pthread_rwlock_t* rw, const struct timespec* abstime) {
    return timed(&weft_rwlock_timedrdlock, rw, CLOCK_REALTIME, abstime);
}

int pthread_rwlock_clockrdlock(pthread_rwlock_t* rw, clockid_t clock, const struct timespec* abstime) {
    return timed(&weft_rwlock_timedrdlock, rw, clock, abstime);
}

int pthread_rwlock_wrlock(pthread_rwlock_t* rw) {
    if (rw == nullptr) return EINVAL;
    errno_keeper keep;
    return weft_rwlock_wrlock(wr(rw));
}

int pthread_rwlock_trywrlock(pthread_rwlock_t* rw) {
    return rw == nullptr ? EINVAL : busy_for_deadlock(weft_rwlock_trywrlock(wr(rw)));
}

int pthread_rwlock_timedwrlock(pthread_rwlock_t* rw, const struct timespec* abstime) {
    return timed(&weft_rwlock_timedwrlock, rw, CLOCK_REALTIME, abstime);
}

int pthread_rwlock_clockwrlock(pthread_rwlock_t* rw, clockid_t clock, const struct timespec* abstime) {
    return timed(&weft_rwlock_timedwrlock, rw, clock, abstime);
}

int pthread_rwlock_unlock(pthread_rwlock_t* rw) { return rw == nullptr ? EINVAL : weft_rwlock_unlock(wr(rw)); }

int pthread_rwlockattr_init(pthread_rwlockattr_t* a) {
    if (a == nullptr) return EINVAL;
    kind_of(a) = PTHREAD_RWLOCK_PREFER_READER_NP;
    return 0;
}

int pthread_rwlockattr_destroy(pthread_rwlockattr_t* a) { return a == nullptr ? EINVAL : 0; }

int pthread_rwlockattr_setpshared(pthread_rwlockattr_t* a, int pshared) {
    if (a == nullptr || (pshared != PTHREAD_PROCESS_PRIVATE && pshared != PTHREAD_PROCESS_SHARED)) return EINVAL;
    if (pshared == PTHREAD_PROCESS_SHARED)
        return refuse("pthread_rwlockattr_setpshared(PTHREAD_PROCESS_SHARED)",
                      "weft rwlocks queue this process's threads only", ENOTSUP);
    return 0;
}

int pthread_rwlockattr_getpshared(const pthread_rwlockattr_t* a, int* pshared) {
    if (a == nullptr || pshared == nullptr) return EINVAL;
    *pshared = PTHREAD_PROCESS_PRIVATE;
    return 0;
}

int pthread_rwlockattr_setkind_np(pthread_rwlockattr_t* a, int kind) {
    if (a == nullptr || (kind != PTHREAD_RWLOCK_PREFER_READER_NP && kind != PTHREAD_RWLOCK_PREFER_WRITER_NP &&
                         kind != PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        return EINVAL;
    kind_of(a) = kind;
    return 0;
}

int pthread_rwlockattr_getkind_np(const pthread_rwlockattr_t* a, int* kind) {
    if (a == nullptr || kind == nullptr) return EINVAL;
    *kind = kind_of(a);
    return 0;
}

}  // extern "C"
