/*
 * weft.h — the C API of weft, a user-level threads runtime for fine-grain and
 * irregular parallelism.
 *
 * The API is shaped like Pthreads so that a program (and libweft-pthread) maps
 * onto it one call for one call: opaque handles, `int` error codes with the
 * errno values Pthreads uses, out-parameters, static initializers.
 *
 * Every function documents three things:
 *   Contexts:  from where it may be called. "weft thread" means code running
 *              on a weft thread (the main flow after weft_init counts);
 *              "external" means a kernel thread that is not a weft worker.
 *   Errors:    the error codes it returns (0 means success).
 *   Undefined: what the caller must not do.
 *
 * Blocking calls block only the calling weft thread: its worker runs other
 * weft threads meanwhile. Called from an external kernel thread, a blocking
 * call blocks that kernel thread (on a futex) instead.
 *
 * Timed calls take an absolute deadline on CLOCK_REALTIME, as Pthreads does
 * (condition variables may choose CLOCK_MONOTONIC through their attribute).
 */
#ifndef WEFT_WEFT_H
#define WEFT_WEFT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h> /* clockid_t */
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(WEFT_BUILDING_LIBRARY)
#define WEFT_API __attribute__((visibility("default")))
#else
#define WEFT_API
#endif

/* GCC and clang take the GNU spelling in C and C++ alike, and clang accepts
 * it after WEFT_API's visibility attribute, where it rejects [[noreturn]]. */
#if defined(__GNUC__)
#define WEFT_NORETURN __attribute__((noreturn))
#elif defined(__cplusplus)
#define WEFT_NORETURN [[noreturn]]
#else
#define WEFT_NORETURN _Noreturn
#endif

#define WEFT_VERSION_MAJOR 0
#define WEFT_VERSION_MINOR 1
#define WEFT_VERSION_PATCH 0

/* ------------------------------------------------------------------------ */
/* Runtime                                                                  */
/* ------------------------------------------------------------------------ */

/* Values of an on/off field of weft_config_t (stats). */
#define WEFT_CONFIG_UNSET 0 /* take the WEFT_* variable, else the default */
#define WEFT_CONFIG_ON 1
#define WEFT_CONFIG_OFF (-1)

/* Configuration for weft_init. A field that is set (non-zero, non-NULL) wins
 * over its WEFT_* variable, which is then not read; a zero (or NULL) field
 * takes the variable, else the default. A field is checked as its variable
 * is. See docs/env.md. */
typedef struct weft_config {
    int workers;          /* worker kernel threads; 0 = WEFT_WORKERS or the CPUs we may use */
    const char *sched;    /* "fifo" | "lifo" | "dfs" | "ws" (any case); NULL = WEFT_SCHED or "ws" */
    size_t stack_size;    /* default stack bytes; 0 = WEFT_STACK_SIZE or 64 KiB */
    int stats;            /* print statistics at finalize/exit: WEFT_CONFIG_ON, WEFT_CONFIG_OFF
                             (even with WEFT_STATS=1), or WEFT_CONFIG_UNSET = WEFT_STATS */
    int measure;          /* 1 = measure work and span (weft_stats_t.work_ns/span_ns) and count
                             pruned forks (weft_fil_stats_t.forks_pruned) without printing;
                             implied by stats and by WEFT_TRACE */
    const char *adapt;    /* adaptive worker count: "schedstat" | "asat" | "off" (any case);
                             NULL = WEFT_ADAPT or "schedstat" (see weft_adapt_get) */
} weft_config_t;

/* Starts the runtime. The calling kernel thread becomes worker 0 and its
 * current flow becomes a weft thread (the "main" weft thread). Like every weft
 * thread, main may resume on another worker after a blocking call (so that
 * every scheduling policy keeps full control of it); weft_finalize brings it
 * back to worker 0, so the process ends on the kernel thread it began on.
 * Kernel-thread-local state (errno, thread_local variables) therefore belongs
 * to the worker, not to the weft thread: read errno right after the call that
 * set it, and do not keep a thread_local's address across a blocking weft call.
 * Any other weft call made before weft_init initialises from the environment.
 * Contexts: external (not yet initialised).
 * Errors: EBUSY already initialised; EINVAL a bad value in cfg or in a WEFT_*
 *         variable (a message naming it and its valid values is printed to
 *         stderr); EAGAIN a worker could not be started. */
WEFT_API int weft_init(const weft_config_t *cfg);

/* Stops the runtime: waits until every other weft thread has finished
 * (detached ones included), prints statistics if asked, stops the workers.
 * Contexts: the main weft thread only.
 * Errors: EPERM not called from the main weft thread; EINVAL not initialised;
 *         EBUSY a message-passing job is running (end it with
 *         weft_net_finalize first; a message says so on stderr). */
WEFT_API int weft_finalize(void);

/* 1 if the runtime is running, else 0. Contexts: any. */
WEFT_API int weft_is_initialized(void);

/* Number of workers (kernel threads) of the running runtime, 0 if none. */
WEFT_API int weft_num_workers(void);

/* Index of the worker running the caller (0..workers-1), -1 if external. */
WEFT_API int weft_worker_id(void);

/* Name of the scheduling policy in use ("fifo", "lifo", "dfs", "ws"), NULL if none. */
WEFT_API const char *weft_sched_name(void);

/* ------------------------------------------------------------------------ */
/* Threads                                                                  */
/* ------------------------------------------------------------------------ */

/* A thread handle. Opaque: not the address of anything, but a number that
 * names one thread for as long as that thread can be joined or named. Once
 * the thread has been joined, or has ended after being detached, the handle
 * is stale: every call taking it returns ESRCH (weft_thread_id returns 0),
 * even when a new thread now runs on the old one's stack, and it never acts
 * on that new thread. A handle from a runtime that was finalized is stale in
 * the next one too. Copies of a handle compare equal (weft_thread_equal); a
 * stale handle equals no live thread's handle. */
typedef struct weft_thread_s *weft_thread_t;
#define WEFT_THREAD_NULL ((weft_thread_t)0)

#define WEFT_CREATE_JOINABLE 0
#define WEFT_CREATE_DETACHED 1

#define WEFT_THREAD_NAME_MAX 32 /* bytes, including the terminating NUL */

typedef struct weft_attr {
    size_t stack_size;   /* 0 = the runtime default */
    int detach_state;    /* WEFT_CREATE_JOINABLE or WEFT_CREATE_DETACHED */
    int reserved_;
    const char *name;    /* copied at create time; NULL = no name */
} weft_attr_t;

WEFT_API int weft_attr_init(weft_attr_t *attr);
WEFT_API int weft_attr_destroy(weft_attr_t *attr);
/* The creating calls check the whole attribute again (a program may set its
 * fields directly), with the same rules. */
/* Errors: EINVAL size below WEFT_STACK_MIN or above 1 GiB. */
WEFT_API int weft_attr_setstacksize(weft_attr_t *attr, size_t size);
WEFT_API int weft_attr_getstacksize(const weft_attr_t *attr, size_t *size);
/* Errors: EINVAL state is not WEFT_CREATE_JOINABLE/DETACHED. */
WEFT_API int weft_attr_setdetachstate(weft_attr_t *attr, int state);
WEFT_API int weft_attr_getdetachstate(const weft_attr_t *attr, int *state);
WEFT_API int weft_attr_setname(weft_attr_t *attr, const char *name);

#define WEFT_STACK_MIN 16384 /* smallest stack a thread may ask for, bytes */

/* Creates a weft thread running fn(arg). The scheduling policy decides
 * whether the parent or the child runs first (fifo: the parent continues).
 * Contexts: any (initialises the runtime on first use).
 * Errors: EAGAIN no memory for a stack, or 16,777,215 threads already alive;
 *         EINVAL thread or fn NULL, or a bad attribute (stack_size outside
 *         WEFT_STACK_MIN..1 GiB and not 0, detach_state not JOINABLE/DETACHED). */
WEFT_API int weft_thread_create(weft_thread_t *thread, const weft_attr_t *attr,
                                void *(*fn)(void *), void *arg);

/* Waits for a joinable thread to finish and collects its result.
 * Contexts: weft thread or external.
 * Errors: EDEADLK thread is the caller; EINVAL thread is detached (and has not
 *         ended), already being joined, or the main weft thread (never
 *         joinable: it ends the process); ESRCH thread is WEFT_THREAD_NULL or
 *         stale (already joined, or detached and ended), or no runtime runs.
 * Of several joins and detaches of one thread at once, exactly one succeeds
 * and the others get EINVAL or ESRCH.
 * Undefined: naming a thread (setname, getname, id, start) at the same time
 *         as the join or detach that ends its life (as in Pthreads). */
WEFT_API int weft_thread_join(weft_thread_t thread, void **retval);

/* Marks a thread detached: its resources go back when it finishes (at once if
 * it has finished already). Its handle still names it until then (join:
 * EINVAL), and is stale after.
 * Contexts: weft thread or external.
 * Errors: EINVAL already detached, being joined, or the main weft thread;
 *         ESRCH null or stale handle, or no runtime runs. */
WEFT_API int weft_thread_detach(weft_thread_t thread);

/* Ends the calling weft thread with a result. Thread-specific data
 * destructors run first. Called from the main weft thread, it behaves as
 * pthread_exit does in main: the other threads go on, and the process exits
 * with status 0 when the last of them has ended. Contexts: weft thread
 * (an external kernel thread calling it is a fatal error, reported). */
WEFT_API WEFT_NORETURN void weft_thread_exit(void *retval);

/* Lets the worker run other ready threads; returns at once if there are none.
 * Contexts: any (a no-op on an external kernel thread but for sched_yield). */
WEFT_API int weft_thread_yield(void);

/* The calling weft thread; WEFT_THREAD_NULL on an external kernel thread. */
WEFT_API weft_thread_t weft_thread_self(void);
/* 1 if a and b are the same handle, else 0 (a stale handle equals only its
 * own copies). */
WEFT_API int weft_thread_equal(weft_thread_t a, weft_thread_t b);

/* A unique id for the life of the runtime (the main weft thread is 1).
 * 0 for a null or stale handle. */
WEFT_API uint64_t weft_thread_id(weft_thread_t thread);

/* Name of a thread (copied, NUL-terminated, truncated to
 * WEFT_THREAD_NAME_MAX-1 bytes). Errors: ESRCH null or stale handle; EINVAL
 * name NULL (setname); ERANGE buf NULL or len 0 (getname). */
WEFT_API int weft_thread_setname(weft_thread_t thread, const char *name);
WEFT_API int weft_thread_getname(weft_thread_t thread, char *buf, size_t len);

/* For language bindings (weft.hpp uses these): a thread whose closure and
 * result live on its own stack, so that creating it allocates nothing.
 *
 * weft_thread_create_inplace creates a thread but does not start it. It
 * reserves storage_size bytes (64-byte aligned, at most 1/4 of the stack) at the
 * top of the new thread's stack and returns their address in *storage; fn
 * receives that address as its argument. release(storage), if given, runs when
 * the thread's resources are released: after join, or when a detached thread
 * ends. weft_thread_start hands the thread to the scheduler (once).
 * weft_thread_join_inplace joins like weft_thread_join, but calls
 * collect(storage, ctx) after the thread has ended and before release.
 * Errors: as weft_thread_create / weft_thread_join; EINVAL storage_size too big,
 *         or start on a thread already started; ESRCH start on a null or
 *         stale handle. */
WEFT_API int weft_thread_create_inplace(weft_thread_t *thread, const weft_attr_t *attr,
                                        void *(*fn)(void *), size_t storage_size,
                                        void **storage, void (*release)(void *));
WEFT_API int weft_thread_start(weft_thread_t thread);
WEFT_API int weft_thread_join_inplace(weft_thread_t thread,
                                      void (*collect)(void *storage, void *ctx), void *ctx);

/* ------------------------------------------------------------------------ */
/* Once and thread-specific data                                            */
/* ------------------------------------------------------------------------ */

typedef int weft_once_t;
#define WEFT_ONCE_INIT 0

/* Runs init exactly once; concurrent callers block (their thread only)
 * until it has returned. Errors: EINVAL null argument. */
WEFT_API int weft_once(weft_once_t *once, void (*init)(void));

typedef unsigned int weft_key_t;
#define WEFT_KEYS_MAX 1024
#define WEFT_DESTRUCTOR_ITERATIONS 4

/* Errors: EAGAIN all WEFT_KEYS_MAX keys in use. */
WEFT_API int weft_key_create(weft_key_t *key, void (*destructor)(void *));
/* Errors: EINVAL key not created. */
WEFT_API int weft_key_delete(weft_key_t key);
/* Errors: EINVAL key not created; ENOMEM no memory for the value table. */
WEFT_API int weft_setspecific(weft_key_t key, const void *value);
WEFT_API void *weft_getspecific(weft_key_t key);

/* ------------------------------------------------------------------------ */
/* Mutexes                                                                  */
/* ------------------------------------------------------------------------ */

#define WEFT_MUTEX_NORMAL 0
#define WEFT_MUTEX_RECURSIVE 1
#define WEFT_MUTEX_ERRORCHECK 2
#define WEFT_MUTEX_DEFAULT WEFT_MUTEX_NORMAL

/* Fields ending in '_' are private. The layouts of the synchronization types
 * fit inside their Pthreads counterparts (glibc x86-64 / AArch64 sizes) so that
 * libweft-pthread can place them there. */
typedef struct weft_mutex {
    uint32_t state_;
    uint32_t kind_;   /* type in bits 0-1, recursion depth above */
    void *owner_;
    uint32_t lock_;
    uint32_t reserved_;
    void *head_;
    void *tail_;
} weft_mutex_t;

#define WEFT_MUTEX_INITIALIZER {0, WEFT_MUTEX_NORMAL, 0, 0, 0, 0, 0}
#define WEFT_RECURSIVE_MUTEX_INITIALIZER {0, WEFT_MUTEX_RECURSIVE, 0, 0, 0, 0, 0}
#define WEFT_ERRORCHECK_MUTEX_INITIALIZER {0, WEFT_MUTEX_ERRORCHECK, 0, 0, 0, 0, 0}

typedef struct weft_mutexattr { int type; } weft_mutexattr_t;
WEFT_API int weft_mutexattr_init(weft_mutexattr_t *attr);
WEFT_API int weft_mutexattr_destroy(weft_mutexattr_t *attr);
/* Errors: EINVAL not one of WEFT_MUTEX_NORMAL/RECURSIVE/ERRORCHECK. */
WEFT_API int weft_mutexattr_settype(weft_mutexattr_t *attr, int type);
WEFT_API int weft_mutexattr_gettype(const weft_mutexattr_t *attr, int *type);

WEFT_API int weft_mutex_init(weft_mutex_t *m, const weft_mutexattr_t *attr);
/* Errors: EBUSY locked or waited on. */
WEFT_API int weft_mutex_destroy(weft_mutex_t *m);
/* Blocks the calling thread until it owns m. Waiters queue in arrival order;
 * unlock wakes the first one, and a running thread may take the mutex before
 * it runs (no lock convoys); a waiter queued for more than 1 ms is handed the
 * mutex by the unlock itself, so no wait is unbounded.
 * Errors: EDEADLK (errorcheck) the caller owns it; EAGAIN (recursive) depth
 *         overflow. Undefined: relocking a normal mutex one owns (it deadlocks,
 *         and the deadlock detector reports it). */
WEFT_API int weft_mutex_lock(weft_mutex_t *m);
/* Errors: EBUSY held by another thread (or by the caller, unless recursive). */
WEFT_API int weft_mutex_trylock(weft_mutex_t *m);
/* Errors: ETIMEDOUT deadline passed; EINVAL bad timespec; as lock. */
WEFT_API int weft_mutex_timedlock(weft_mutex_t *m, const struct timespec *abstime);
/* Errors: EPERM (errorcheck, recursive) the caller does not own it. */
WEFT_API int weft_mutex_unlock(weft_mutex_t *m);

/* ------------------------------------------------------------------------ */
/* Condition variables                                                      */
/* ------------------------------------------------------------------------ */

typedef struct weft_cond {
    uint32_t lock_;
    int32_t clock_;   /* CLOCK_REALTIME (0) or CLOCK_MONOTONIC */
    void *head_;
    void *tail_;
    void *mutex_;
    uint64_t reserved_[2];
} weft_cond_t;
#define WEFT_COND_INITIALIZER {0, 0, 0, 0, 0, {0, 0}}

typedef struct weft_condattr { int clock; } weft_condattr_t;
WEFT_API int weft_condattr_init(weft_condattr_t *attr);
WEFT_API int weft_condattr_destroy(weft_condattr_t *attr);
/* Errors: EINVAL clock is not CLOCK_REALTIME or CLOCK_MONOTONIC. */
WEFT_API int weft_condattr_setclock(weft_condattr_t *attr, clockid_t clock);
WEFT_API int weft_condattr_getclock(const weft_condattr_t *attr, clockid_t *clock);

WEFT_API int weft_cond_init(weft_cond_t *c, const weft_condattr_t *attr);
/* Errors: EBUSY threads wait on it. */
WEFT_API int weft_cond_destroy(weft_cond_t *c);
/* Atomically releases m and blocks; relocks m before returning. No spurious
 * wake-ups, except under libweft-pthread after a signal handler ran on the
 * waiting thread (as glibc's); callers should loop on their predicate.
 * Errors: EPERM the caller does not own m (errorcheck/recursive mutexes);
 *         EINVAL waiting with a different mutex than concurrent waiters. */
WEFT_API int weft_cond_wait(weft_cond_t *c, weft_mutex_t *m);
/* Errors: ETIMEDOUT (m is relocked); as wait. The deadline is on the clock
 * chosen with weft_condattr_setclock (CLOCK_REALTIME by default). */
WEFT_API int weft_cond_timedwait(weft_cond_t *c, weft_mutex_t *m,
                                 const struct timespec *abstime);
WEFT_API int weft_cond_signal(weft_cond_t *c);
WEFT_API int weft_cond_broadcast(weft_cond_t *c);

/* ------------------------------------------------------------------------ */
/* Semaphores                                                               */
/* ------------------------------------------------------------------------ */

typedef struct weft_sem {
    uint32_t lock_;
    uint32_t value_;
    void *head_;
    void *tail_;
    uint64_t reserved_;
} weft_sem_t;

#define WEFT_SEM_VALUE_MAX 0x7fffffffu

/* Errors: EINVAL value above WEFT_SEM_VALUE_MAX. */
WEFT_API int weft_sem_init(weft_sem_t *s, unsigned int value);
/* Errors: EBUSY threads wait on it. */
WEFT_API int weft_sem_destroy(weft_sem_t *s);
/* Errors: EINTR only under libweft-pthread, when a signal handler ran on the
 * waiting thread (docs/shim.md, "Signals"). */
WEFT_API int weft_sem_wait(weft_sem_t *s);
/* Errors: EAGAIN the value is 0. */
WEFT_API int weft_sem_trywait(weft_sem_t *s);
/* Errors: ETIMEDOUT; EINVAL bad timespec; EINTR as weft_sem_wait. */
WEFT_API int weft_sem_timedwait(weft_sem_t *s, const struct timespec *abstime);
/* Errors: EOVERFLOW the value would pass WEFT_SEM_VALUE_MAX. */
WEFT_API int weft_sem_post(weft_sem_t *s);
WEFT_API int weft_sem_getvalue(weft_sem_t *s, int *value);

/* ------------------------------------------------------------------------ */
/* Barriers                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct weft_barrier {
    uint32_t lock_;
    uint32_t count_;
    uint32_t arrived_;
    uint32_t generation_;
    void *head_;
    void *tail_;
} weft_barrier_t;

#define WEFT_BARRIER_SERIAL_THREAD (-1)

/* Errors: EINVAL count is 0. */
WEFT_API int weft_barrier_init(weft_barrier_t *b, unsigned int count);
/* Errors: EBUSY threads wait on it. */
WEFT_API int weft_barrier_destroy(weft_barrier_t *b);
/* Blocks until count threads have called it; returns
 * WEFT_BARRIER_SERIAL_THREAD to exactly one of them and 0 to the others.
 * The barrier is reusable at once. */
WEFT_API int weft_barrier_wait(weft_barrier_t *b);

/* ------------------------------------------------------------------------ */
/* Reader-writer locks                                                      */
/* ------------------------------------------------------------------------ */

typedef struct weft_rwlock {
    uint32_t lock_;
    int32_t readers_;  /* >0 readers inside, -1 a writer inside */
    void *writer_;
    void *head_;
    void *tail_;
    uint64_t reserved_[3];
} weft_rwlock_t;
#define WEFT_RWLOCK_INITIALIZER {0, 0, 0, 0, 0, {0, 0, 0}}

/* Fair: waiters are served in arrival order, a run of readers at the head
 * together; a reader arriving while a writer waits queues behind it. */
WEFT_API int weft_rwlock_init(weft_rwlock_t *rw);
/* Errors: EBUSY held or waited on. */
WEFT_API int weft_rwlock_destroy(weft_rwlock_t *rw);
/* Errors: EDEADLK the caller holds the write lock. */
WEFT_API int weft_rwlock_rdlock(weft_rwlock_t *rw);
WEFT_API int weft_rwlock_tryrdlock(weft_rwlock_t *rw);
WEFT_API int weft_rwlock_timedrdlock(weft_rwlock_t *rw, const struct timespec *abstime);
/* Errors: EDEADLK the caller holds the write lock. */
WEFT_API int weft_rwlock_wrlock(weft_rwlock_t *rw);
WEFT_API int weft_rwlock_trywrlock(weft_rwlock_t *rw);
WEFT_API int weft_rwlock_timedwrlock(weft_rwlock_t *rw, const struct timespec *abstime);
/* Errors: EPERM not held. */
WEFT_API int weft_rwlock_unlock(weft_rwlock_t *rw);

/* ------------------------------------------------------------------------ */
/* Sleeping                                                                 */
/* ------------------------------------------------------------------------ */

/* Blocks the calling weft thread for at least ns nanoseconds; the worker runs
 * other threads meanwhile (sleep(3), nanosleep(2) and every other blocking
 * system call hold the whole worker instead: docs/api.md, "Blocking").
 * Contexts: any (external: nanosleep). */
WEFT_API int weft_sleep_ns(uint64_t ns);
/* nanosleep(2)-shaped. Errors: EINVAL bad timespec. rem, if given, is zeroed. */
WEFT_API int weft_nanosleep(const struct timespec *req, struct timespec *rem);

/* ------------------------------------------------------------------------ */
/* Statistics                                                               */
/* ------------------------------------------------------------------------ */

typedef struct weft_stats {
    uint64_t threads_created;     /* weft threads created (the main one excluded) */
    uint64_t threads_live;        /* weft threads alive now (main included) */
    uint64_t max_live_threads;    /* most alive at once */
    uint64_t context_switches;    /* switches between weft threads or to idle */
    uint64_t stack_bytes_mapped;  /* stack memory mapped now (virtual) */
    uint64_t stack_bytes_peak;    /* most stack memory mapped at once */
    uint64_t parks;               /* times a worker went to sleep */
    uint64_t wakeups;             /* times a worker was woken to run work */
    uint64_t timers_fired;        /* timed waits and sleeps that expired */
    uint64_t busy_ns;             /* all workers: time spent running threads */
    uint64_t idle_ns;             /* all workers: time spent looking for work or parked */
    int workers;                  /* worker kernel threads (WEFT_WORKERS) */
    int active_workers;           /* of those, how many run threads now (WEFT_ADAPT);
                                     = workers when adaptation is off */
    /* Scheduler figures (0 where the policy has no such notion). */
    uint64_t steals;              /* ws: threads taken from another worker's deque */
    uint64_t failed_steals;       /* ws: steal attempts that found nothing */
    uint64_t quota_preemptions;   /* dfs: threads preempted for exceeding WEFT_QUOTA */
    uint64_t dummy_threads;       /* dfs: dummy threads forked before large allocations */
    /* Memory allocated through weft_malloc / weft::allocator. */
    uint64_t heap_bytes;          /* live now */
    uint64_t heap_bytes_peak;     /* high-water mark */
    /* Work and span (critical path) of the fork/join structure, Cilkview-style. */
    uint64_t work_ns;             /* T1: total time spent running threads */
    uint64_t span_ns;             /* T-inf: longest chain of dependent work */
    /* Adaptive worker count (WEFT_ADAPT; active_workers above is the count now). */
    uint64_t adapt_readings;      /* load readings the controller took */
    uint64_t workers_dropped;     /* workers dropped (by the controller or weft_adapt_set_active) */
    uint64_t workers_added;       /* workers taken back */
    uint64_t steal_naps;          /* ws: naps of idle workers after a run of futile steals */
} weft_stats_t;

typedef struct weft_worker_stats {
    uint64_t context_switches;
    uint64_t threads_created;
    uint64_t parks;
    uint64_t busy_ns;
    uint64_t idle_ns;
} weft_worker_stats_t;

/* Fills *out with the figures so far. Errors: EINVAL null or not initialised. */
WEFT_API int weft_stats_get(weft_stats_t *out);
/* Errors: EINVAL worker out of range or not initialised. */
WEFT_API int weft_worker_stats_get(int worker, weft_worker_stats_t *out);
/* Clears the counters and high-water marks (live counts are kept), the
 * filament counters (weft_fil_stats_t) included. */
WEFT_API int weft_stats_reset(void);
/* Prints the statistics as WEFT_STATS=1 does, to stderr. */
WEFT_API void weft_stats_print(void);

/* ------------------------------------------------------------------------ */
/* Adaptive worker count (WEFT_ADAPT; docs/design/adapt.md). Of the workers,
 * only the first active_workers run threads; a controller changes that count
 * with the load of the whole machine: "schedstat" (the default) from the
 * kernel's account of how long the workers wait for a CPU, "asat" with
 * Severance & Enbody's timed-barrier test; "off" keeps it fixed. Weft
 * processes of one user also share the CPUs through a machine-wide budget
 * (WEFT_BUDGET). A dropped worker finishes what it runs up to its next
 * scheduling point and leaves the rest to the others: no thread and no
 * filament waits for it. */
typedef struct weft_adapt_info {
    const char *mode;      /* "schedstat", "asat" or "off" (what runs: "off" if
                              the probe is not available on this kernel) */
    int workers;           /* the bound: WEFT_WORKERS */
    int active_workers;    /* now */
    int interval_ms;       /* between two readings (0 when off) */
    int budget_share;      /* this process's share of the machine-wide budget
                              at the last reading; 0 = no budget */
    int budget_members;    /* weft processes in the budget at the last reading */
    int reserved_[2];
} weft_adapt_info_t;

/* Fills *out. Errors: EINVAL null or not initialised. Contexts: any. */
WEFT_API int weft_adapt_get(weft_adapt_info_t *out);
/* Sets the number of active workers by hand (as omp_set_num_threads does):
 * n from 1 to weft_num_workers(). With WEFT_ADAPT=off the count stays there;
 * otherwise the controller goes on from it at its next reading.
 * Errors: EINVAL n out of range or not initialised. Contexts: any. */
WEFT_API int weft_adapt_set_active(int n);

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */
/* ------------------------------------------------------------------------ */

/* weft's allocator: the C library's allocator plus accounting. Every policy
 * tracks the bytes live through it and their high-water mark (heap_bytes,
 * heap_bytes_peak in weft_stats_t; exact with one worker, sampled with
 * several: see docs/design/dfs.md). Under the dfs scheduler it also charges
 * the calling weft thread against the memory quota K (WEFT_QUOTA, Narlikar & Blelloch):
 * a thread that would take its allocations, net of what it frees, past K since
 * it was last scheduled is first preempted (it competes again, at its
 * priority, for the worker: quota_preemptions), and an allocation larger than
 * K first forks about size/K dummy threads and waits for them, so that
 * higher-priority work runs before it (dummy_threads). Blocks carry a
 * 16-byte header; they must be released with weft_free (not free), and
 * memory from malloc must not be passed to weft_free or weft_realloc.
 *
 * Contexts: any (external kernel threads and programs that have not started
 *           the runtime are accounted but never preempted; these calls never
 *           start the runtime). Under dfs, weft_malloc, weft_calloc,
 *           weft_aligned_alloc and a growing weft_realloc are scheduling points:
 *           the calling thread may resume on another worker.
 * Errors:   NULL with errno ENOMEM when the memory is not there (or the size
 *           overflows); weft_aligned_alloc: NULL with errno EINVAL if
 *           alignment is not a power of two.
 * Undefined: freeing or reallocating a pointer not obtained from these calls,
 *           or twice; calling them from a signal handler. */

/* size bytes, aligned for any object (16 bytes on x86-64 and AArch64).
 * weft_malloc(0) returns a unique pointer to pass to weft_free. */
WEFT_API void *weft_malloc(size_t size);
/* count * size zeroed bytes. */
WEFT_API void *weft_calloc(size_t count, size_t size);
/* size bytes aligned to alignment (a power of two; any size is accepted). */
WEFT_API void *weft_aligned_alloc(size_t alignment, size_t size);
/* Resizes p (keeping its contents up to the smaller size), possibly moving it.
 * weft_realloc(NULL, n) is weft_malloc(n); weft_realloc(p, 0) frees p and
 * returns NULL. On failure p is left as it was. Only the growth is charged
 * to the quota. A block from weft_aligned_alloc keeps its alignment: it is
 * always moved (a new block, charged in full, then the old one freed). */
WEFT_API void *weft_realloc(void *p, size_t size);
/* Releases p (NULL: nothing) and credits its size to the heap count and to the
 * calling thread's quota. */
WEFT_API void weft_free(void *p);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The rest of the C API, one header per concept: filaments and message
 * passing (their own headers, included here so that weft.h gives it all). */
#include "weft/filament.h"
#include "weft/net.h"

#endif /* WEFT_WEFT_H */
