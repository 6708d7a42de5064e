/* Conformance: reader-writer locks, static initializer. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>

#include "check.h"

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int inside, most_inside;
static pthread_mutex_t count_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t all_in;

static void* reader(void* a) {
    (void)a;
    pthread_rwlock_rdlock(&rw);
    pthread_mutex_lock(&count_m);
    if (++inside > most_inside) most_inside = inside;
    pthread_mutex_unlock(&count_m);
    pthread_barrier_wait(&all_in); /* every reader holds the lock at once */
    pthread_mutex_lock(&count_m);
    --inside;
    pthread_mutex_unlock(&count_m);
    pthread_rwlock_unlock(&rw);
    return NULL;
}

static void* try_rd(void* a) {
    (void)a;
    long rc = pthread_rwlock_tryrdlock(&rw);
    if (rc == 0) pthread_rwlock_unlock(&rw);
    return (void*)rc;
}
static void* try_wr(void* a) {
    (void)a;
    long rc = pthread_rwlock_trywrlock(&rw);
    if (rc == 0) pthread_rwlock_unlock(&rw);
    return (void*)rc;
}
static void* timed_wr(void* a) {
    (void)a;
    struct timespec dl = deadline_in(CLOCK_REALTIME, 20);
    return (void*)(long)pthread_rwlock_timedwrlock(&rw, &dl);
}
static void* timed_rd(void* a) {
    (void)a;
    struct timespec dl = deadline_in(CLOCK_MONOTONIC, 20);
    return (void*)(long)pthread_rwlock_clockrdlock(&rw, CLOCK_MONOTONIC, &dl);
}

static long counter;
static void* writer(void* a) {
    (void)a;
    for (int i = 0; i < 1000; ++i) {
        pthread_rwlock_wrlock(&rw);
        long c = counter;
        if (i % 50 == 0) sched_yield();
        counter = c + 1;
        pthread_rwlock_unlock(&rw);
    }
    return NULL;
}

static long run(void* (*fn)(void*)) {
    pthread_t t;
    void* r;
    if (pthread_create(&t, NULL, fn, NULL) != 0 || pthread_join(t, &r) != 0) exit(2);
    return (long)r;
}

int main(void) {
    pthread_t ts[4];
    CHECK_EQ(pthread_barrier_init(&all_in, NULL, 4), 0);
    for (int i = 0; i < 4; ++i) CHECK_EQ(pthread_create(&ts[i], NULL, reader, NULL), 0);
    for (int i = 0; i < 4; ++i) CHECK_EQ(pthread_join(ts[i], NULL), 0);
    CHECK_EQ(most_inside, 4);

    CHECK_EQ(pthread_rwlock_rdlock(&rw), 0);
    CHECK_EQ(run(try_rd), 0);
    CHECK_EQ(run(try_wr), EBUSY);
    CHECK_EQ(run(timed_wr), ETIMEDOUT);
    CHECK_EQ(pthread_rwlock_unlock(&rw), 0);

    CHECK_EQ(pthread_rwlock_wrlock(&rw), 0);
    CHECK_EQ(pthread_rwlock_wrlock(&rw), EDEADLK);
    CHECK_EQ(pthread_rwlock_rdlock(&rw), EDEADLK);
    CHECK_EQ(run(try_rd), EBUSY);
    CHECK_EQ(run(try_wr), EBUSY);
    CHECK_EQ(run(timed_rd), ETIMEDOUT);
    CHECK_EQ(pthread_rwlock_unlock(&rw), 0);

    for (int i = 0; i < 4; ++i) CHECK_EQ(pthread_create(&ts[i], NULL, writer, NULL), 0);
    for (int i = 0; i < 4; ++i) CHECK_EQ(pthread_join(ts[i], NULL), 0);
    CHECK_EQ(counter, 4000);

    pthread_rwlockattr_t a;
    pthread_rwlock_t own;
    int v;
    CHECK_EQ(pthread_rwlockattr_init(&a), 0);
    CHECK_EQ(pthread_rwlockattr_getpshared(&a, &v), 0);
    CHECK_EQ(v, PTHREAD_PROCESS_PRIVATE);
    CHECK_EQ(pthread_rwlockattr_setpshared(&a, 12345), EINVAL);
    CHECK_EQ(pthread_rwlock_init(&own, &a), 0);
    CHECK_EQ(pthread_rwlock_trywrlock(&own), 0);
    CHECK_EQ(pthread_rwlock_tryrdlock(&own), EBUSY);
    CHECK_EQ(pthread_rwlock_unlock(&own), 0);
    CHECK_EQ(pthread_rwlock_destroy(&own), 0);
    CHECK_EQ(pthread_rwlockattr_destroy(&a), 0);

    CHECKS_DONE("rwlock");
}
