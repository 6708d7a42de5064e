/* A thread forks: the child, which is that thread alone, sees the thread's
 * own __thread data and errno and can use the C library (stdio, exit status);
 * glibc's child-side fork code takes the thread's control block off its list
 * of threads, so under the shim that block must be one glibc can handle. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static __thread int mine;

static void* fork_here(void* a) {
    mine = (int)(long)a;
    errno = EDOM;
    fflush(stdout);
    pid_t p = fork();
    if (p < 0) return (void*)1;
    if (p == 0) {
        int ok = mine == (int)(long)a && errno == EDOM;
        if (!ok) fprintf(stderr, "child of thread %ld: __thread %d, errno %d\n", (long)a, mine, errno);
        _exit(ok ? 40 + mine : 1);
    }
    int status = 0;
    if (waitpid(p, &status, 0) != p) return (void*)2;
    if (!WIFEXITED(status)) return (void*)3; /* killed: by a signal, say SIGSEGV */
    return (void*)(long)WEXITSTATUS(status);
}

int main(void) {
    pthread_t ts[3];
    void* r;
    for (long i = 0; i < 3; ++i) CHECK_EQ(pthread_create(&ts[i], NULL, fork_here, (void*)(i + 1)), 0);
    for (long i = 0; i < 3; ++i) {
        CHECK_EQ(pthread_join(ts[i], &r), 0);
        CHECK_EQ((long)r, 41 + i);
    }
    CHECKS_DONE("tls_fork");
}
