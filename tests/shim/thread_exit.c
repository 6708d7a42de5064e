/* Conformance: exit and _exit from a thread other than main end the whole
 * process with that status (lbzip2 ends with _exit): in children of fork,
 * whose status the parent checks, and at last in this process, whose final
 * line a thread prints before its _exit(0), while main waits in a join that
 * never returns. Under the shim, weft's reports (WEFT_STATS, which the test
 * reads) are written at _exit as at exit. */
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static void* call_exit(void* a) { exit((int)(long)a); }

static void* call__exit(void* a) { _exit((int)(long)a); }

static void* last_words(void* a) {
    (void)a;
    printf("thread_exit: %d checks passed\n", shim_checks);
    fflush(stdout);
    _exit(0);
}

/* A child that starts a thread running fn(status) and waits for it forever. */
static void child_exits_from_thread(void* (*fn)(void*), int status) {
    pid_t child = fork();
    if (child == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, fn, (void*)(long)status) != 0) _exit(99);
        pthread_join(t, NULL);
        _exit(98); /* not reached: the thread ended the process */
    }
    int got = -1;
    CHECK_EQ(waitpid(child, &got, 0), child);
    CHECK(WIFEXITED(got));
    CHECK_EQ(WEXITSTATUS(got), status);
}

int main(void) {
    child_exits_from_thread(call_exit, 5);
    child_exits_from_thread(call__exit, 7);
    pthread_t t;
    if (pthread_create(&t, NULL, last_words, NULL) != 0) return 2; /* no check: its count is printed */
    pthread_join(t, NULL);
    return 3; /* not reached */
}
