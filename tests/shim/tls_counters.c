/* __thread data is each thread's own: 48 threads each count in a __thread
 * counter, reading it, yielding or sleeping or waiting for a mutex (so that
 * the others run, on this worker or another, in the middle of the update) and
 * writing it back; each must end with its own count, and see the initial
 * value of a __thread variable with an initializer and a per-thread address.
 * The shim runs it with two workers and with one (CMakeLists.txt). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <unistd.h>

#include "check.h"

enum { threads = 48, rounds = 300 };

static __thread long counter;                  /* .tbss */
static __thread int initialised = 42;          /* .tdata */
static __thread char scratch[64] = "scratch";  /* a larger .tdata object */

static pthread_barrier_t all_started;
static uintptr_t counter_address[threads];

static void* count(void* a) {
    long id = (long)a;
    int fresh = initialised == 42 && scratch[0] == 's';
    initialised = (int)id;
    counter_address[id] = (uintptr_t)&counter;
    pthread_barrier_wait(&all_started); /* every thread's counter is alive now */
    if (!fresh) return (void*)1;
    for (int i = 0; i < rounds; ++i) {
        long c = counter;
        switch_away(i);
        counter = c + 1;
        scratch[i % 64] = (char)id;
    }
    for (int i = 0; i < 64; ++i)
        if (i < rounds && scratch[i] != (char)id) return (void*)2;
    if (initialised != (int)id) return (void*)3;
    return (void*)counter;
}

int main(void) {
    pthread_t ts[threads];
    void* r;
    counter = -1000; /* main's own: no thread may see it */
    CHECK_EQ(pthread_barrier_init(&all_started, NULL, threads), 0);
    for (long i = 0; i < threads; ++i) CHECK_EQ(pthread_create(&ts[i], NULL, count, (void*)i), 0);
    for (int i = 0; i < threads; ++i) {
        CHECK_EQ(pthread_join(ts[i], &r), 0);
        CHECK_EQ((long)r, rounds);
    }
    /* The threads' counters were all alive at once (the barrier): no two
     * threads shared one. */
    for (int i = 0; i < threads; ++i)
        for (int j = i + 1; j < threads; ++j) CHECK(counter_address[i] != counter_address[j]);
    CHECK_EQ(counter, -1000);
    CHECK_EQ(initialised, 42);
    CHECK_EQ(pthread_barrier_destroy(&all_started), 0);
    CHECKS_DONE("tls_counters");
}
