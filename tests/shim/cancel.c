/* Deferred cancellation and cleanup handlers as POSIX gives them, on glibc's
 * threads and under the shim alike: pthread_setcancelstate/_setcanceltype
 * return the previous value per thread and EINVAL for a bad one;
 * pthread_testcancel with nothing pending returns; pthread_cleanup_pop runs
 * its handler or not as asked; pthread_exit runs the handlers still pushed,
 * innermost first, then the thread-specific data destructors, and join gets
 * its value. Threads that push handlers and yield in between interleave on
 * one worker under the shim: each runs only its own. A thread blocked in a
 * condition wait (its handler runs with the mutex relocked), a semaphore or a
 * sleep is cancelled and ends with PTHREAD_CANCELED; a thread with
 * cancellation disabled finishes its sleep and is cancelled at its
 * pthread_testcancel once enabled; a thread cancels itself. (Asynchronous
 * cancellation is refused under the shim: shim.cancel.refused.) */
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <unistd.h>

#include "check.h"

enum { nthreads = 6 };

static char logs[nthreads][16];
static int nlog[nthreads];
static pthread_key_t key;

static void note(long id, char c) {
    if (nlog[id] < 15) logs[id][nlog[id]++] = c;
}
static long arg_id(void* a) { return (long)a / 256; }
static void handler(void* a) { note(arg_id(a), (char)((long)a % 256)); }
static void destructor(void* a) { note(arg_id(a), 'D'); }

static void deep_exit(long id) {
    pthread_cleanup_push(handler, (void*)(id * 256 + 'c'));
    sched_yield(); /* another thread pushes and pops meanwhile, on this worker under the shim */
    pthread_exit((void*)(id + 100));
    pthread_cleanup_pop(0);
}

static void* worker(void* arg) {
    long id = (long)arg;
    pthread_setspecific(key, (void*)(id * 256 + 1)); /* not null: its destructor runs */
    int old;
    if (pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old) != 0 || old != PTHREAD_CANCEL_ENABLE) return NULL;
    sched_yield();
    if (pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old) != 0 || old != PTHREAD_CANCEL_DISABLE) return NULL;
    pthread_testcancel();
    pthread_cleanup_push(handler, (void*)(id * 256 + 'a'));
    pthread_cleanup_push(handler, (void*)(id * 256 + 'x'));
    sched_yield();
    pthread_cleanup_pop(0); /* not run */
    pthread_cleanup_push(handler, (void*)(id * 256 + 'p'));
    pthread_cleanup_pop(1); /* run now: 'p' */
    pthread_cleanup_push(handler, (void*)(id * 256 + 'b'));
    deep_exit(id); /* runs c, b, a, then the destructor */
    pthread_cleanup_pop(0);
    pthread_cleanup_pop(0);
    return NULL;
}

static pthread_mutex_t cm; /* errorcheck: the handler's unlock fails unless it holds it */
static pthread_cond_t cc = PTHREAD_COND_INITIALIZER;
static sem_t ready, never;
static int unlocked_by_handler, slept_fully, after_testcancel;

static void unlock_cm(void* a) {
    (void)a;
    unlocked_by_handler = pthread_mutex_unlock(&cm) == 0; /* relocked by the cancelled wait */
}

static void* in_cond_wait(void* a) {
    (void)a;
    pthread_mutex_lock(&cm);
    pthread_cleanup_push(unlock_cm, NULL);
    sem_post(&ready);
    for (;;) pthread_cond_wait(&cc, &cm); /* nobody signals */
    pthread_cleanup_pop(1);
    return NULL;
}

static void* in_sem_wait(void* a) {
    (void)a;
    sem_post(&ready);
    sem_wait(&never);
    return NULL;
}

static void* in_sleep(void* a) {
    (void)a;
    sem_post(&ready);
    sleep(100);
    return NULL;
}

static void* disabled_sleep(void* a) {
    (void)a;
    int old;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    sem_post(&ready);
    usleep(50000); /* cancelled meanwhile: not interrupted */
    slept_fully = 1;
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
    pthread_testcancel();
    after_testcancel = 1;
    return NULL;
}

static void* self_cancel(void* a) {
    (void)a;
    pthread_cancel(pthread_self());
    pthread_testcancel();
    after_testcancel = 2;
    return NULL;
}

/* Starts fn, waits until it is about to block, cancels it, and checks that it
 * ended cancelled. */
static void cancel_blocked(void* (*fn)(void*), int wait_first) {
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, fn, NULL), 0);
    CHECK_EQ(sem_wait(&ready), 0);
    if (wait_first) usleep(20000); /* let it block */
    CHECK_EQ(pthread_cancel(t), 0);
    void* r;
    CHECK_EQ(pthread_join(t, &r), 0);
    CHECK(r == PTHREAD_CANCELED);
}

static void cancellation(void) {
    pthread_mutexattr_t ma;
    CHECK_EQ(pthread_mutexattr_init(&ma), 0);
    CHECK_EQ(pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK), 0);
    CHECK_EQ(pthread_mutex_init(&cm, &ma), 0);
    CHECK_EQ(sem_init(&ready, 0, 0), 0);
    CHECK_EQ(sem_init(&never, 0, 0), 0);
    cancel_blocked(in_cond_wait, 1);
    CHECK_EQ(unlocked_by_handler, 1);
    CHECK_EQ(pthread_mutex_trylock(&cm), 0); /* the handler left it unlocked */
    CHECK_EQ(pthread_mutex_unlock(&cm), 0);
    /* Cancelled while main holds the mutex: the wait ends, the relock waits
     * for main, and only then do the handlers run. */
    unlocked_by_handler = 0;
    pthread_t t1;
    CHECK_EQ(pthread_create(&t1, NULL, in_cond_wait, NULL), 0);
    CHECK_EQ(sem_wait(&ready), 0);
    usleep(20000);
    CHECK_EQ(pthread_mutex_lock(&cm), 0);
    CHECK_EQ(pthread_cancel(t1), 0);
    usleep(20000);
    CHECK_EQ(unlocked_by_handler, 0); /* still waiting for the mutex */
    CHECK_EQ(pthread_mutex_unlock(&cm), 0);
    void* r1;
    CHECK_EQ(pthread_join(t1, &r1), 0);
    CHECK(r1 == PTHREAD_CANCELED);
    CHECK_EQ(unlocked_by_handler, 1);
    cancel_blocked(in_sem_wait, 1);
    int v = -1;
    CHECK_EQ(sem_getvalue(&never, &v), 0);
    CHECK_EQ(v, 0);
    long long t0 = now_ns(CLOCK_MONOTONIC);
    cancel_blocked(in_sleep, 1);
    CHECK(now_ns(CLOCK_MONOTONIC) - t0 < 50LL * 1000000000LL); /* not the 100 s sleep */
    cancel_blocked(disabled_sleep, 0);
    CHECK_EQ(slept_fully, 1);
    CHECK_EQ(after_testcancel, 0);
    pthread_t t;
    void* r;
    CHECK_EQ(pthread_create(&t, NULL, self_cancel, NULL), 0);
    CHECK_EQ(pthread_join(t, &r), 0);
    CHECK(r == PTHREAD_CANCELED);
    CHECK_EQ(after_testcancel, 0);
}

int main(void) {
    int old = -1;
    CHECK_EQ(pthread_setcancelstate(42, &old), EINVAL);
    CHECK_EQ(pthread_setcanceltype(42, &old), EINVAL);
    CHECK_EQ(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old), 0);
    CHECK_EQ(old, PTHREAD_CANCEL_DEFERRED);
    CHECK_EQ(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL), 0);
    pthread_testcancel();
    CHECK_EQ(pthread_key_create(&key, destructor), 0);
    pthread_t t[nthreads];
    for (long i = 0; i < nthreads; ++i) CHECK_EQ(pthread_create(&t[i], NULL, worker, (void*)i), 0);
    for (long i = 0; i < nthreads; ++i) {
        void* r;
        CHECK_EQ(pthread_join(t[i], &r), 0);
        CHECK_EQ((long)r, i + 100);
        CHECK(strcmp(logs[i], "pcbaD") == 0);
    }
    /* A handler pushed and popped in main, which goes on. */
    static int ran;
    pthread_cleanup_push((void (*)(void*))free, malloc(8));
    ran = 1;
    pthread_cleanup_pop(1);
    CHECK_EQ(ran, 1);
    cancellation();
    CHECKS_DONE("cancel");
}
