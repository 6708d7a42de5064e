// Condition variables: a pthread_cond_t holds a weft_cond_t. glibc's
// PTHREAD_COND_INITIALIZER is 48 zero bytes, a weft_cond_t on CLOCK_REALTIME
// with no waiters (WEFT_COND_INITIALIZER): no first-use conversion.
//
// pthread_condattr_t (4 bytes) holds the clock id. pthread_cond_clockwait's
// deadline, on a clock that may differ from the variable's, is converted to
// the variable's clock (what is left of it, measured now).
#include <cerrno>

#include "shim/shim.hpp"

using namespace weft::shim;

static_assert(sizeof(weft_cond_t) <= sizeof(pthread_cond_t), "weft_cond_t must fit in pthread_cond_t");
static_assert(alignof(weft_cond_t) <= alignof(pthread_cond_t));

namespace {

weft_cond_t* wc(pthread_cond_t* c) { return reinterpret_cast<weft_cond_t*>(c); }
weft_mutex_t* wm(pthread_mutex_t* m) { return reinterpret_cast<weft_mutex_t*>(m); }
int& clock_of(pthread_condattr_t* a) { return *reinterpret_cast<int*>(a); }
int clock_of(const pthread_condattr_t* a) { return *reinterpret_cast<const int*>(a); }

}  // namespace

extern "C" {

int pthread_cond_init(pthread_cond_t* c, const pthread_condattr_t* attr) {
    if (c == nullptr) return EINVAL;
    weft_condattr_t wa{attr != nullptr ? clock_of(attr) : CLOCK_REALTIME};
    return weft_cond_init(wc(c), &wa);
}

int pthread_cond_destroy(pthread_cond_t* c) {
    if (!ready()) return real::pthread_cond_destroy(c);
    return c == nullptr ? EINVAL : weft_cond_destroy(wc(c));
}

int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m) {
    cancel_point cp;
    if (c == nullptr || m == nullptr) return EINVAL;
    errno_keeper keep;
    return weft_cond_wait(wc(c), wm(m));
}

int pthread_cond_timedwait(pthread_cond_t* c, pthread_mutex_t* m, const struct timespec* abstime) {
    cancel_point cp;
    if (c == nullptr || m == nullptr) return EINVAL;
    errno_keeper keep;
    return weft_cond_timedwait(wc(c), wm(m), abstime);
}

int pthread_cond_clockwait(pthread_cond_t* c, pthread_mutex_t* m, clockid_t clock, const struct timespec* abstime) {
    cancel_point cp;
    if (c == nullptr || m == nullptr) return EINVAL;
    struct timespec own;
    if (int rc = convert_deadline(clock, abstime, wc(c)->clock_, &own); rc != 0) return rc;
    errno_keeper keep;
    return weft_cond_timedwait(wc(c), wm(m), &own);
}

int pthread_cond_signal(pthread_cond_t* c) {
    if (!ready()) return real::pthread_cond_signal(c);
    return c == nullptr ? EINVAL : weft_cond_signal(wc(c));
}

int pthread_cond_broadcast(pthread_cond_t* c) {
    if (!ready()) return real::pthread_cond_broadcast(c);
    return c == nullptr ? EINVAL : weft_cond_broadcast(wc(c));
}

int pthread_condattr_init(pthread_condattr_t* a) {
    if (a == nullptr) return EINVAL;
    clock_of(a) = CLOCK_REALTIME;
    return 0;
}

int pthread_condattr_destroy(pthread_condattr_t* a) { return a == nullptr ? EINVAL : 0; }

int pthread_condattr_setclock(pthread_condattr_t* a, clockid_t clock) {
    if (a == nullptr || (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)) return EINVAL;
    clock_of(a) = clock;
    return 0;
}

int pthread_condattr_getclock(const pthread_condattr_t* a, clockid_t* clock) {
    if (a == nullptr || clock == nullptr) return EINVAL;
    *clock = clock_of(a);
    return 0;
}

int pthread_condattr_setpshared(pthread_condattr_t* a, int pshared) {
    if (a == nullptr || (pshared != PTHREAD_PROCESS_PRIVATE && pshared != PTHREAD_PROCESS_SHARED)) return EINVAL;
    if (pshared == PTHREAD_PROCESS_SHARED)
        return refuse("pthread_condattr_setpshared(PTHREAD_PROCESS_SHARED)",
                      "weft condition variables queue this process's threads only", ENOTSUP);
    return 0;
}

int pthread_condattr_getpshared(const pthread_condattr_t* a, int* pshared) {
    if (a == nullptr || pshared == nullptr) return EINVAL;
    *pshared = PTHREAD_PROCESS_PRIVATE;
    return 0;
}

}  // extern "C"
