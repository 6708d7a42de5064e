/* Conformance: mutexes of every type, their attributes, static initializers. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>

#include "check.h"

static pthread_mutex_t stat_m = PTHREAD_MUTEX_INITIALIZER;
static long counter;

static void* add_many(void* a) {
    (void)a;
    for (int i = 0; i < 2000; ++i) {
        pthread_mutex_lock(&stat_m);
        long c = counter;
        if (i % 64 == 0) sched_yield(); /* other threads try the lock meanwhile */
        counter = c + 1;
        pthread_mutex_unlock(&stat_m);
    }
    return NULL;
}

static pthread_mutex_t* other_m;
static void* try_other(void* a) {
    (void)a;
    long rc = pthread_mutex_trylock(other_m);
    if (rc == 0) pthread_mutex_unlock(other_m);
    return (void*)rc;
}
static void* unlock_other(void* a) {
    (void)a;
    return (void*)(long)pthread_mutex_unlock(other_m);
}
static void* timedlock_other(void* a) {
    struct timespec dl = deadline_in(CLOCK_REALTIME, (long)a);
    return (void*)(long)pthread_mutex_timedlock(other_m, &dl);
}
static void* timedlock_bad(void* a) {
    (void)a;
    struct timespec dl = {0, 2000000000L};
    return (void*)(long)pthread_mutex_timedlock(other_m, &dl);
}
static void* clocklock_other(void* a) {
    struct timespec dl = deadline_in(CLOCK_MONOTONIC, (long)a);
    return (void*)(long)pthread_mutex_clocklock(other_m, CLOCK_MONOTONIC, &dl);
}

static long run(void* (*fn)(void*), void* arg) {
    pthread_t t;
    void* r;
    if (pthread_create(&t, NULL, fn, arg) != 0 || pthread_join(t, &r) != 0) exit(2);
    return (long)r;
}

int main(void) {
    pthread_mutexattr_t a;
    pthread_mutex_t m;
    int v;

    /* mutual exclusion on a statically initialised mutex */
    pthread_t ts[8];
    for (int i = 0; i < 8; ++i) CHECK_EQ(pthread_create(&ts[i], NULL, add_many, NULL), 0);
    for (int i = 0; i < 8; ++i) CHECK_EQ(pthread_join(ts[i], NULL), 0);
    CHECK_EQ(counter, 8 * 2000);

    /* attributes */
    CHECK_EQ(pthread_mutexattr_init(&a), 0);
    CHECK_EQ(pthread_mutexattr_gettype(&a, &v), 0);
    CHECK_EQ(v, PTHREAD_MUTEX_DEFAULT);
    CHECK_EQ(pthread_mutexattr_settype(&a, 12345), EINVAL);
    CHECK_EQ(pthread_mutexattr_getpshared(&a, &v), 0);
    CHECK_EQ(v, PTHREAD_PROCESS_PRIVATE);
    CHECK_EQ(pthread_mutexattr_setpshared(&a, 12345), EINVAL);
    CHECK_EQ(pthread_mutexattr_getrobust(&a, &v), 0);
    CHECK_EQ(v, PTHREAD_MUTEX_STALLED);
    CHECK_EQ(pthread_mutexattr_setrobust(&a, 12345), EINVAL);
    CHECK_EQ(pthread_mutexattr_getprotocol(&a, &v), 0);
    CHECK_EQ(v, PTHREAD_PRIO_NONE);
    CHECK_EQ(pthread_mutexattr_setprotocol(&a, 12345), EINVAL);
    CHECK_EQ(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_NONE), 0);

    /* normal: trylock by another thread is EBUSY; destroy while locked EBUSY */
    CHECK_EQ(pthread_mutex_init(&m, NULL), 0);
    other_m = &m;
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    CHECK_EQ(run(try_other, NULL), EBUSY);
    CHECK_EQ(pthread_mutex_trylock(&m), EBUSY);
    CHECK_EQ(pthread_mutex_destroy(&m), EBUSY);
    CHECK_EQ(run(timedlock_other, (void*)20L), ETIMEDOUT);
    CHECK_EQ(run(clocklock_other, (void*)20L), ETIMEDOUT);
    CHECK_EQ(run(timedlock_bad, NULL), EINVAL);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    CHECK_EQ(run(timedlock_other, (void*)20L), 0); /* free now: taken (the thread ends holding it) */
    CHECK_EQ(pthread_mutex_trylock(&m), EBUSY);
    CHECK_EQ(pthread_mutex_unlock(&m), 0); /* a normal mutex: no owner check, as in glibc */
    CHECK_EQ(pthread_mutex_destroy(&m), 0);

    /* errorcheck: relock EDEADLK, unlock by a non-owner EPERM */
    CHECK_EQ(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK), 0);
    CHECK_EQ(pthread_mutexattr_gettype(&a, &v), 0);
    CHECK_EQ(v, PTHREAD_MUTEX_ERRORCHECK);
    CHECK_EQ(pthread_mutex_init(&m, &a), 0);
    CHECK_EQ(pthread_mutex_unlock(&m), EPERM);
    CHECK_EQ(pthread_mutex_lock(&m), 0);
    CHECK_EQ(pthread_mutex_lock(&m), EDEADLK);
    CHECK_EQ(run(unlock_other, NULL), EPERM);
    CHECK_EQ(pthread_mutex_unlock(&m), 0);
    CHECK_EQ(pthread_mutex_destroy(&m), 0);

    /* recursive: nested locks, the same number of unlocks */
    CHECK_EQ(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE), 0);
    CHECK_EQ(pthread_mutex_init(&m, &a), 0);
    for (int i = 0; i < 5; ++i) CHECK_EQ(pthread_mutex_lock(&m), 0);
    CHECK_EQ(pthread_mutex_trylock(&m), 0);
    CHECK_EQ(run(try_other, NULL), EBUSY);
    CHECK_EQ(run(unlock_other, NULL), EPERM);
    for (int i = 0; i < 6; ++i) CHECK_EQ(pthread_mutex_unlock(&m), 0);
    CHECK_EQ(pthread_mutex_unlock(&m), EPERM);
    CHECK_EQ(run(try_other, NULL), 0);
    CHECK_EQ(pthread_mutex_destroy(&m), 0);
    CHECK_EQ(pthread_mutexattr_destroy(&a), 0);

    /* not robust, not priority-protected: the answers for such a mutex */
    CHECK_EQ(pthread_mutex_init(&m, NULL), 0);
    CHECK_EQ(pthread_mutex_consistent(&m), EINVAL);
    CHECK_EQ(pthread_mutex_destroy(&m), 0);

    CHECKS_DONE("mutex");
}
