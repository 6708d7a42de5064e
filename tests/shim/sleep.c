/* Conformance: sched_yield, nanosleep, usleep, sleep, clock_nanosleep. Under
 * the shim (run with one worker) they must block only the calling thread: a
 * thread that yields in a loop must run while main sleeps. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "check.h"

static volatile int sleeping, seen_sleeping, done;

static void* counter(void* a) {
    (void)a;
    while (!done) {
        if (sleeping) seen_sleeping = 1;
        sched_yield();
    }
    return NULL;
}

/* Whether the counting thread ran while sleeper() slept: tried up to 100
 * times, since a loaded machine may not run the process at all during one
 * 10 ms sleep. A sleep that held the only worker never lets it run. */
static int ran_during(void (*sleeper)(void)) {
    seen_sleeping = 0;
    for (int i = 0; i < 100 && !seen_sleeping; ++i) {
        long long t0 = now_ns(CLOCK_MONOTONIC);
        sleeping = 1;
        sleeper();
        sleeping = 0;
        if (now_ns(CLOCK_MONOTONIC) - t0 < 9000000LL) {
            fprintf(stderr, "slept less than asked\n");
            exit(1);
        }
    }
    return seen_sleeping;
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
    CHECK(ran_during(do_nanosleep));
    CHECK(ran_during(do_usleep));
    CHECK(ran_during(do_clock_rel));
    CHECK(ran_during(do_clock_abs));
    CHECK(ran_during(do_clock_abs_rt));
    long long t0 = now_ns(CLOCK_MONOTONIC);
    CHECK_EQ(sleep(1), 0);
    CHECK(now_ns(CLOCK_MONOTONIC) - t0 >= 999000000LL);
    done = 1;
    CHECK_EQ(pthread_join(t, NULL), 0);

    CHECKS_DONE("sleep");
}
