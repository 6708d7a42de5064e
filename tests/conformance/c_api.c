/*
 * Class: requirement (conformance). The C API used from strict ISO C11
 * (-std=c11 -Wpedantic): weft.h must compile as C, its static initializers
 * must be valid C initializers, and the calls must work through the exported
 * ABI of libweft.so. GoogleTest cannot be used from C: every function returns
 * 0 on success or the source line of the first failed check, and
 * conformance_test.cpp calls them.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "weft/weft.h"

#define CHECK(cond)                   \
    do {                              \
        if (!(cond)) return __LINE__; \
    } while (0)

/* Static initializers at file scope, as a C program writes them. */
static weft_mutex_t s_mutex = WEFT_MUTEX_INITIALIZER;
static weft_mutex_t s_recursive = WEFT_RECURSIVE_MUTEX_INITIALIZER;
static weft_mutex_t s_errorcheck = WEFT_ERRORCHECK_MUTEX_INITIALIZER;
static weft_cond_t s_cond = WEFT_COND_INITIALIZER;
static weft_rwlock_t s_rwlock = WEFT_RWLOCK_INITIALIZER;
static weft_once_t s_once = WEFT_ONCE_INIT;
static int s_once_runs = 0;
static int s_counter = 0;
static int s_ready = 0;

static int start(int workers, const char *sched) {
    weft_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.workers = workers;
    cfg.sched = sched;
    return weft_init(&cfg);
}

/* --- sizes, for the C++ side to compare with its own view ----------------- */

size_t weft_c_sizeof(int which) {
    switch (which) {
    case 0: return sizeof(weft_mutex_t);
    case 1: return sizeof(weft_cond_t);
    case 2: return sizeof(weft_rwlock_t);
    case 3: return sizeof(weft_barrier_t);
    case 4: return sizeof(weft_sem_t);
    case 5: return sizeof(weft_once_t);
    case 6: return sizeof(weft_attr_t);
    case 7: return sizeof(weft_mutexattr_t);
    case 8: return sizeof(weft_condattr_t);
    case 9: return sizeof(weft_key_t);
    case 10: return sizeof(weft_thread_t);
    case 11: return sizeof(weft_config_t);
    case 12: return sizeof(weft_stats_t);
    case 13: return sizeof(weft_worker_stats_t);
    default: return 0;
    }
}

/* The Pthreads counterparts, seen from C. */
size_t weft_c_sizeof_pthread(int which) {
    switch (which) {
    case 0: return sizeof(pthread_mutex_t);
    case 1: return sizeof(pthread_cond_t);
    case 2: return sizeof(pthread_rwlock_t);
    case 3: return sizeof(pthread_barrier_t);
    case 4: return sizeof(sem_t);
    case 5: return sizeof(pthread_once_t);
    case 6: return sizeof(pthread_attr_t);
    case 7: return sizeof(pthread_mutexattr_t);
    case 8: return sizeof(pthread_condattr_t);
    case 9: return sizeof(pthread_key_t);
    case 10: return sizeof(pthread_t);
    default: return 0;
    }
}

/* --- static initializers ------------------------------------------------------ */

static void once_init(void) { ++s_once_runs; }

int weft_c_static_initializers(void) {
    struct timespec ts;
    int type = -1;
    CHECK(start(1, "fifo") == 0);
    /* A zero-initialised static mutex is a normal mutex. */
    CHECK(weft_mutex_lock(&s_mutex) == 0);
    CHECK(weft_mutex_trylock(&s_mutex) == EBUSY);
    CHECK(weft_mutex_unlock(&s_mutex) == 0);
    CHECK(weft_mutex_lock(&s_recursive) == 0);
    CHECK(weft_mutex_lock(&s_recursive) == 0);
    CHECK(weft_mutex_unlock(&s_recursive) == 0);
    CHECK(weft_mutex_unlock(&s_recursive) == 0);
    CHECK(weft_mutex_lock(&s_errorcheck) == 0);
    CHECK(weft_mutex_lock(&s_errorcheck) == EDEADLK);
    CHECK(weft_mutex_unlock(&s_errorcheck) == 0);
    CHECK(weft_mutex_unlock(&s_errorcheck) == EPERM);
    /* The static condition uses CLOCK_REALTIME. */
    CHECK(clock_gettime(CLOCK_REALTIME, &ts) == 0);
    ts.tv_nsec += 5000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_nsec -= 1000000000;
        ts.tv_sec += 1;
    }
    CHECK(weft_mutex_lock(&s_mutex) == 0);
    CHECK(weft_cond_timedwait(&s_cond, &s_mutex, &ts) == ETIMEDOUT);
    CHECK(weft_mutex_unlock(&s_mutex) == 0);
    CHECK(weft_cond_destroy(&s_cond) == 0);
    CHECK(weft_rwlock_rdlock(&s_rwlock) == 0);
    CHECK(weft_rwlock_tryrdlock(&s_rwlock) == 0);
    CHECK(weft_rwlock_trywrlock(&s_rwlock) == EBUSY);
    CHECK(weft_rwlock_unlock(&s_rwlock) == 0);
    CHECK(weft_rwlock_unlock(&s_rwlock) == 0);
    CHECK(weft_rwlock_destroy(&s_rwlock) == 0);
    CHECK(weft_once(&s_once, &once_init) == 0);
    CHECK(weft_once(&s_once, &once_init) == 0);
    CHECK(s_once_runs == 1);
    /* WEFT_MUTEX_DEFAULT is the normal type. */
    {
        weft_mutexattr_t a;
        CHECK(weft_mutexattr_init(&a) == 0);
        CHECK(weft_mutexattr_gettype(&a, &type) == 0);
        CHECK(type == WEFT_MUTEX_DEFAULT && type == WEFT_MUTEX_NORMAL);
    }
    CHECK(weft_finalize() == 0);
    return 0;
}

/* --- threads ------------------------------------------------------------------------ */

static void *square(void *arg) {
    intptr_t v = (intptr_t)arg;
    return (void *)(v * v);
}

static void *exits_early(void *arg) { weft_thread_exit(arg); }

int weft_c_threads(void) {
    weft_thread_t t[16];
    weft_attr_t attr;
    void *r = NULL;
    intptr_t i;
    char name[WEFT_THREAD_NAME_MAX];
    CHECK(start(2, "lifo") == 0);
    CHECK(weft_is_initialized() == 1);
    CHECK(strcmp(weft_sched_name(), "lifo") == 0);
    CHECK(weft_num_workers() == 2);
    for (i = 0; i < 16; ++i) CHECK(weft_thread_create(&t[i], NULL, &square, (void *)i) == 0);
    for (i = 0; i < 16; ++i) {
        CHECK(weft_thread_join(t[i], &r) == 0);
        CHECK((intptr_t)r == i * i);
    }
    CHECK(weft_attr_init(&attr) == 0);
    CHECK(weft_attr_setstacksize(&attr, 256 * 1024) == 0);
    CHECK(weft_attr_setname(&attr, "c-thread") == 0);
    CHECK(weft_thread_create(&t[0], &attr, &exits_early, (void *)&attr) == 0);
    CHECK(weft_thread_getname(t[0], name, sizeof name) == 0);
    CHECK(strcmp(name, "c-thread") == 0);
    CHECK(weft_thread_join(t[0], &r) == 0);
    CHECK(r == (void *)&attr);
    CHECK(weft_attr_destroy(&attr) == 0);
    CHECK(weft_thread_join(weft_thread_self(), NULL) == EDEADLK);
    CHECK(weft_thread_id(weft_thread_self()) == 1);
    CHECK(weft_thread_equal(weft_thread_self(), weft_thread_self()));
    CHECK(weft_thread_yield() == 0);
    CHECK(weft_finalize() == 0);
    CHECK(weft_is_initialized() == 0);
    return 0;
}

/* --- stale handles ------------------------------------------------------------------- */
/* A handle whose thread was joined, or detached and ended, names no thread:
 * every call on it fails with ESRCH (weft_thread_id: 0), whatever thread now
 * runs on that thread's storage. */

static weft_sem_t s_go_on;
static volatile int s_released = 0;

static void *wait_then_return(void *arg) {
    weft_sem_wait(&s_go_on);
    return arg;
}
static void *return_storage(void *storage) { return storage; }
static void count_release(void *storage) {
    (void)storage;
    s_released = 1;
}

static int s_untouched;

static int check_stale(weft_thread_t stale) {
    void *r = &s_untouched;
    char name[WEFT_THREAD_NAME_MAX];
    CHECK(weft_thread_join(stale, &r) == ESRCH);
    CHECK(r == &s_untouched);
    CHECK(weft_thread_join_inplace(stale, NULL, NULL) == ESRCH);
    CHECK(weft_thread_detach(stale) == ESRCH);
    CHECK(weft_thread_start(stale) == ESRCH);
    CHECK(weft_thread_setname(stale, "stale") == ESRCH);
    CHECK(weft_thread_getname(stale, name, sizeof name) == ESRCH);
    CHECK(weft_thread_id(stale) == 0);
    return 0;
}

int weft_c_stale_handles(void) {
    weft_thread_t old_t, t;
    void *storage = NULL;
    void *r = NULL;
    int line;
    CHECK(start(1, "fifo") == 0);
    CHECK(weft_sem_init(&s_go_on, 0) == 0);

    /* Joined twice. */
    CHECK(weft_thread_create(&old_t, NULL, &square, (void *)3) == 0);
    CHECK(weft_thread_join(old_t, &r) == 0);
    CHECK((intptr_t)r == 9);
    if ((line = check_stale(old_t)) != 0) return line;

    /* A new, live thread on the freed storage is untouched by the old handle. */
    CHECK(weft_thread_create(&t, NULL, &wait_then_return, (void *)7) == 0);
    CHECK(weft_thread_setname(t, "new") == 0);
    CHECK(!weft_thread_equal(old_t, t));
    if ((line = check_stale(old_t)) != 0) return line;
    CHECK(weft_sem_post(&s_go_on) == 0);
    CHECK(weft_thread_join(t, &r) == 0);
    CHECK((intptr_t)r == 7);

    /* Detached: EINVAL while it lives (Pthreads), ESRCH once it has ended. */
    s_released = 0;
    CHECK(weft_thread_create_inplace(&t, NULL, &return_storage, 64, &storage, &count_release) == 0);
    CHECK(weft_thread_detach(t) == 0);
    CHECK(weft_thread_join(t, NULL) == EINVAL);
    CHECK(weft_thread_detach(t) == EINVAL);
    CHECK(weft_thread_start(t) == 0);
    while (!s_released) CHECK(weft_thread_yield() == 0);
    if ((line = check_stale(t)) != 0) return line;

    CHECK(weft_sem_destroy(&s_go_on) == 0);
    CHECK(weft_finalize() == 0);
    /* No runtime: every handle is stale. */
    CHECK(weft_thread_join(old_t, NULL) == ESRCH);
    return 0;
}

/* --- synchronization ------------------------------------------------------------------ */

static weft_sem_t s_items;
static weft_barrier_t s_barrier;
static int s_serial = 0;

static void *producer(void *arg) {
    int k;
    (void)arg;
    for (k = 0; k < 100; ++k) {
        weft_mutex_lock(&s_mutex);
        ++s_counter;
        weft_mutex_unlock(&s_mutex);
        weft_sem_post(&s_items);
    }
    weft_mutex_lock(&s_mutex);
    s_ready = 1;
    weft_cond_broadcast(&s_cond);
    weft_mutex_unlock(&s_mutex);
    return NULL;
}

static void *barrier_user(void *arg) {
    int r;
    (void)arg;
    for (r = 0; r < 10; ++r)
        if (weft_barrier_wait(&s_barrier) == WEFT_BARRIER_SERIAL_THREAD) {
            weft_mutex_lock(&s_mutex);
            ++s_serial;
            weft_mutex_unlock(&s_mutex);
        }
    return NULL;
}

int weft_c_sync(void) {
    weft_thread_t p, b[4];
    int k, v = -1;
    struct timespec req = {0, 1000000};
    weft_stats_t st;
    weft_worker_stats_t ws;
    CHECK(start(2, "fifo") == 0);
    s_counter = 0;
    s_ready = 0;
    s_serial = 0;
    CHECK(weft_sem_init(&s_items, 0) == 0);
    CHECK(weft_thread_create(&p, NULL, &producer, NULL) == 0);
    for (k = 0; k < 100; ++k) CHECK(weft_sem_wait(&s_items) == 0);
    CHECK(weft_mutex_lock(&s_mutex) == 0);
    while (!s_ready) CHECK(weft_cond_wait(&s_cond, &s_mutex) == 0);
    CHECK(s_counter == 100);
    CHECK(weft_mutex_unlock(&s_mutex) == 0);
    CHECK(weft_thread_join(p, NULL) == 0);
    CHECK(weft_sem_getvalue(&s_items, &v) == 0 && v == 0);
    CHECK(weft_sem_trywait(&s_items) == EAGAIN);
    CHECK(weft_sem_destroy(&s_items) == 0);

    CHECK(weft_barrier_init(&s_barrier, 4) == 0);
    for (k = 0; k < 4; ++k) CHECK(weft_thread_create(&b[k], NULL, &barrier_user, NULL) == 0);
    for (k = 0; k < 4; ++k) CHECK(weft_thread_join(b[k], NULL) == 0);
    CHECK(s_serial == 10);
    CHECK(weft_barrier_destroy(&s_barrier) == 0);

    CHECK(weft_nanosleep(&req, NULL) == 0);
    CHECK(weft_sleep_ns(1000) == 0);
    CHECK(weft_stats_get(&st) == 0);
    CHECK(st.threads_created == 5);
    CHECK(st.workers == 2);
    CHECK(weft_worker_stats_get(0, &ws) == 0);
    CHECK(weft_worker_stats_get(2, &ws) == EINVAL);
    CHECK(weft_stats_reset() == 0);
    CHECK(weft_finalize() == 0);
    return 0;
}

/* --- keys ------------------------------------------------------------------------------ */

static weft_key_t s_key;
static int s_dtor_calls = 0;
static void key_dtor(void *v) {
    (void)v;
    ++s_dtor_calls;
}
static void *key_user(void *arg) {
    weft_setspecific(s_key, arg);
    return weft_getspecific(s_key);
}

int weft_c_keys(void) {
    weft_thread_t t;
    void *r = NULL;
    int x = 0;
    CHECK(start(1, "fifo") == 0);
    s_dtor_calls = 0;
    CHECK(weft_key_create(&s_key, &key_dtor) == 0);
    CHECK(weft_getspecific(s_key) == NULL);
    CHECK(weft_thread_create(&t, NULL, &key_user, &x) == 0);
    CHECK(weft_thread_join(t, &r) == 0);
    CHECK(r == &x);
    CHECK(s_dtor_calls == 1);
    CHECK(weft_getspecific(s_key) == NULL);
    CHECK(weft_key_delete(s_key) == 0);
    CHECK(weft_finalize() == 0);
    return 0;
}

/* --- implicit start from C ------------------------------------------------------------------ */

int weft_c_implicit_start(void) {
    weft_thread_t t;
    void *r = NULL;
    CHECK(weft_is_initialized() == 0);
    CHECK(weft_thread_create(&t, NULL, &square, (void *)(intptr_t)9) == 0);
    CHECK(weft_is_initialized() == 1);
    CHECK(weft_thread_join(t, &r) == 0);
    CHECK((intptr_t)r == 81);
    CHECK(weft_finalize() == 0);
    return 0;
}
