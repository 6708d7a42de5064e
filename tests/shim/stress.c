/* Stress: a thread per recursive call (fib(n) runs 2*fib(n+1)-1 threads:
 * 392,835 for n = 26, the default; argv[1] sets n: glibc's threads, all
 * alive at once, cannot create that many, so the glibc run uses less), each with a key value whose destructor
 * counts it, a once every thread calls, timed waits that time out and timed
 * waits that are woken, and detached threads still running (sleeping,
 * waiting) when main returns. The totals are checked exactly. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "check.h"

static long serial_fib(long n) { return n < 2 ? n : serial_fib(n - 1) + serial_fib(n - 2); }

static pthread_key_t key;
static long dtor_calls;
static void count_dtor(void* v) {
    (void)v;
    __atomic_fetch_add(&dtor_calls, 1, __ATOMIC_RELAXED);
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_runs;
static void once_init(void) { ++once_runs; }

static long threads_run;

static void* fib(void* a) {
    long n = (long)a;
    __atomic_fetch_add(&threads_run, 1, __ATOMIC_RELAXED);
    pthread_once(&once, once_init);
    pthread_setspecific(key, a == NULL ? (void*)1 : a);
    if (n < 2) return (void*)n;
    pthread_t t1, t2;
    void *r1, *r2;
    if (pthread_create(&t1, NULL, fib, (void*)(n - 1)) != 0) abort();
    if (pthread_create(&t2, NULL, fib, (void*)(n - 2)) != 0) abort();
    if (pthread_join(t1, &r1) != 0 || pthread_join(t2, &r2) != 0) abort();
    return (void*)((long)r1 + (long)r2);
}

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int woken_flag;
static long timeouts, wakeups;

static void* timed_waiter(void* a) {
    long wait_ms = (long)a;
    pthread_mutex_lock(&m);
    struct timespec dl = deadline_in(CLOCK_REALTIME, wait_ms);
    int rc = 0;
    while (!woken_flag && rc == 0) rc = pthread_cond_timedwait(&c, &m, &dl);
    if (rc == ETIMEDOUT)
        ++timeouts;
    else if (rc == 0)
        ++wakeups;
    pthread_mutex_unlock(&m);
    return NULL;
}

static void* detached_forever(void* a) {
    (void)a;
    for (;;) {
        usleep(1000);
        pthread_mutex_lock(&m);
        pthread_cond_wait(&c, &m); /* nobody signals after the broadcast below */
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

int main(int argc, char** argv) {
    long n = argc > 1 ? atol(argv[1]) : 26;
    long threads = 2 * serial_fib(n + 1) - 1;
    CHECK_EQ(pthread_key_create(&key, count_dtor), 0);
    pthread_t t;
    void* r;
    CHECK_EQ(pthread_create(&t, NULL, fib, (void*)n), 0);
    CHECK_EQ(pthread_join(t, &r), 0);
    CHECK_EQ((long)r, serial_fib(n));
    CHECK_EQ(threads_run, threads);
    CHECK_EQ(dtor_calls, threads);
    CHECK_EQ(once_runs, 1);

    /* 100 timed waiters: 50 time out (10 ms), 50 are woken (10 s deadline) */
    pthread_t w[100];
    for (long i = 0; i < 50; ++i) CHECK_EQ(pthread_create(&w[i], NULL, timed_waiter, (void*)10L), 0);
    for (int i = 0; i < 50; ++i) CHECK_EQ(pthread_join(w[i], NULL), 0);
    CHECK_EQ(timeouts, 50);
    for (long i = 50; i < 100; ++i) CHECK_EQ(pthread_create(&w[i], NULL, timed_waiter, (void*)10000L), 0);
    usleep(20000);
    pthread_mutex_lock(&m);
    woken_flag = 1;
    pthread_cond_broadcast(&c);
    pthread_mutex_unlock(&m);
    for (int i = 50; i < 100; ++i) CHECK_EQ(pthread_join(w[i], NULL), 0);
    CHECK_EQ(wakeups, 50);

    /* detached threads that never end: main's return ends the process */
    pthread_attr_t a;
    CHECK_EQ(pthread_attr_init(&a), 0);
    CHECK_EQ(pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED), 0);
    for (int i = 0; i < 100; ++i) CHECK_EQ(pthread_create(&t, &a, detached_forever, NULL), 0);
    CHECK_EQ(pthread_attr_destroy(&a), 0);
    usleep(5000);

    CHECKS_DONE("stress");
}
