/* Conformance: barriers, spinlocks and unnamed semaphores. */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <sched.h>

#include "check.h"

#define N 4
#define ROUNDS 50

static pthread_barrier_t b;
static int serial_count[ROUNDS];
static pthread_spinlock_t spin;
static long spin_counter;

static void* barrier_rounds(void* a) {
    (void)a;
    for (int r = 0; r < ROUNDS; ++r) {
        int rc = pthread_barrier_wait(&b);
        if (rc == PTHREAD_BARRIER_SERIAL_THREAD)
            __atomic_fetch_add(&serial_count[r], 1, __ATOMIC_RELAXED);
        else if (rc != 0)
            return (void*)1;
    }
    return NULL;
}

static void* spin_add(void* a) {
    (void)a;
    for (int i = 0; i < 5000; ++i) {
        pthread_spin_lock(&spin);
        long c = spin_counter;
        if (i % 500 == 0) sched_yield();
        spin_counter = c + 1;
        pthread_spin_unlock(&spin);
    }
    return NULL;
}

static sem_t items;
static long consumed;
static void* consume(void* a) {
    long n = (long)a;
    for (long i = 0; i < n; ++i) {
        if (sem_wait(&items) != 0) return (void*)1;
        __atomic_fetch_add(&consumed, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(void) {
    pthread_t ts[N];
    void* r;

    /* barriers: exactly one serial thread per round, reusable at once */
    CHECK_EQ(pthread_barrier_init(&b, NULL, 0), EINVAL);
    CHECK_EQ(pthread_barrier_init(&b, NULL, N), 0);
    for (int i = 0; i < N; ++i) CHECK_EQ(pthread_create(&ts[i], NULL, barrier_rounds, NULL), 0);
    for (int i = 0; i < N; ++i) {
        CHECK_EQ(pthread_join(ts[i], &r), 0);
        CHECK(r == NULL);
    }
    for (int i = 0; i < ROUNDS; ++i) CHECK_EQ(serial_count[i], 1);
    CHECK_EQ(pthread_barrier_destroy(&b), 0);
    pthread_barrierattr_t ba;
    int v;
    CHECK_EQ(pthread_barrierattr_init(&ba), 0);
    CHECK_EQ(pthread_barrierattr_getpshared(&ba, &v), 0);
    CHECK_EQ(v, PTHREAD_PROCESS_PRIVATE);
    CHECK_EQ(pthread_barrierattr_setpshared(&ba, 12345), EINVAL);
    CHECK_EQ(pthread_barrier_init(&b, &ba, 1), 0);
    CHECK_EQ(pthread_barrier_wait(&b), PTHREAD_BARRIER_SERIAL_THREAD);
    CHECK_EQ(pthread_barrier_destroy(&b), 0);
    CHECK_EQ(pthread_barrierattr_destroy(&ba), 0);

    /* spinlocks */
    CHECK_EQ(pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE), 0);
    CHECK_EQ(pthread_spin_trylock(&spin), 0);
    CHECK_EQ(pthread_spin_trylock(&spin), EBUSY);
    CHECK_EQ(pthread_spin_unlock(&spin), 0);
    for (int i = 0; i < N; ++i) CHECK_EQ(pthread_create(&ts[i], NULL, spin_add, NULL), 0);
    for (int i = 0; i < N; ++i) CHECK_EQ(pthread_join(ts[i], NULL), 0);
    CHECK_EQ(spin_counter, N * 5000);
    CHECK_EQ(pthread_spin_destroy(&spin), 0);

    /* semaphores (their errno after a timed wait: errno.c) */
    sem_t s;
    CHECK_EQ(sem_init(&s, 0, 2), 0);
    CHECK_EQ(sem_getvalue(&s, &v), 0);
    CHECK_EQ(v, 2);
    CHECK_EQ(sem_trywait(&s), 0);
    CHECK_EQ(sem_wait(&s), 0);
    CHECK_EQ(sem_trywait(&s), -1);
    CHECK_EQ(sem_post(&s), 0);
    struct timespec dl = deadline_in(CLOCK_MONOTONIC, 10000);
    CHECK_EQ(sem_clockwait(&s, CLOCK_MONOTONIC, &dl), 0); /* a unit is there: no wait */
    dl = deadline_in(CLOCK_REALTIME, 10000);
    CHECK_EQ(sem_post(&s), 0);
    CHECK_EQ(sem_timedwait(&s, &dl), 0);
    CHECK_EQ(sem_post(&s), 0);
    CHECK_EQ(sem_getvalue(&s, &v), 0);
    CHECK_EQ(v, 1);
    CHECK_EQ(sem_destroy(&s), 0);

    /* producer / consumers */
    CHECK_EQ(sem_init(&items, 0, 0), 0);
    for (int i = 0; i < N; ++i) CHECK_EQ(pthread_create(&ts[i], NULL, consume, (void*)250L), 0);
    for (int i = 0; i < N * 250; ++i) CHECK_EQ(sem_post(&items), 0);
    for (int i = 0; i < N; ++i) {
        CHECK_EQ(pthread_join(ts[i], &r), 0);
        CHECK(r == NULL);
    }
    CHECK_EQ(consumed, N * 250);
    CHECK_EQ(sem_getvalue(&items, &v), 0);
    CHECK_EQ(v, 0);
    CHECK_EQ(sem_destroy(&items), 0);

    CHECKS_DONE("barrier_spin_sem");
}
