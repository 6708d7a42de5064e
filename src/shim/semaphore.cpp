// Unnamed semaphores: a sem_t holds a weft_sem_t. sem_* report errors as
// -1 and errno, as POSIX has them. Process-shared semaphores (pshared != 0)
// are refused with ENOSYS, the errno POSIX gives for them; named ones
// (sem_open) with ENOSYS too: their memory is shared with other processes,
// which cannot join a weft semaphore's queue.
#include <fcntl.h>

#include <cerrno>

#include "shim/shim.hpp"

using namespace weft::shim;

static_assert(sizeof(weft_sem_t) <= sizeof(sem_t), "weft_sem_t must fit in sem_t");
static_assert(alignof(weft_sem_t) <= alignof(sem_t));

namespace {

weft_sem_t* ws(sem_t* s) { return reinterpret_cast<weft_sem_t*>(s); }

int timed_wait(sem_t* s, const struct timespec* abstime) {
    cancel_point cp;
    int rc;
    {
        errno_keeper keep;
        rc = weft_sem_timedwait(ws(s), abstime);
    }
    return errno_result(rc);
}

}  // namespace

extern "C" {

int sem_init(sem_t* s, int pshared, unsigned value) {
    if (s == nullptr) return errno_result(EINVAL);
    if (value > SEM_VALUE_MAX) return errno_result(EINVAL);
    if (pshared != 0)
        return errno_result(refuse("sem_init with pshared != 0", "weft semaphores queue this process's threads only",
                                   ENOSYS));
    return errno_result(weft_sem_init(ws(s), value));
}

int sem_destroy(sem_t* s) { return errno_result(s == nullptr ? EINVAL : weft_sem_destroy(ws(s))); }

int sem_wait(sem_t* s) {
    cancel_point cp;
    if (s == nullptr) return errno_result(EINVAL);
    int rc;
    {
        errno_keeper keep;
        rc = weft_sem_wait(ws(s));
    }
    return errno_result(rc);
}

int sem_trywait(sem_t* s) { return errno_result(s == nullptr ? EINVAL : weft_sem_trywait(ws(s))); }

int sem_timedwait(sem_t* s, const struct timespec* abstime) {
    return s == nullptr ? errno_result(EINVAL) : timed_wait(s, abstime);
}

int sem_clockwait(sem_t* s, clockid_t clock, const struct timespec* abstime) {
    if (s == nullptr) return errno_result(EINVAL);
    struct timespec rt;
    if (int rc = convert_deadline(clock, abstime, CLOCK_REALTIME, &rt); rc != 0) return errno_result(rc);
    return timed_wait(s, &rt);
}

int sem_post(sem_t* s) { return errno_result(s == nullptr ? EINVAL : weft_sem_post(ws(s))); }

int sem_getvalue(sem_t* __restrict s, int* __restrict value) {
    if (s == nullptr || value == nullptr) return errno_result(EINVAL);
    return errno_result(weft_sem_getvalue(ws(s), value));
}

sem_t* sem_open(const char*, int, ...) {
    errno = refuse("sem_open", "named semaphores are shared with other processes", ENOSYS);
    return SEM_FAILED;
}

}  // extern "C"
