/* check.h — the checks of the libweft-pthread conformance programs.
 * Plain C with <pthread.h> only (no weft header): each program runs on glibc's
 * threads and under the shim, and must print the same lines in both. */
#ifndef SHIM_TEST_CHECK_H
#define SHIM_TEST_CHECK_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int shim_checks;

/* CHECK_EQ(expr, want): an int-valued call and the value POSIX gives. */
#define CHECK_EQ(expr, want)                                                                   \
    do {                                                                                       \
        long got_ = (long)(expr);                                                              \
        long want_ = (long)(want);                                                             \
        if (got_ != want_) {                                                                   \
            fprintf(stderr, "%s:%d: %s returned %ld (%s), expected %ld (%s)\n", __FILE__,      \
                    __LINE__, #expr, got_, strerror((int)got_), want_, strerror((int)want_)); \
            exit(1);                                                                           \
        }                                                                                      \
        ++shim_checks;                                                                         \
    } while (0)

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                                 \
        }                                                                            \
        ++shim_checks;                                                               \
    } while (0)

/* The program's last line, identical on glibc and under the shim. */
#define CHECKS_DONE(name)                                     \
    do {                                                      \
        printf("%s: %d checks passed\n", name, shim_checks); \
        return 0;                                             \
    } while (0)

static inline long long now_ns(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* An absolute time ms milliseconds from now on `clock`. */
static inline struct timespec deadline_in(clockid_t clock, long ms) {
    long long t = now_ns(clock) + ms * 1000000LL;
    struct timespec ts = {(time_t)(t / 1000000000LL), (long)(t % 1000000000LL)};
    return ts;
}

/* Lets the other threads run, in one of three ways by i % 3: a yield, a wait
 * for a mutex another thread holds across a yield, a short sleep. Under the
 * shim each is a switch, after which the thread may be on another worker. */
static inline void switch_away(int i) {
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    switch (i % 3) {
    case 0: sched_yield(); break;
    case 1:
        pthread_mutex_lock(&m);
        sched_yield(); /* the others find m taken and block */
        pthread_mutex_unlock(&m);
        break;
    default: usleep(50); break;
    }
}

#endif
