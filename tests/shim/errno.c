/* errno is each thread's own: a value set before a call that may switch to
 * another thread (a yield, a contended mutex, a sleep) is still there after
 * it, on whatever worker the thread resumes. */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <sched.h>
#include <unistd.h>

#include "check.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void* keep_errno(void* a) {
    long id = (long)a;
    for (int i = 0; i < 200; ++i) {
        errno = (int)(id * 1000 + i);
        switch_away(i);
        if (errno != (int)(id * 1000 + i)) return (void*)1;
    }
    return NULL;
}

int main(void) {
    pthread_t ts[8];
    void* r;
    for (long i = 0; i < 8; ++i) CHECK_EQ(pthread_create(&ts[i], NULL, keep_errno, (void*)(i + 1)), 0);
    for (int i = 0; i < 8; ++i) {
        CHECK_EQ(pthread_join(ts[i], &r), 0);
        CHECK(r == NULL);
    }
    /* a failed call's errno survives a blocking call */
    struct timespec bad = {0, -1};
    CHECK_EQ(nanosleep(&bad, NULL), -1);
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    sched_yield();
    CHECK_EQ(errno, EINVAL);
    /* semaphores: -1 and errno on failure, after timed waits */
    sem_t s;
    struct timespec dl;
    int v;
    CHECK_EQ(sem_init(&s, 0, (unsigned)SEM_VALUE_MAX + 1u), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(sem_init(&s, 0, 2), 0);
    CHECK_EQ(sem_getvalue(&s, &v), 0);
    CHECK_EQ(v, 2);
    CHECK_EQ(sem_trywait(&s), 0);
    CHECK_EQ(sem_wait(&s), 0);
    errno = 0;
    CHECK_EQ(sem_trywait(&s), -1);
    CHECK_EQ(errno, EAGAIN);
    dl = deadline_in(CLOCK_REALTIME, 20);
    CHECK_EQ(sem_timedwait(&s, &dl), -1);
    CHECK_EQ(errno, ETIMEDOUT);
    dl = deadline_in(CLOCK_MONOTONIC, 20);
    CHECK_EQ(sem_clockwait(&s, CLOCK_MONOTONIC, &dl), -1);
    CHECK_EQ(errno, ETIMEDOUT);
    dl.tv_nsec = 2000000000L;
    CHECK_EQ(sem_timedwait(&s, &dl), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(sem_post(&s), 0);
    CHECK_EQ(sem_getvalue(&s, &v), 0);
    CHECK_EQ(v, 1);
    CHECK_EQ(sem_destroy(&s), 0);

    CHECKS_DONE("errno");
}
