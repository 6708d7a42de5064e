/* fork() while other threads are inside the runtime's short critical sections:
 * 32 threads lock and unlock one mutex, without pause but a yield, while main
 * forks 100 times. The atfork handlers lock the mutex
 * before the copy and unlock it after, in the parent and in the child; each
 * child then locks it again, waits on the condition variable with a timeout,
 * creates and joins a thread, and exits 0. A contender that was in the middle
 * of queueing itself on the mutex (holding its internal lock) when the process
 * was copied must not leave that lock held in the child, where no thread would
 * ever release it: every child must exit within its deadline. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

enum { ncontenders = 32, nforks = 100, child_deadline_s = 20 };

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static long counter;
static atomic_int stop;
static atomic_int started;

static void prepare(void) { pthread_mutex_lock(&m); }
static void parent(void) { pthread_mutex_unlock(&m); }
static void child(void) { pthread_mutex_unlock(&m); }

static void* contend(void* arg) {
    (void)arg;
    atomic_fetch_add(&started, 1);
    while (!atomic_load(&stop)) {
        pthread_mutex_lock(&m);
        ++counter;
        pthread_mutex_unlock(&m);
        sched_yield();
    }
    return NULL;
}

static void* nothing(void* arg) { return arg; }

static void in_child(void) {
    if (pthread_mutex_lock(&m) != 0) _exit(2);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_nsec += 1000000;
    if (deadline.tv_nsec >= 1000000000) {
        deadline.tv_nsec -= 1000000000;
        deadline.tv_sec += 1;
    }
    /* Nothing signals it: the wait ends by its timeout. */
    if (pthread_cond_timedwait(&c, &m, &deadline) != ETIMEDOUT) _exit(3);
    if (pthread_mutex_unlock(&m) != 0) _exit(4);
    pthread_t t;
    void* r = NULL;
    if (pthread_create(&t, NULL, nothing, &r) != 0 || pthread_join(t, &r) != 0 || r != &r) _exit(5);
    _exit(0);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Waits for the child, killing it if it has not exited by the deadline. */
static int wait_child(pid_t pid, int round) {
    struct timespec pause = {0, 1000000};
    double deadline = now_s() + child_deadline_s;
    while (now_s() < deadline) {
        int status;
        pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid) return status;
        if (got != 0) {
            perror("fork_contended: waitpid");
            exit(1);
        }
        nanosleep(&pause, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    fprintf(stderr, "fork_contended: the child of fork %d did not exit within %d s; killed\n", round,
            (int)child_deadline_s);
    exit(1);
}

int main(void) {
    CHECK_EQ(pthread_atfork(prepare, parent, child), 0);
    pthread_t t[ncontenders];
    for (int i = 0; i < ncontenders; ++i) CHECK_EQ(pthread_create(&t[i], NULL, contend, NULL), 0);
    /* Every thread past its start: a sanitizer's runtime (ASan's thread
     * registry) is not copied whole in the middle of a thread's start. */
    while (atomic_load(&started) < ncontenders) sched_yield();
    for (int round = 0; round < nforks; ++round) {
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) in_child();
        int status = wait_child(pid, round);
        CHECK(WIFEXITED(status));
        CHECK_EQ(WEXITSTATUS(status), 0);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < ncontenders; ++i) CHECK_EQ(pthread_join(t[i], NULL), 0);
    CHECK(counter > 0);
    CHECKS_DONE("fork_contended");
}
