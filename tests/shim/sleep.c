/* Conformance: sched_yield, nanosleep, usleep, sleep, clock_nanosleep. Under
 * the shim (run with one worker) they must block only the calling thread: a
 * thread that counts while main sleeps must have counted during the sleep. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "check.h"

static volatile long count;
static volatile int done;

static void* counter(void* a) {
    (void)a;
    while (!done) {
        ++count;
        sched_yield();
    }
    return NULL;
}

/* Runs sleeper() while counter() runs; returns how much it counted meanwhile. */
static long counted_during(void (*sleeper)(void)) {
    long before = count;
    long long t0 = now_ns(CLOCK_MONOTONIC);
    sleeper();
    if (now_ns(CLOCK_MONOTONIC) - t0 < 9000000LL) {
        fprintf(stderr, "slept less than asked\n");
        exit(1);
    }
    return count - before;
}

static void do_nanosleep(void) {
    struct timespec ts = {0, 10000000L};
    if (nanosleep(&ts, NULL) != 0) exit(3);
}
static void do_usleep(void) {
    if (usleep(10000) != 0) exit(3);
}
static void do_clock_rel(void) {
    struct timespec ts = {0, 10000000L};
    if (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL) != 0) exit(3);
}
static void do_clock_abs(void) {
    struct timespec ts = deadline_in(CLOCK_MONOTONIC, 10);
    if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) exit(3);
}
static void do_clock_abs_rt(void) {
    struct timespec ts = deadline_in(CLOCK_REALTIME, 10);
    if (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) != 0) exit(3);
}

int main(void) {
    struct timespec bad = {0, 2000000000L};
    errno = 0;
    CHECK_EQ(nanosleep(&bad, NULL), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, NULL), EINVAL);
    CHECK_EQ(sched_yield(), 0);
    CHECK_EQ(sleep(0), 0);
    CHECK_EQ(usleep(0), 0);

    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, counter, NULL), 0);
    sched_yield();
    CHECK(counted_during(do_nanosleep) > 0);
    CHECK(counted_during(do_usleep) > 0);
    CHECK(counted_during(do_clock_rel) > 0);
    CHECK(counted_during(do_clock_abs) > 0);
    CHECK(counted_during(do_clock_abs_rt) > 0);
    long long t0 = now_ns(CLOCK_MONOTONIC);
    CHECK_EQ(sleep(1), 0);
    CHECK(now_ns(CLOCK_MONOTONIC) - t0 >= 999000000LL);
    done = 1;
    CHECK_EQ(pthread_join(t, NULL), 0);

    CHECKS_DONE("sleep");
}
