/* Conformance: signals per thread. pthread_sigmask is the calling thread's and
 * a new thread inherits it; pthread_kill runs the handler on the thread it
 * names, or gives the signal to its sigwait; sigwait, sigwaitinfo and
 * sigtimedwait block only the waiting thread (run with one worker under the
 * shim: a wait that held the worker would stop main from sending); raise and
 * kill to the process itself run the handler on the sender before they return
 * when it alone lets the signal through; a signal another process sends
 * reaches the thread waiting for it; sigsuspend, sigpending; pthread_kill(t, 0)
 * on a live thread. (On a joined thread glibc's answer is undefined, 0 or
 * ESRCH; the shim's, ESRCH, is checked by shim_only/kill_joined.c.) */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static volatile sig_atomic_t handled;
static pthread_t handled_on;

static void on_signal(int sig) {
    handled = sig;
    handled_on = pthread_self();
}

static void set_handler(int sig, void (*fn)(int)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(sig, &sa, NULL), 0);
}

static sigset_t just(int sig) {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    return s;
}

static int blocks(int sig) {
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    return sigismember(&cur, sig);
}

/* Inherits main's mask (SIGUSR1 blocked), unblocks SIGUSR1 for itself only. */
static void* unblocker(void* a) {
    (void)a;
    CHECK(blocks(SIGUSR1) == 1);
    sigset_t s = just(SIGUSR1);
    CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &s, NULL), 0);
    CHECK(blocks(SIGUSR1) == 0);
    return NULL;
}

/* Waits, with SIGUSR1 unblocked, until main's pthread_kill has run the handler
 * on this thread (a yield lets it be delivered). */
static volatile int target_ready;
static void* target(void* a) {
    (void)a;
    sigset_t s = just(SIGUSR1);
    pthread_sigmask(SIG_UNBLOCK, &s, NULL);
    target_ready = 1;
    while (handled == 0) sched_yield();
    return (void*)(long)(pthread_equal(handled_on, pthread_self()) ? 1 : 0);
}

static void* waiter(void* a) {
    sigset_t s = just((int)(long)a);
    int sig = 0;
    CHECK_EQ(sigwait(&s, &sig), 0);
    return (void*)(long)sig;
}

static void* info_waiter(void* a) {
    (void)a;
    sigset_t s = just(SIGUSR2);
    siginfo_t info;
    int sig = sigwaitinfo(&s, &info);
    CHECK_EQ(sig, SIGUSR2);
    CHECK_EQ(info.si_signo, SIGUSR2);
    CHECK_EQ(info.si_pid, getpid());
    return NULL;
}

/* kill(getpid(), SIGUSR1) from the one thread that lets SIGUSR1 through. */
static void* self_killer(void* a) {
    (void)a;
    sigset_t s = just(SIGUSR1);
    pthread_sigmask(SIG_UNBLOCK, &s, NULL);
    handled = 0;
    CHECK_EQ(kill(getpid(), SIGUSR1), 0);
    CHECK_EQ(handled, SIGUSR1);
    CHECK(pthread_equal(handled_on, pthread_self()));
    handled = 0;
    CHECK_EQ(raise(SIGUSR1), 0);
    CHECK_EQ(handled, SIGUSR1);
    CHECK(pthread_equal(handled_on, pthread_self()));
    return NULL;
}

static pthread_t main_thread;
static void* wake_main(void* a) {
    (void)a;
    CHECK_EQ(pthread_kill(main_thread, SIGUSR2), 0);
    return NULL;
}

int main(void) {
    main_thread = pthread_self();
    set_handler(SIGUSR1, on_signal);
    set_handler(SIGUSR2, on_signal);
    sigset_t s = just(SIGUSR1);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);
    CHECK_EQ(pthread_sigmask(12345, &s, NULL), EINVAL);

    /* The mask is per thread, inherited at create. */
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, unblocker, NULL), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK(blocks(SIGUSR1) == 1);

    /* pthread_kill runs the handler on the thread it names. */
    void* ret = NULL;
    handled = 0;
    CHECK_EQ(pthread_create(&t, NULL, target, NULL), 0);
    while (!target_ready) sched_yield();
    CHECK_EQ(pthread_kill(t, 0), 0);
    CHECK_EQ(pthread_kill(t, SIGUSR1), 0);
    CHECK_EQ(pthread_join(t, &ret), 0);
    CHECK_EQ((long)ret, 1);
    handled = 0;
    CHECK_EQ(pthread_kill(pthread_self(), 4242), EINVAL);

    /* sigwait: the signal is blocked (inherited), the waiter takes it. */
    sigset_t both;
    sigemptyset(&both);
    sigaddset(&both, SIGUSR2);
    sigaddset(&both, SIGTERM);
    sigaddset(&both, SIGHUP);
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &both, NULL), 0);
    CHECK_EQ(pthread_create(&t, NULL, waiter, (void*)(long)SIGUSR2), 0);
    usleep(20000); /* the waiter is (usually) parked in sigwait by now */
    CHECK_EQ(pthread_kill(t, SIGUSR2), 0);
    CHECK_EQ(pthread_join(t, &ret), 0);
    CHECK_EQ((long)ret, SIGUSR2);
    CHECK_EQ(handled, 0); /* taken by sigwait: no handler ran */

    CHECK_EQ(pthread_create(&t, NULL, info_waiter, NULL), 0);
    usleep(20000);
    CHECK_EQ(pthread_kill(t, SIGUSR2), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);

    /* sigtimedwait: nothing pending. */
    sigset_t usr2 = just(SIGUSR2);
    struct timespec zero = {0, 0}, short_wait = {0, 20000000};
    errno = 0;
    CHECK_EQ(sigtimedwait(&usr2, NULL, &zero), -1);
    CHECK_EQ(errno, EAGAIN);
    errno = 0;
    CHECK_EQ(sigtimedwait(&usr2, NULL, &short_wait), -1);
    CHECK_EQ(errno, EAGAIN);

    /* A process-directed signal goes to the thread waiting for it: from this
     * process (kill) and from another (a child of fork). */
    CHECK_EQ(pthread_create(&t, NULL, waiter, (void*)(long)SIGTERM), 0);
    usleep(20000);
    CHECK_EQ(kill(getpid(), SIGTERM), 0);
    CHECK_EQ(pthread_join(t, &ret), 0);
    CHECK_EQ((long)ret, SIGTERM);
    CHECK_EQ(pthread_create(&t, NULL, waiter, (void*)(long)SIGHUP), 0);
    pid_t child = fork();
    if (child == 0) _exit(kill(getppid(), SIGHUP) == 0 ? 0 : 1);
    int status = -1;
    CHECK_EQ(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ(pthread_join(t, &ret), 0);
    CHECK_EQ((long)ret, SIGHUP);

    /* kill and raise run the handler on the sender before they return when
     * it alone lets the signal through (main blocks it). */
    CHECK_EQ(pthread_create(&t, NULL, self_killer, NULL), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);

    /* sigpending, then sigwait takes the pending signal. */
    handled = 0;
    CHECK_EQ(raise(SIGUSR1), 0);
    CHECK_EQ(handled, 0);
    sigset_t pending;
    CHECK_EQ(sigpending(&pending), 0);
    CHECK_EQ(sigismember(&pending, SIGUSR1), 1);
    int sig = 0;
    CHECK_EQ(sigwait(&s, &sig), 0);
    CHECK_EQ(sig, SIGUSR1);
    CHECK_EQ(sigpending(&pending), 0);
    CHECK_EQ(sigismember(&pending, SIGUSR1), 0);

    /* Unblocking a pending signal runs its handler before pthread_sigmask
     * returns. */
    CHECK_EQ(raise(SIGUSR1), 0);
    CHECK_EQ(handled, 0);
    CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &s, NULL), 0);
    CHECK_EQ(handled, SIGUSR1);
    CHECK(pthread_equal(handled_on, pthread_self()));
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);

    /* sigsuspend: returns -1/EINTR once SIGUSR2, which another thread sends
     * to main, has run its handler. */
    handled = 0;
    CHECK_EQ(pthread_create(&t, NULL, wake_main, NULL), 0);
    sigset_t none;
    sigemptyset(&none);
    errno = 0;
    CHECK_EQ(sigsuspend(&none), -1);
    CHECK_EQ(errno, EINTR);
    CHECK_EQ(handled, SIGUSR2);
    CHECK(blocks(SIGUSR2) == 1); /* the mask is back */
    CHECK_EQ(pthread_join(t, NULL), 0);

    /* An ignored signal does nothing. */
    set_handler(SIGUSR1, SIG_IGN);
    CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &s, NULL), 0);
    handled = 0;
    CHECK_EQ(raise(SIGUSR1), 0);
    CHECK_EQ(handled, 0);
    CHECKS_DONE("signals");
}
