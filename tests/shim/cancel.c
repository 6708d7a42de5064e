/* Cancellation state and cleanup handlers as POSIX gives them, on glibc's
 * threads and under the shim alike: pthread_setcancelstate/_setcanceltype
 * return the previous value per thread and EINVAL for a bad one;
 * pthread_testcancel with nothing pending returns; pthread_cleanup_pop runs
 * its handler or not as asked; pthread_exit runs the handlers still pushed,
 * innermost first, then the thread-specific data destructors, and join gets
 * its value. Threads that push handlers and yield in between interleave on
 * one worker under the shim: each runs only its own. (pthread_cancel and
 * asynchronous cancellation are refused under the shim: shim.cancel.refused.) */
#include <pthread.h>
#include <sched.h>

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
    CHECKS_DONE("cancel");
}
