/* errno is each thread's own after a failed call: 32 threads each make a
 * call fail with an errno that depends on the thread (EBADF, ENOENT, EINVAL,
 * ENOTDIR), then yield, sleep or wait for a mutex while the others do the same,
 * on this worker or another, and must find their own errno afterwards, read
 * through the address the compiler took before the switch as well as afresh.
 * The shim runs it with two workers and with one (CMakeLists.txt). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "check.h"

enum { threads = 32, rounds = 100 };


/* Fails with the errno thread `id` expects. */
static int fail(long id) {
    switch (id % 4) {
    case 0: return close(-1);                                   /* EBADF */
    case 1: return open("/nonexistent/weft-tls-errno", O_RDONLY); /* ENOENT */
    case 2: return (int)lseek(0, 0, 12345);                     /* EINVAL (whence) */
    default: return open("/dev/null/x", O_RDONLY);              /* ENOTDIR */
    }
}

static const int expected[4] = {EBADF, ENOENT, EINVAL, ENOTDIR};

static void* keep(void* a) {
    long id = (long)a;
    int* cached = &errno; /* the address glibc's const __errno_location gives here */
    for (int i = 0; i < rounds; ++i) {
        if (fail(id) != -1) return (void*)1;
        switch_away(i);
        if (*cached != expected[id % 4] || errno != expected[id % 4]) return (void*)2;
    }
    return NULL;
}

int main(void) {
    pthread_t ts[threads];
    void* r;
    for (long i = 0; i < threads; ++i) CHECK_EQ(pthread_create(&ts[i], NULL, keep, (void*)i), 0);
    for (int i = 0; i < threads; ++i) {
        CHECK_EQ(pthread_join(ts[i], &r), 0);
        CHECK(r == NULL);
    }
    CHECKS_DONE("tls_errno");
}
