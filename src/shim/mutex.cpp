// Mutexes: a pthread_mutex_t holds a weft_mutex_t (weft.h lays it out to fit).
//
// glibc's PTHREAD_MUTEX_INITIALIZER is 40 zero bytes, and 40 zero bytes are an
// unlocked normal weft_mutex_t (WEFT_MUTEX_INITIALIZER): a statically
// initialised mutex is a weft mutex as it stands, with no first-use
// conversion and so no race between two first users.
//
// pthread_mutexattr_t (4 bytes) holds: bits 0-1 the type (glibc's values,
// PTHREAD_MUTEX_ADAPTIVE_NP included), bits 8-15 the priority ceiling.
// Process-shared and robust mutexes are refused (ENOTSUP at the attribute,
// docs/shim.md): a weft mutex queues the waiting weft threads of this process
// in its own memory, which another process cannot join, and robustness rests
// on the kernel's per-kernel-thread robust list, which cannot name the weft
// thread that died holding the mutex.
#include <sched.h>

#include <cerrno>

#include "shim/shim.hpp"

using namespace weft::shim;

static_assert(sizeof(weft_mutex_t) <= sizeof(pthread_mutex_t), "weft_mutex_t must fit in pthread_mutex_t");
static_assert(alignof(weft_mutex_t) <= alignof(pthread_mutex_t));
static_assert(sizeof(pthread_mutexattr_t) >= sizeof(unsigned));

namespace {

weft_mutex_t* wm(pthread_mutex_t* m) { return reinterpret_cast<weft_mutex_t*>(m); }
unsigned& bits(pthread_mutexattr_t* a) { return *reinterpret_cast<unsigned*>(a); }
unsigned bits(const pthread_mutexattr_t* a) { return *reinterpret_cast<const unsigned*>(a); }

int weft_type(int type) {
    switch (type) {
    case PTHREAD_MUTEX_RECURSIVE: return WEFT_MUTEX_RECURSIVE;
    case PTHREAD_MUTEX_ERRORCHECK: return WEFT_MUTEX_ERRORCHECK;
    default: return WEFT_MUTEX_NORMAL;  // NORMAL (= DEFAULT) and ADAPTIVE_NP
    }
}

}  // namespace

extern "C" {

int pthread_mutex_init(pthread_mutex_t* m, const pthread_mutexattr_t* attr) {
    if (m == nullptr) return EINVAL;
    weft_mutexattr_t wa{weft_type(attr != nullptr ? static_cast<int>(bits(attr) & 3u) : PTHREAD_MUTEX_NORMAL)};
    return weft_mutex_init(wm(m), &wa);
}

int pthread_mutex_destroy(pthread_mutex_t* m) {
    if (!ready()) return real::pthread_mutex_destroy(m);
    return m == nullptr ? EINVAL : weft_mutex_destroy(wm(m));
}

int pthread_mutex_lock(pthread_mutex_t* m) {
    if (!ready()) return real::pthread_mutex_lock(m);
    if (m == nullptr) return EINVAL;
    errno_keeper keep;
    return weft_mutex_lock(wm(m));
}

int pthread_mutex_trylock(pthread_mutex_t* m) {
    if (!ready()) return real::pthread_mutex_trylock(m);
    return m == nullptr ? EINVAL : weft_mutex_trylock(wm(m));
}

int pthread_mutex_timedlock(pthread_mutex_t* m, const struct timespec* abstime) {
    if (m == nullptr) return EINVAL;
    errno_keeper keep;
    return weft_mutex_timedlock(wm(m), abstime);
}

int pthread_mutex_clocklock(pthread_mutex_t* m, clockid_t clock, const struct timespec* abstime) {
    if (m == nullptr) return EINVAL;
    struct timespec rt;
    if (int rc = convert_deadline(clock, abstime, CLOCK_REALTIME, &rt); rc != 0) return rc;
    errno_keeper keep;
    return weft_mutex_timedlock(wm(m), &rt);
}

int pthread_mutex_unlock(pthread_mutex_t* m) {
    if (!ready()) return real::pthread_mutex_unlock(m);
    return m == nullptr ? EINVAL : weft_mutex_unlock(wm(m));
}

// No mutex is robust or priority-protected under the shim: glibc's answers for
// such a mutex.
int pthread_mutex_consistent(pthread_mutex_t*) { return EINVAL; }
int pthread_mutex_getprioceiling(const pthread_mutex_t*, int*) { return EINVAL; }
int pthread_mutex_setprioceiling(pthread_mutex_t*, int, int*) { return EINVAL; }

int pthread_mutexattr_init(pthread_mutexattr_t* a) {
    if (a == nullptr) return EINVAL;
    bits(a) = PTHREAD_MUTEX_NORMAL;
    return 0;
}

int pthread_mutexattr_destroy(pthread_mutexattr_t* a) { return a == nullptr ? EINVAL : 0; }

int pthread_mutexattr_settype(pthread_mutexattr_t* a, int type) {
    if (a == nullptr || type < PTHREAD_MUTEX_NORMAL || type > PTHREAD_MUTEX_ADAPTIVE_NP) return EINVAL;
    bits(a) = (bits(a) & ~3u) | static_cast<unsigned>(type);
    return 0;
}

int pthread_mutexattr_gettype(const pthread_mutexattr_t* a, int* type) {
    if (a == nullptr || type == nullptr) return EINVAL;
    *type = static_cast<int>(bits(a) & 3u);
    return 0;
}

int pthread_mutexattr_setpshared(pthread_mutexattr_t* a, int pshared) {
    if (a == nullptr || (pshared != PTHREAD_PROCESS_PRIVATE && pshared != PTHREAD_PROCESS_SHARED)) return EINVAL;
    if (pshared == PTHREAD_PROCESS_SHARED)
        return refuse("pthread_mutexattr_setpshared(PTHREAD_PROCESS_SHARED)",
                      "weft mutexes queue this process's threads only", ENOTSUP);
    return 0;
}

int pthread_mutexattr_getpshared(const pthread_mutexattr_t* a, int* pshared) {
    if (a == nullptr || pshared == nullptr) return EINVAL;
    *pshared = PTHREAD_PROCESS_PRIVATE;
    return 0;
}

int pthread_mutexattr_setrobust(pthread_mutexattr_t* a, int robust) {
    if (a == nullptr || (robust != PTHREAD_MUTEX_STALLED && robust != PTHREAD_MUTEX_ROBUST)) return EINVAL;
    if (robust == PTHREAD_MUTEX_ROBUST)
        return refuse("pthread_mutexattr_setrobust(PTHREAD_MUTEX_ROBUST)",
                      "the kernel's robust list cannot name a weft thread", ENOTSUP);
    return 0;
}

int pthread_mutexattr_getrobust(const pthread_mutexattr_t* a, int* robust) {
    if (a == nullptr || robust == nullptr) return EINVAL;
    *robust = PTHREAD_MUTEX_STALLED;
    return 0;
}

int pthread_mutexattr_setprotocol(pthread_mutexattr_t* a, int protocol) {
    if (a == nullptr ||
        (protocol != PTHREAD_PRIO_NONE && protocol != PTHREAD_PRIO_INHERIT && protocol != PTHREAD_PRIO_PROTECT))
        return EINVAL;
    if (protocol != PTHREAD_PRIO_NONE)
        return refuse("pthread_mutexattr_setprotocol(PTHREAD_PRIO_INHERIT/PROTECT)",
                      "weft threads have no priorities", ENOTSUP);
    return 0;
}

int pthread_mutexattr_getprotocol(const pthread_mutexattr_t* a, int* protocol) {
    if (a == nullptr || protocol == nullptr) return EINVAL;
    *protocol = PTHREAD_PRIO_NONE;
    return 0;
}

// Kept and read back (it matters only with PTHREAD_PRIO_PROTECT, refused above).
int pthread_mutexattr_setprioceiling(pthread_mutexattr_t* a, int ceiling) {
    if (a == nullptr || ceiling < sched_get_priority_min(SCHED_FIFO) || ceiling > sched_get_priority_max(SCHED_FIFO))
        return EINVAL;
    bits(a) = (bits(a) & ~0xff00u) | (static_cast<unsigned>(ceiling) << 8);
    return 0;
}

int pthread_mutexattr_getprioceiling(const pthread_mutexattr_t* a, int* ceiling) {
    if (a == nullptr || ceiling == nullptr) return EINVAL;
    *ceiling = static_cast<int>((bits(a) >> 8) & 0xffu);
    return 0;
}

}  // extern "C"
