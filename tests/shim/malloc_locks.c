/* Threads that call C library functions which allocate while holding the C
 * library's own locks (setenv: the environment lock; printf to a new stream:
 * its stream lock), under the dfs quota with allocations far above it. The
 * shim takes no quota decision for allocations the C library makes: a thread
 * switched out inside setenv would leave the lock held, and another weft
 * thread taking it would block its worker (all of them, in the end). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

enum { nthreads = 8, rounds = 200, value_bytes = 4096 };

static void* churn_env(void* arg) {
    long id = (long)arg;
    char name[32], value[value_bytes];
    memset(value, 'a' + (int)id, sizeof value - 1);
    value[sizeof value - 1] = '\0';
    for (int i = 0; i < rounds; ++i) {
        snprintf(name, sizeof name, "SHIM_LOCKS_%ld_%d", id, i % 16);
        value[0] = (char)('a' + i % 26);
        if (setenv(name, value, 1) != 0) return (void*)1; /* (getenv here would race with the others' setenv) */
        FILE* f = fopen("/dev/null", "w");
        if (f == NULL) return (void*)1;
        fprintf(f, "%s %d\n", value, i); /* the stream's buffer: allocated under its lock */
        fclose(f);
    }
    return NULL;
}

int main(void) {
    pthread_t t[nthreads];
    for (long i = 0; i < nthreads; ++i) CHECK_EQ(pthread_create(&t[i], NULL, churn_env, (void*)i), 0);
    for (int i = 0; i < nthreads; ++i) {
        void* r;
        CHECK_EQ(pthread_join(t[i], &r), 0);
        CHECK(r == NULL);
    }
    for (long i = 0; i < nthreads; ++i) {
        char name[32];
        snprintf(name, sizeof name, "SHIM_LOCKS_%ld_%d", i, (rounds - 1) % 16);
        const char* got = getenv(name);
        CHECK(got != NULL && got[0] == (char)('a' + (rounds - 1) % 26) && got[1] == (char)('a' + i));
        CHECK_EQ(strlen(got), value_bytes - 1);
    }
    CHECKS_DONE("malloc_locks");
}
