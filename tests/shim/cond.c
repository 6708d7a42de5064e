/* Conformance: condition variables on both clocks, static initializer. */
#define _GNU_SOURCE
#include <pthread.h>

#include "check.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int items, taken, stop;

static void* consumer(void* a) {
    (void)a;
    pthread_mutex_lock(&m);
    for (;;) {
        while (items == 0 && !stop) pthread_cond_wait(&c, &m);
        if (items == 0 && stop) break;
        --items;
        ++taken;
    }
    pthread_mutex_unlock(&m);
    return NULL;
}

static pthread_cond_t go;
static int released;
static void* wait_go(void* a) {
    (void)a;
    pthread_mutex_lock(&m);
    while (!released) pthread_cond_wait(&go, &m);
    pthread_mutex_unlock(&m);
    return NULL;
}

int main(void) {
    pthread_t ts[4];
    pthread_condattr_t a;
    clockid_t clk;

    /* producer / consumers with signal, then broadcast to stop */
    for (int i = 0; i < 4; ++i) CHECK_EQ(pthread_create(&ts[i], NULL, consumer, NULL), 0);
    for (int i = 0; i < 1000; ++i) {
        pthread_mutex_lock(&m);
        ++items;
        CHECK_EQ(pthread_cond_signal(&c), 0);
        pthread_mutex_unlock(&m);
    }
    pthread_mutex_lock(&m);
    stop = 1;
    CHECK_EQ(pthread_cond_broadcast(&c), 0);
    pthread_mutex_unlock(&m);
    for (int i = 0; i < 4; ++i) CHECK_EQ(pthread_join(ts[i], NULL), 0);
    CHECK_EQ(taken, 1000);

    /* broadcast wakes every waiter */
    CHECK_EQ(pthread_cond_init(&go, NULL), 0);
    for (int i = 0; i < 4; ++i) CHECK_EQ(pthread_create(&ts[i], NULL, wait_go, NULL), 0);
    pthread_mutex_lock(&m);
    released = 1;
    CHECK_EQ(pthread_cond_broadcast(&go), 0);
    pthread_mutex_unlock(&m);
    for (int i = 0; i < 4; ++i) CHECK_EQ(pthread_join(ts[i], NULL), 0);
    CHECK_EQ(pthread_cond_destroy(&go), 0);

    /* attributes: the clock */
    CHECK_EQ(pthread_condattr_init(&a), 0);
    CHECK_EQ(pthread_condattr_getclock(&a, &clk), 0);
    CHECK_EQ(clk, CLOCK_REALTIME);
    CHECK_EQ(pthread_condattr_setclock(&a, CLOCK_THREAD_CPUTIME_ID), EINVAL);
    CHECK_EQ(pthread_condattr_setclock(&a, CLOCK_MONOTONIC), 0);
    CHECK_EQ(pthread_condattr_getclock(&a, &clk), 0);
    CHECK_EQ(clk, CLOCK_MONOTONIC);
    int v;
    CHECK_EQ(pthread_condattr_getpshared(&a, &v), 0);
    CHECK_EQ(v, PTHREAD_PROCESS_PRIVATE);
    CHECK_EQ(pthread_condattr_setpshared(&a, 12345), EINVAL);

    /* timed waits on each clock time out, with the mutex held again */
    pthread_cond_t mono;
    CHECK_EQ(pthread_cond_init(&mono, &a), 0);
    CHECK_EQ(pthread_condattr_destroy(&a), 0);
    struct timespec dl;
    long long t0;
    pthread_mutex_lock(&m);
    dl = deadline_in(CLOCK_MONOTONIC, 30);
    t0 = now_ns(CLOCK_MONOTONIC);
    CHECK_EQ(pthread_cond_timedwait(&mono, &m, &dl), ETIMEDOUT);
    CHECK(now_ns(CLOCK_MONOTONIC) - t0 >= 29000000LL);
    CHECK_EQ(pthread_mutex_trylock(&m), EBUSY); /* relocked */
    dl = deadline_in(CLOCK_REALTIME, 30);
    t0 = now_ns(CLOCK_MONOTONIC);
    CHECK_EQ(pthread_cond_timedwait(&c, &m, &dl), ETIMEDOUT);
    CHECK(now_ns(CLOCK_MONOTONIC) - t0 >= 29000000LL);
    dl = deadline_in(CLOCK_MONOTONIC, 30);
    CHECK_EQ(pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &dl), ETIMEDOUT);
    dl = deadline_in(CLOCK_REALTIME, 30);
    CHECK_EQ(pthread_cond_clockwait(&mono, &m, CLOCK_REALTIME, &dl), ETIMEDOUT);
    dl.tv_nsec = 2000000000L;
    CHECK_EQ(pthread_cond_timedwait(&c, &m, &dl), EINVAL);
    pthread_mutex_unlock(&m);
    CHECK_EQ(pthread_cond_destroy(&mono), 0);

    CHECKS_DONE("cond");
}
