/* Conformance: a signal reaches a thread blocked on a semaphore, a mutex, a
 * condition variable or a join, as signal(7) ("Interruption of system calls
 * and library functions by signal handlers") has it on Linux:
 *   - sem_timedwait and sem_clockwait fail with EINTR once the handler has
 *     run, SA_RESTART or not, and so does sem_wait when the handler has no
 *     SA_RESTART; with SA_RESTART sem_wait goes on waiting (Linux restarts
 *     the futex wait under it: glibc 2.36 on Linux 6 does, whatever signal(7)
 *     says) and returns 0 after a sem_post. The signal comes from setitimer
 *     (SIGALRM, for the process: only the waiting thread lets it through) or
 *     from pthread_kill by another thread (SIGUSR1);
 *   - pthread_mutex_lock, pthread_mutex_timedlock, pthread_join and
 *     pthread_cond_wait run the handler on the waiting thread while it waits,
 *     then go on waiting, and return 0 once the mutex is free, the thread has
 *     ended, the condition is signalled.
 * Every wait main makes for the others is bounded (wait_for): a wait a signal
 * does not reach fails the program with a message instead of hanging. With
 * an argument N, only case N runs (cases count from 1 in main's order). */
#define _GNU_SOURCE
#include <semaphore.h>
#include <signal.h>
#include <sys/time.h>

#include "check.h"

static volatile sig_atomic_t handled;
static pthread_t handled_on;

static void on_signal(int sig) {
    (void)sig;
    ++handled;
    handled_on = pthread_self();
}

static void set_handler(int sig, int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(sig, &sa, NULL), 0);
}

static sigset_t both(void) {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    sigaddset(&s, SIGALRM);
    return s;
}

static void pause_ms(long ms) {
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

/* Waits up to 5 s for *flag; fails the program, naming `what`, if it is not set. */
static void wait_for(volatile int* flag, volatile sig_atomic_t* count, const char* what) {
    for (int i = 0; i < 500; ++i) {
        if ((flag != NULL && *flag) || (count != NULL && *count > 0)) return;
        pause_ms(10);
    }
    fprintf(stderr, "sync_eintr: no %s within 5 s (handlers run: %d)\n", what, (int)handled);
    exit(1);
}

/* Sends SIGUSR1 to t until the flag or the count is set (a thread still on its
 * way into its wait when one came may need another), for up to 5 s. */
static void send_until(pthread_t t, volatile int* flag, volatile sig_atomic_t* count, const char* what) {
    for (int i = 0; i < 25; ++i) {
        CHECK_EQ(pthread_kill(t, SIGUSR1), 0);
        for (int j = 0; j < 20; ++j) {
            if ((flag != NULL && *flag) || (count != NULL && *count > 0)) return;
            pause_ms(10);
        }
    }
    fprintf(stderr, "sync_eintr: no %s within 5 s\n", what);
    exit(1);
}

/* Every thread lets SIGUSR1 and SIGALRM through only once it says so. */
static void let_signals_through(void) {
    sigset_t s = both();
    CHECK_EQ(pthread_sigmask(SIG_UNBLOCK, &s, NULL), 0);
}

/* --- semaphores ------------------------------------------------------- */

enum sem_call {
    by_sem_wait,
    by_sem_timedwait,
    by_sem_clockwait
};

struct sem_case {
    enum sem_call call;
    sem_t sem;
    volatile int entering, done;
    int result, err;
};

static void* sem_waiter(void* a) {
    struct sem_case* c = a;
    let_signals_through();
    struct timespec rt = deadline_in(CLOCK_REALTIME, 10000), mono = deadline_in(CLOCK_MONOTONIC, 10000);
    c->entering = 1;
    errno = 0;
    switch (c->call) {
    case by_sem_wait: c->result = sem_wait(&c->sem); break;
    case by_sem_timedwait: c->result = sem_timedwait(&c->sem, &rt); break;
    case by_sem_clockwait: c->result = sem_clockwait(&c->sem, CLOCK_MONOTONIC, &mono); break;
    }
    c->err = errno;
    c->done = 1;
    return NULL;
}

/* A semaphore wait on a new thread, ended by SIGALRM from a repeating timer
 * (by_timer) or by SIGUSR1 from pthread_kill; `restart`: the handler has
 * SA_RESTART, which restarts sem_wait only. */
static void sem_interrupted(enum sem_call call, int by_timer, int restart) {
    struct sem_case c;
    memset(&c, 0, sizeof c);
    c.call = call;
    CHECK_EQ(sem_init(&c.sem, 0, 0), 0);
    int sig = by_timer ? SIGALRM : SIGUSR1;
    set_handler(sig, restart ? SA_RESTART : 0);
    handled = 0;
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, sem_waiter, &c), 0);
    while (!c.entering) pause_ms(1);
    pause_ms(50); /* into the wait */
    int restarted = restart && call == by_sem_wait;
    volatile int* until_done = restarted ? NULL : &c.done;
    volatile sig_atomic_t* until_handled = restarted ? &handled : NULL;
    if (by_timer) {
        struct itimerval every = {{0, 20000}, {0, 20000}}, off;
        memset(&off, 0, sizeof off);
        CHECK_EQ(setitimer(ITIMER_REAL, &every, NULL), 0);
        wait_for(until_done, until_handled, "end of a semaphore wait, or handler run in it, by SIGALRM");
        CHECK_EQ(setitimer(ITIMER_REAL, &off, NULL), 0);
    } else {
        send_until(t, until_done, until_handled, "end of a semaphore wait, or handler run in it, by pthread_kill");
    }
    if (restarted) {
        pause_ms(50);
        CHECK(!c.done); /* still waiting */
        CHECK_EQ(sem_post(&c.sem), 0);
    }
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(c.result, restarted ? 0 : -1);
    if (!restarted) CHECK_EQ(c.err, EINTR);
    CHECK(handled >= 1);
    CHECK(pthread_equal(handled_on, t));
    int value = -1;
    CHECK_EQ(sem_getvalue(&c.sem, &value), 0);
    CHECK_EQ(value, 0); /* the failed wait took nothing, the restarted one the post */
    CHECK_EQ(sem_destroy(&c.sem), 0);
}

/* --- mutex, join, condition: the handler runs, the wait goes on --------- */

enum other_call {
    by_mutex_lock,
    by_mutex_timedlock,
    by_join,
    by_cond_wait
};

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready; /* the condition's predicate, under mutex */
static sem_t release_joined;

static void* joined(void* a) {
    (void)a; /* blocks both signals (main's mask): they go to its joiner */
    while (sem_wait(&release_joined) != 0) {
    }
    return (void*)42;
}

struct other_case {
    enum other_call call;
    pthread_t target; /* by_join: the thread to join */
    volatile int entering, done;
    int result;
    void* joined_value;
};

static void* other_waiter(void* a) {
    struct other_case* c = a;
    let_signals_through();
    struct timespec rt = deadline_in(CLOCK_REALTIME, 10000);
    c->entering = 1;
    switch (c->call) {
    case by_mutex_lock:
        c->result = pthread_mutex_lock(&mutex);
        pthread_mutex_unlock(&mutex);
        break;
    case by_mutex_timedlock:
        c->result = pthread_mutex_timedlock(&mutex, &rt);
        pthread_mutex_unlock(&mutex);
        break;
    case by_join: c->result = pthread_join(c->target, &c->joined_value); break;
    case by_cond_wait:
        pthread_mutex_lock(&mutex);
        c->result = 0;
        while (!ready && c->result == 0) c->result = pthread_cond_wait(&cond, &mutex);
        pthread_mutex_unlock(&mutex);
        break;
    }
    c->done = 1;
    return NULL;
}

static void handler_runs_and_wait_goes_on(enum other_call call) {
    struct other_case c;
    memset(&c, 0, sizeof c);
    c.call = call;
    set_handler(SIGUSR1, 0);
    handled = 0;
    ready = 0;
    if (call == by_join) {
        CHECK_EQ(sem_init(&release_joined, 0, 0), 0);
        CHECK_EQ(pthread_create(&c.target, NULL, joined, NULL), 0);
    }
    if (call == by_mutex_lock || call == by_mutex_timedlock) CHECK_EQ(pthread_mutex_lock(&mutex), 0);
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, other_waiter, &c), 0);
    while (!c.entering) pause_ms(1);
    pause_ms(50); /* into the wait */
    send_until(t, NULL, &handled, "handler run on a thread blocked in a mutex, a join or a condition");
    CHECK(pthread_equal(handled_on, t));
    pause_ms(50);
    CHECK(!c.done); /* still waiting */
    switch (call) {
    case by_mutex_lock:
    case by_mutex_timedlock: CHECK_EQ(pthread_mutex_unlock(&mutex), 0); break;
    case by_join: CHECK_EQ(sem_post(&release_joined), 0); break;
    case by_cond_wait:
        CHECK_EQ(pthread_mutex_lock(&mutex), 0);
        ready = 1;
        CHECK_EQ(pthread_cond_signal(&cond), 0);
        CHECK_EQ(pthread_mutex_unlock(&mutex), 0);
        break;
    }
    wait_for(&c.done, NULL, "end of the wait once its object let it go");
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(c.result, 0);
    if (call == by_join) {
        CHECK(c.joined_value == (void*)42);
        CHECK_EQ(sem_destroy(&release_joined), 0);
    }
}

static int only; /* the one case to run, or 0 for all */
static int cases;

static int next_case(void) {
    ++cases;
    return only == 0 || cases == only;
}

int main(int argc, char** argv) {
    only = argc > 1 ? atoi(argv[1]) : 0;
    /* Main, and every thread it creates, blocks both signals until it lets
     * them through: a signal for the process has only the waiting thread to
     * go to. */
    sigset_t s = both();
    CHECK_EQ(pthread_sigmask(SIG_BLOCK, &s, NULL), 0);

    for (int restart = 0; restart <= 1; ++restart) {
        if (next_case()) sem_interrupted(by_sem_wait, 1, restart);
        if (next_case()) sem_interrupted(by_sem_wait, 0, restart);
        if (next_case()) sem_interrupted(by_sem_timedwait, 1, restart);
        if (next_case()) sem_interrupted(by_sem_timedwait, 0, restart);
        if (next_case()) sem_interrupted(by_sem_clockwait, 0, restart);
    }
    if (next_case()) handler_runs_and_wait_goes_on(by_mutex_lock);
    if (next_case()) handler_runs_and_wait_goes_on(by_mutex_timedlock);
    if (next_case()) handler_runs_and_wait_goes_on(by_join);
    if (next_case()) handler_runs_and_wait_goes_on(by_cond_wait);
    CHECKS_DONE("sync_eintr");
}
