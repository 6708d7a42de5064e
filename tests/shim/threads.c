/* Conformance: pthread_create/join/detach/exit/self/equal, thread attributes,
 * pthread_once, keys with destructors. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "check.h"

static void* return_arg(void* a) { return a; }

static void* exit_with_arg(void* a) {
    pthread_exit(a);
    return NULL; /* not reached */
}

static pthread_t self_seen;
static void* record_self(void* a) {
    (void)a;
    self_seen = pthread_self();
    return NULL;
}

static pthread_barrier_t hold;
static void* wait_at_hold(void* a) {
    (void)a;
    pthread_barrier_wait(&hold);
    return NULL;
}

static void* join_self(void* a) {
    (void)a;
    return (void*)(long)pthread_join(pthread_self(), NULL);
}

/* pthread_getattr_np(pthread_self()): the caller's stack holds its locals. */
static long own_stack_holds_local(void) {
    pthread_attr_t a;
    void* addr;
    size_t size;
    volatile char local = 0;
    if (pthread_getattr_np(pthread_self(), &a) != 0) return 1;
    if (pthread_attr_getstack(&a, &addr, &size) != 0) return 2;
    pthread_attr_destroy(&a);
    char* lo = (char*)addr;
    return (char*)&local >= lo && (char*)&local < lo + size && size >= (size_t)PTHREAD_STACK_MIN ? 0 : 3;
}
static void* check_own_stack(void* a) {
    (void)a;
    return (void*)own_stack_holds_local();
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_runs;
static void once_init(void) {
    ++once_runs;
    sched_yield(); /* the others arrive while it runs */
}
static void* call_once(void* a) {
    (void)a;
    return (void*)(long)pthread_once(&once, once_init);
}

static pthread_key_t key;
static pthread_mutex_t dtor_mutex = PTHREAD_MUTEX_INITIALIZER;
static long dtor_sum;
static void key_dtor(void* v) {
    pthread_mutex_lock(&dtor_mutex);
    dtor_sum += (long)v;
    pthread_mutex_unlock(&dtor_mutex);
}
static void* set_key(void* a) {
    if (pthread_getspecific(key) != NULL) return (void*)1;
    if (pthread_setspecific(key, a) != 0) return (void*)2;
    sched_yield();
    return pthread_getspecific(key) == a ? NULL : (void*)3;
}

int main(void) {
    pthread_t t, u;
    void* r;

    /* create / join / exit */
    CHECK_EQ(pthread_create(&t, NULL, return_arg, (void*)42), 0);
    CHECK_EQ(pthread_join(t, &r), 0);
    CHECK(r == (void*)42);
    CHECK_EQ(pthread_create(&t, NULL, exit_with_arg, (void*)7), 0);
    CHECK_EQ(pthread_join(t, &r), 0);
    CHECK(r == (void*)7);
    CHECK_EQ(pthread_create(&t, NULL, return_arg, NULL), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);

    /* self / equal */
    CHECK_EQ(pthread_create(&t, NULL, record_self, NULL), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK(pthread_equal(self_seen, t));
    CHECK(!pthread_equal(self_seen, pthread_self()));
    CHECK(pthread_equal(pthread_self(), pthread_self()));

    /* join errors: the caller itself (EDEADLK), a detached thread (EINVAL) */
    CHECK_EQ(pthread_join(pthread_self(), NULL), EDEADLK);
    CHECK_EQ(pthread_create(&t, NULL, join_self, NULL), 0);
    CHECK_EQ(pthread_join(t, &r), 0);
    CHECK_EQ((long)r, EDEADLK);
    CHECK_EQ(pthread_barrier_init(&hold, NULL, 2), 0);
    CHECK_EQ(pthread_create(&t, NULL, wait_at_hold, NULL), 0);
    CHECK_EQ(pthread_detach(t), 0);
    CHECK_EQ(pthread_join(t, NULL), EINVAL); /* still alive at the barrier */
    pthread_barrier_wait(&hold);

    /* attributes */
    pthread_attr_t a;
    size_t sz;
    int v;
    struct sched_param sp;
    CHECK_EQ(pthread_attr_init(&a), 0);
    CHECK_EQ(pthread_attr_getdetachstate(&a, &v), 0);
    CHECK_EQ(v, PTHREAD_CREATE_JOINABLE);
    CHECK_EQ(pthread_attr_setdetachstate(&a, 12345), EINVAL);
    CHECK_EQ(pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN - 1), EINVAL);
    CHECK_EQ(pthread_attr_setstacksize(&a, 256 * 1024), 0);
    CHECK_EQ(pthread_attr_getstacksize(&a, &sz), 0);
    CHECK_EQ(sz, 256 * 1024);
    CHECK_EQ(pthread_attr_setguardsize(&a, 8192), 0);
    CHECK_EQ(pthread_attr_getguardsize(&a, &sz), 0);
    CHECK_EQ(sz, 8192);
    CHECK_EQ(pthread_attr_getscope(&a, &v), 0);
    CHECK_EQ(v, PTHREAD_SCOPE_SYSTEM);
    CHECK_EQ(pthread_attr_setscope(&a, 12345), EINVAL);
    CHECK_EQ(pthread_attr_setscope(&a, PTHREAD_SCOPE_SYSTEM), 0);
    CHECK_EQ(pthread_attr_getinheritsched(&a, &v), 0);
    CHECK_EQ(v, PTHREAD_INHERIT_SCHED);
    CHECK_EQ(pthread_attr_setinheritsched(&a, 12345), EINVAL);
    CHECK_EQ(pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED), 0);
    CHECK_EQ(pthread_attr_getinheritsched(&a, &v), 0);
    CHECK_EQ(v, PTHREAD_EXPLICIT_SCHED);
    CHECK_EQ(pthread_attr_getschedpolicy(&a, &v), 0);
    CHECK_EQ(v, SCHED_OTHER);
    CHECK_EQ(pthread_attr_setschedpolicy(&a, 12345), EINVAL);
    sp.sched_priority = 0;
    CHECK_EQ(pthread_attr_setschedparam(&a, &sp), 0);
    sp.sched_priority = 50; /* outside SCHED_OTHER's range (0..0) */
    CHECK_EQ(pthread_attr_setschedparam(&a, &sp), EINVAL);
    CHECK_EQ(pthread_attr_getschedparam(&a, &sp), 0);
    CHECK_EQ(sp.sched_priority, 0);
    CHECK_EQ(pthread_attr_setinheritsched(&a, PTHREAD_INHERIT_SCHED), 0);
    /* a joinable thread with a stack size of its own */
    CHECK_EQ(pthread_create(&t, &a, return_arg, (void*)5), 0);
    CHECK_EQ(pthread_join(t, &r), 0);
    CHECK(r == (void*)5);
    /* a detached thread */
    CHECK_EQ(pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED), 0);
    CHECK_EQ(pthread_barrier_init(&hold, NULL, 2), 0);
    CHECK_EQ(pthread_create(&u, &a, wait_at_hold, NULL), 0);
    CHECK_EQ(pthread_join(u, NULL), EINVAL);
    pthread_barrier_wait(&hold);
    CHECK_EQ(pthread_attr_destroy(&a), 0);

    /* the caller's own attributes: its stack */
    CHECK_EQ(own_stack_holds_local(), 0);
    CHECK_EQ(pthread_create(&t, NULL, check_own_stack, NULL), 0);
    CHECK_EQ(pthread_join(t, &r), 0);
    CHECK_EQ((long)r, 0);

    /* once: eight threads at once, init runs once */
    pthread_t ts[8];
    for (int i = 0; i < 8; ++i) CHECK_EQ(pthread_create(&ts[i], NULL, call_once, NULL), 0);
    for (int i = 0; i < 8; ++i) {
        CHECK_EQ(pthread_join(ts[i], &r), 0);
        CHECK(r == NULL);
    }
    CHECK_EQ(once_runs, 1);
    CHECK_EQ(pthread_once(&once, once_init), 0);
    CHECK_EQ(once_runs, 1);

    /* keys: a value per thread, destructors at thread exit */
    CHECK_EQ(pthread_key_create(&key, key_dtor), 0);
    CHECK(pthread_getspecific(key) == NULL);
    for (long i = 0; i < 8; ++i) CHECK_EQ(pthread_create(&ts[i], NULL, set_key, (void*)(i + 1)), 0);
    for (int i = 0; i < 8; ++i) {
        CHECK_EQ(pthread_join(ts[i], &r), 0);
        CHECK(r == NULL);
    }
    CHECK_EQ(dtor_sum, 36); /* 1 + 2 + ... + 8 */
    CHECK_EQ(pthread_setspecific(key, (void*)99), 0);
    CHECK(pthread_getspecific(key) == (void*)99);
    CHECK_EQ(pthread_key_delete(key), 0);

    CHECKS_DONE("threads");
}
