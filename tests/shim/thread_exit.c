/* Conformance: exit and _exit from a thread other than main end the whole
 * process with that status (lbzip2 ends with _exit), and so does a signal
 * whose default action ends it (kill to the process, pthread_kill to another
 * thread, abort): in children of fork, whose status the parent checks, and at
 * last in this process, whose final
 * line a thread prints before its _exit(0), while main waits in a join that
 * never returns. Under the shim, weft's reports (WEFT_STATS, which the test
 * reads) are written at _exit as at exit. */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static void* call_exit(void* a) { exit((int)(long)a); }

static void* call__exit(void* a) { _exit((int)(long)a); }

static void* sleeper(void* a) {
    (void)a;
    for (;;) sleep(1);
    return NULL;
}

static void* call_kill(void* a) {
    kill(getpid(), (int)(long)a);
    for (;;) sleep(1); /* not reached */
    return NULL;
}

static void* call_pthread_kill(void* a) {
    pthread_t other;
    pthread_create(&other, NULL, sleeper, NULL);
    pthread_kill(other, (int)(long)a);
    for (;;) sleep(1); /* not reached */
    return NULL;
}

static void* call_abort(void* a) {
    (void)a;
    abort();
}

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

/* A child whose thread runs fn(sig), which must end it by signal `sig`. */
static void child_ends_by_signal(void* (*fn)(void*), int sig) {
    pid_t child = fork();
    if (child == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, fn, (void*)(long)sig) != 0) _exit(99);
        pthread_join(t, NULL);
        _exit(98);
    }
    int got = -1;
    CHECK_EQ(waitpid(child, &got, 0), child);
    CHECK(WIFSIGNALED(got));
    CHECK_EQ(WTERMSIG(got), sig);
}

int main(void) {
    child_exits_from_thread(call_exit, 5);
    child_exits_from_thread(call__exit, 7);
    child_ends_by_signal(call_kill, SIGTERM);
    child_ends_by_signal(call_pthread_kill, SIGUSR1);
    child_ends_by_signal(call_abort, SIGABRT);
    pthread_t t;
    if (pthread_create(&t, NULL, last_words, NULL) != 0) return 2; /* no check: its count is printed */
    pthread_join(t, NULL);
    return 3; /* not reached */
}
