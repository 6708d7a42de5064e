/* Conformance: a signal interrupts a thread blocked in a system call, as
 * signal(7) ("Interruption of system calls and library functions by signal
 * handlers") has it. SIGUSR1, sent by pthread_kill from another thread or by
 * kill(getpid()) while only the blocked thread lets it through, runs its
 * handler on that thread, and:
 *   - read on a pipe fails with EINTR when the handler has no SA_RESTART, and
 *     with SA_RESTART resumes and returns the data written after the signal;
 *   - poll, select, epoll_wait, ppoll with a mask that lets the signal through
 *     (the thread itself blocks it), and nanosleep fail with EINTR even with
 *     SA_RESTART;
 *   - a thread that blocks the signal is not interrupted: its read returns the
 *     data and the handler never runs.
 * Run with one worker under the shim: a call that held the worker would stop
 * main from sending. alarm() bounds each case: a call the signal does not
 * interrupt ends the process by SIGALRM instead of hanging. With an argument
 * N, only case N runs (cases count from 1 in the order below). */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <unistd.h>

#include "check.h"

static volatile sig_atomic_t handled;
static pthread_t handled_on;

static void on_usr1(int sig) {
    (void)sig;
    ++handled;
    handled_on = pthread_self();
}

static void set_handler(int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
}

static sigset_t usr1(void) {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    return s;
}

enum call {
    by_read,
    by_poll,
    by_select,
    by_epoll_wait,
    by_ppoll_mask,
    by_nanosleep
};

struct blocked {
    enum call call;
    int unblock;           /* whether the thread lets SIGUSR1 through (before the call) */
    int fd;                /* the pipe's read end */
    volatile int entering; /* set just before the call */
    volatile int done;
    long result;
    int err;
    char byte;
    long slept_left_ns; /* nanosleep's *rem */
};

static void* blocker(void* a) {
    struct blocked* b = a;
    sigset_t s = usr1();
    if (b->unblock) pthread_sigmask(SIG_UNBLOCK, &s, NULL);
    struct pollfd p = {b->fd, POLLIN, 0};
    sigset_t none;
    sigemptyset(&none);
    struct timespec ten_s = {10, 0}, rem = {0, 0};
    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(b->fd, &rd);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data = {.fd = b->fd}}, got;
    CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, b->fd, &ev), 0);
    b->entering = 1;
    errno = 0;
    switch (b->call) {
    case by_read: b->result = read(b->fd, &b->byte, 1); break;
    case by_poll: b->result = poll(&p, 1, -1); break;
    case by_select: b->result = select(b->fd + 1, &rd, NULL, NULL, NULL); break;
    case by_epoll_wait: b->result = epoll_wait(ep, &got, 1, -1); break;
    case by_ppoll_mask: b->result = ppoll(&p, 1, NULL, &none); break;
    case by_nanosleep:
        b->result = nanosleep(&ten_s, &rem);
        b->slept_left_ns = rem.tv_sec * 1000000000L + rem.tv_nsec;
        break;
    }
    b->err = errno;
    close(ep);
    b->done = 1;
    return NULL;
}

static void pause_ms(long ms) {
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

enum sender {
    by_pthread_kill,
    by_kill
};

/* Sends SIGUSR1 to t (pthread_kill) or to the process (kill) until `until`
 * holds: once only when the signal comes after the thread is in its call, but
 * a thread still on its way there when the first one came may need another. */
static void send_until(pthread_t t, enum sender how, volatile int* flag, volatile sig_atomic_t* count) {
    for (;;) {
        if (how == by_pthread_kill)
            pthread_kill(t, SIGUSR1);
        else
            kill(getpid(), SIGUSR1);
        for (int i = 0; i < 20; ++i) {
            if ((flag != NULL && *flag) || (count != NULL && *count > 0)) return;
            pause_ms(10);
        }
    }
}

/* A SIGUSR1 left pending for the process (every thread but the one that
 * finished blocks it) is taken here, so that the next case starts clean. */
static void drain(void) {
    sigset_t s = usr1();
    struct timespec zero = {0, 0};
    while (sigtimedwait(&s, NULL, &zero) == SIGUSR1) {
    }
}

/* Runs `call` on a new thread, blocked, and interrupts it by `how`. */
static struct blocked interrupt(enum call call, enum sender how, int restart) {
    int p[2];
    CHECK_EQ(pipe(p), 0);
    set_handler(restart ? SA_RESTART : 0);
    handled = 0;
    struct blocked b;
    memset(&b, 0, sizeof b);
    b.call = call;
    b.unblock = call != by_ppoll_mask; /* ppoll's mask alone lets it through */
    b.fd = p[0];
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, blocker, &b), 0);
    while (!b.entering) pause_ms(1);
    pause_ms(50); /* into the call */
    if (restart && call == by_read) {
        /* The handler runs and the read goes on: the data written after it is
         * what the read returns. */
        send_until(t, how, NULL, &handled);
        pause_ms(50);
        CHECK(!b.done);
        CHECK_EQ(write(p[1], "x", 1), 1);
    } else {
        send_until(t, how, &b.done, NULL);
    }
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK(handled >= 1);
    CHECK(pthread_equal(handled_on, t));
    drain();
    close(p[0]);
    close(p[1]);
    return b;
}

static int only; /* the one case to run, or 0 for all */
static int cases;

/* Whether to run the next case; it gets 20 s. */
static int next_case(void) {
    ++cases;
    if (only != 0 && cases != only) return 0;
    alarm(20);
    return 1;
}

int main(int argc, char** argv) {
    only = argc > 1 ? atoi(argv[1]) : 0;
    /* Main, and every thread it creates, blocks SIGUSR1 unless it unblocks it:
     * a signal for the process then has only the blocked thread to go to. */
    sigset_t s = usr1();
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);

    for (int how = by_pthread_kill; how <= by_kill; ++how) {
        struct blocked b;
        /* read, no SA_RESTART: EINTR. */
        if (next_case()) {
            b = interrupt(by_read, how, 0);
            CHECK_EQ(b.result, -1);
            CHECK_EQ(b.err, EINTR);
        }
        /* read, SA_RESTART: resumes, and returns the byte written later. */
        if (next_case()) {
            b = interrupt(by_read, how, 1);
            CHECK_EQ(b.result, 1);
            CHECK_EQ(b.byte, 'x');
        }
        /* poll: EINTR, SA_RESTART or not. */
        if (next_case()) {
            b = interrupt(by_poll, how, 1);
            CHECK_EQ(b.result, -1);
            CHECK_EQ(b.err, EINTR);
        }
        /* select and epoll_wait: likewise. */
        if (next_case()) {
            b = interrupt(by_select, how, 1);
            CHECK_EQ(b.result, -1);
            CHECK_EQ(b.err, EINTR);
        }
        if (next_case()) {
            b = interrupt(by_epoll_wait, how, 1);
            CHECK_EQ(b.result, -1);
            CHECK_EQ(b.err, EINTR);
        }
        /* ppoll whose mask lets SIGUSR1 through, on a thread that blocks it. */
        if (next_case()) {
            b = interrupt(by_ppoll_mask, how, 1);
            CHECK_EQ(b.result, -1);
            CHECK_EQ(b.err, EINTR);
        }
        /* nanosleep: EINTR, and the time not slept in *rem. */
        if (next_case()) {
            b = interrupt(by_nanosleep, how, 1);
            CHECK_EQ(b.result, -1);
            CHECK_EQ(b.err, EINTR);
            CHECK(b.slept_left_ns > 1000000000L && b.slept_left_ns <= 10000000000L);
        }
    }

    /* A thread that blocks SIGUSR1 goes on reading; the handler does not run. */
    if (!next_case()) CHECKS_DONE("eintr");
    set_handler(0);
    handled = 0;
    int p[2];
    CHECK_EQ(pipe(p), 0);
    struct blocked b;
    memset(&b, 0, sizeof b);
    b.call = by_read;
    b.unblock = 0;
    b.fd = p[0];
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, blocker, &b), 0);
    while (!b.entering) pause_ms(1);
    pause_ms(50);
    CHECK_EQ(pthread_kill(t, SIGUSR1), 0);
    pause_ms(100);
    CHECK(!b.done);
    CHECK_EQ(write(p[1], "y", 1), 1);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(b.result, 1);
    CHECK_EQ(b.byte, 'y');
    CHECK_EQ(handled, 0);
    close(p[0]);
    close(p[1]);

    CHECKS_DONE("eintr");
}
