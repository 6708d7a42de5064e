// Barriers: a pthread_barrier_t holds a weft_barrier_t; weft's serial-thread
// value (-1) is glibc's PTHREAD_BARRIER_SERIAL_THREAD.
#include <climits>
#include <cerrno>

#include "shim/shim.hpp"

using namespace weft::shim;

static_assert(sizeof(weft_barrier_t) <= sizeof(pthread_barrier_t), "weft_barrier_t must fit in pthread_barrier_t");
static_assert(alignof(weft_barrier_t) <= alignof(pthread_barrier_t));
static_assert(WEFT_BARRIER_SERIAL_THREAD == PTHREAD_BARRIER_SERIAL_THREAD);

namespace {

weft_barrier_t* wb(pthread_barrier_t* b) { return reinterpret_cast<weft_barrier_t*>(b); }

}  // namespace

extern "C" {

int pthread_barrier_init(pthread_barrier_t* b, const pthread_barrierattr_t*, unsigned count) {
    if (b == nullptr || count == 0 || count > INT_MAX) return EINVAL;
    return weft_barrier_init(wb(b), count);
}

int pthread_barrier_destroy(pthread_barrier_t* b) { return b == nullptr ? EINVAL : weft_barrier_destroy(wb(b)); }

int pthread_barrier_wait(pthread_barrier_t* b) {
    if (b == nullptr) return EINVAL;
    errno_keeper keep;
    return weft_barrier_wait(wb(b));
}

int pthread_barrierattr_init(pthread_barrierattr_t* a) { return a == nullptr ? EINVAL : 0; }
int pthread_barrierattr_destroy(pthread_barrierattr_t* a) { return a == nullptr ? EINVAL : 0; }

int pthread_barrierattr_setpshared(pthread_barrierattr_t* a, int pshared) {
    if (a == nullptr || (pshared != PTHREAD_PROCESS_PRIVATE && pshared != PTHREAD_PROCESS_SHARED)) return EINVAL;
    if (pshared == PTHREAD_PROCESS_SHARED)
        return refuse("pthread_barrierattr_setpshared(PTHREAD_PROCESS_SHARED)",
                      "weft barriers queue this process's threads only", ENOTSUP);
    return 0;
}

int pthread_barrierattr_getpshared(const pthread_barrierattr_t* a, int* pshared) {
    if (a == nullptr || pshared == nullptr) return EINVAL;
    *pshared = PTHREAD_PROCESS_PRIVATE;
    return 0;
}

}  // extern "C"
