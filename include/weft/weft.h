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

/* ------------------------------------------------------------------------ */
/* Filaments (Lowenthal, Freeh & Andrews; docs/design/filaments.md)         */
/* ------------------------------------------------------------------------ */
/*
 * Filaments are threads with no stack and no context: a function and its
 * arguments. They run on the workers of the runtime, inside a *region*: a call
 * (weft_fil_start, weft_fil_fj_run, or the C++ weft::parallel_for,
 * weft::fork_join, weft::join, weft::run) that returns when every filament of
 * the region has run. The weft thread that starts a region takes part in it on
 * its own worker (it is kept on that worker until the region ends); every
 * other worker takes part through a *server*, one short-lived weft thread
 * pinned to it. An external kernel thread may start a region too: it then
 * blocks (only itself) while the workers run it.
 *
 * Iterative filaments live in pools (arrays of small descriptors, one pool per
 * worker by default) grouped in pool sets; a pool set has a body, called once
 * per filament and sweep, and an optional "after" function run by one worker
 * once every filament of the set has run (a barrier): it combines reductions,
 * tests convergence and returns WEFT_FIL_CONTINUE or WEFT_FIL_DONE. A region
 * runs a sequence of pool sets, one sweep each, in a loop, until an after
 * function returns WEFT_FIL_DONE. Each pool runs forwards and backwards on
 * alternate sweeps; a pool whose filaments form a dense 1-D or 2-D index range
 * is recognised and run as a plain loop (weft_fil_pool_path).
 *
 * Fork/join filaments are forked (weft_fil_fork) and joined (weft_fil_join)
 * inside a running filament; they run by recursion on the worker's stack.
 * Forks become plain calls while every worker is busy (pruning), but for one
 * job that each worker keeps ready on its list while there are other workers.
 *
 * Filaments should not block: a filament that blocks in a weft primitive
 * blocks its worker's share of the region until it resumes (other weft threads
 * still run on that worker meanwhile).
 */

#define WEFT_FIL_CONTINUE 0 /* after function: run the next pool set of the sequence */
#define WEFT_FIL_DONE 1     /* after function: the region ends */

typedef struct weft_fil_poolset_s *weft_fil_poolset_t;
typedef struct weft_fil_pool_s *weft_fil_pool_t;
typedef struct weft_fil_red_s *weft_fil_red_t;

/* An iterative filament: its two arguments and the pool set's argument. */
typedef void (*weft_fil_fn)(int i, int j, void *arg);
/* Run by one worker after each sweep of a pool set, while the others wait:
 * returns WEFT_FIL_CONTINUE or WEFT_FIL_DONE. */
typedef int (*weft_fil_after_fn)(void *arg);
/* A fork/join filament: args points to the bytes given to weft_fil_fork, result
 * is the pointer given to it (the filament writes its result there). */
typedef void (*weft_fil_fork_fn)(const void *args, void *result);

#define WEFT_FIL_ARGS_MAX 64 /* bytes of arguments a forked filament carries */

/* Prepares the calling thread to use filaments (the paper's fInit); starts the
 * runtime if needed. Optional: every other call does it too. Idempotent.
 * Contexts: any. Errors: as weft_init (EAGAIN, EINVAL). */
WEFT_API int weft_fil_init(void);

/* Creates a pool set whose filaments run fn(i, j, arg) and, after each sweep,
 * after(arg) (NULL: WEFT_FIL_CONTINUE, except on the last set of a sequence,
 * where NULL means WEFT_FIL_DONE: a plain "run every filament once").
 * The set is also appended to the calling thread's list that weft_fil_start
 * runs (the paper's fCreatePoolSet).
 * Contexts: weft thread or external. Errors: EINVAL fn or ps is NULL; ENOMEM.
 * Undefined: using the set from two regions at once. */
WEFT_API int weft_fil_poolset_create(weft_fil_poolset_t *ps, weft_fil_fn fn, weft_fil_after_fn after,
                                     void *arg);
/* Frees a pool set and its pools; removes it from the calling thread's list.
 * Errors: EINVAL null; EBUSY a region runs it. */
WEFT_API int weft_fil_poolset_destroy(weft_fil_poolset_t ps);
/* Sweep order: WEFT_FIL_BACK_AND_FORTH (the default: even sweeps forwards,
 * odd sweeps backwards, so the data the last sweep touched is reused first)
 * or WEFT_FIL_FORWARD. Errors: EINVAL. */
#define WEFT_FIL_BACK_AND_FORTH 0
#define WEFT_FIL_FORWARD 1
WEFT_API int weft_fil_poolset_set_order(weft_fil_poolset_t ps, int order);

/* Creates one pool per worker (the paper's fCreatePools): pools[w] is placed on
 * worker w, room for capacity filaments each (they grow past it as needed).
 * pools must have room for weft_num_workers() handles.
 * Errors: EINVAL null argument; ENOMEM. */
WEFT_API int weft_fil_pools_create(weft_fil_poolset_t ps, size_t capacity, weft_fil_pool_t *pools);
/* Creates one pool placed on `worker` (taken modulo the number of workers). */
WEFT_API int weft_fil_pool_create(weft_fil_poolset_t ps, int worker, size_t capacity, weft_fil_pool_t *pool);

/* Adds the filament (i, j) to a pool (the paper's fCreateFilament): an 8-byte
 * descriptor at the end of the pool's array.
 * Contexts: outside a region running the pool's set, or from the set's own
 * after function (between its sweeps).
 * Errors: EINVAL null pool; ENOMEM.
 * Undefined: from a filament of the set while the set sweeps. */
WEFT_API int weft_fil_create(weft_fil_pool_t pool, int i, int j);
/* Adds the filaments (i, j) for i = i0, i0 + istride, ... below i1 and for
 * j0 <= j < j1, row by row, in one call: the dense range that
 * weft_fil_pool_path reports as WEFT_FIL_PATH_DENSE_1D/2D when it is all the
 * pool holds. Adds nothing if i1 <= i0 or j1 <= j0 (an empty range, as a loop
 * over it). Same contexts as weft_fil_create.
 * Errors: EINVAL null pool or istride < 1; ENOMEM (the pool is then
 * unchanged). */
WEFT_API int weft_fil_create_range(weft_fil_pool_t pool, int i0, int i1, int istride, int j0, int j1);
/* Removes every filament of a pool (the pool stays in its set, placed where it
 * was; an empty pool's sweep runs nothing). Same contexts as
 * weft_fil_create: outside a region running the set, or from the set's own
 * after function — to shrink the work of the next sweeps (clear, then add what
 * remains). Errors: EINVAL null pool or a parallel_for chunk. */
WEFT_API int weft_fil_pool_clear(weft_fil_pool_t pool);
/* Number of filaments in a pool. */
WEFT_API size_t weft_fil_pool_size(weft_fil_pool_t pool);

/* How a pool ran in its last sweep: */
#define WEFT_FIL_PATH_NONE 0     /* not run yet */
#define WEFT_FIL_PATH_GENERAL 1  /* descriptor by descriptor */
#define WEFT_FIL_PATH_DENSE_1D 2 /* (i0 + k*s, j0): a loop over i */
#define WEFT_FIL_PATH_DENSE_2D 3 /* rows i0, i0+s, ..., each the columns j0..j0+n-1 */
WEFT_API int weft_fil_pool_path(weft_fil_pool_t pool);

/* Runs, as one region, every pool set the calling thread created (in order of
 * creation, as a sequence) and every filament it forked outside a region (then
 * joined: the paper's fStart is the implicit join of the initial forks). Forked
 * roots run first, then the pool sets. Returns when all is done.
 * Contexts: weft thread or external; inside a filament the region runs on the
 * calling worker only (nested regions are serial).
 * Errors: ECANCELED a filament or after function threw a C++ exception (the
 * region was cancelled; see weft_fil_run_sets); ENOMEM; EAGAIN no stack for a
 * server. */
WEFT_API int weft_fil_start(void);
/* Runs the given sequence of pool sets as one region.
 * Errors: EINVAL sets NULL or n < 1; EBUSY a set is running; as weft_fil_start. */
WEFT_API int weft_fil_run_sets(const weft_fil_poolset_t *sets, int n);

/* Forks a filament fn(args, result): args_size bytes (at most
 * WEFT_FIL_ARGS_MAX) are copied into its descriptor. Inside a filament the
 * child belongs to the running filament, which waits for it in weft_fil_join
 * (or when it returns); the child may run at once as a plain call (pruning) or
 * later on any worker. Outside a region, the filament becomes a root that the
 * next weft_fil_start of this thread runs.
 * Contexts: a running filament, or a weft thread / external outside regions.
 * Errors: EINVAL fn is NULL or args_size too big; ENOMEM. */
WEFT_API int weft_fil_fork(weft_fil_fork_fn fn, const void *args, size_t args_size, void *result);
/* Waits until every child the running filament forked has finished; the
 * worker runs other filaments meanwhile. Outside a filament it does nothing.
 * Errors: none (0). */
WEFT_API int weft_fil_join(void);

/* Options of a fork/join region. Zero-initialise, then set fields. */
typedef struct weft_fil_fj_options {
    int no_receiver_initiated; /* 1: only the initial tree distribution, no stealing */
    int no_pruning;            /* 1: every fork is a real fork (for measurements) */
    int reserved_[6];
} weft_fil_fj_options_t;
/* Runs fn(args, result) as the root of a fork/join region and returns when it
 * and all its descendants have finished. opts may be NULL.
 * Contexts, errors: as weft_fil_start. */
WEFT_API int weft_fil_fj_run(weft_fil_fork_fn fn, const void *args, size_t args_size, void *result,
                             const weft_fil_fj_options_t *opts);

/* Reduction variables: one copy per worker (the paper's Local()), combined
 * with an associative operator by weft_fil_reduce. */
#define WEFT_FIL_INT64 0  /* int64_t */
#define WEFT_FIL_DOUBLE 1 /* double */
#define WEFT_FIL_BYTES 2  /* size bytes, user operators only */
#define WEFT_FIL_RED_SIZE_MAX 64
#define WEFT_FIL_SUM 0
#define WEFT_FIL_PROD 1
#define WEFT_FIL_MIN 2
#define WEFT_FIL_MAX 3
#define WEFT_FIL_LAND 4 /* logical and: the result is 0 or 1 */
#define WEFT_FIL_LOR 5  /* logical or: the result is 0 or 1 */
/* Creates a reduction variable of `type` (size: its bytes for WEFT_FIL_BYTES,
 * ignored otherwise); every copy starts as *init (NULL: zero bytes).
 * Errors: EINVAL bad type or size; ENOMEM. */
WEFT_API int weft_fil_red_create(weft_fil_red_t *r, int type, size_t size, const void *init);
WEFT_API int weft_fil_red_destroy(weft_fil_red_t r);
/* The calling worker's copy (cast to int64_t*, double* or your type). Inside a
 * region each worker has its own; outside, the copy of the calling worker (or
 * copy 0 for an external thread). Contexts: any. Undefined: a null r. */
WEFT_API void *weft_fil_local(weft_fil_red_t r);
/* Combines every copy with op (one of WEFT_FIL_SUM..LOR) into *out; the
 * copies are left as they are. Call it from an after function (every worker
 * waits then) or outside regions.
 * Errors: EINVAL bad op, or op not valid for the type (WEFT_FIL_BYTES). */
WEFT_API int weft_fil_reduce(weft_fil_red_t r, int op, void *out);
/* The same with a user operator: combine(acc, x, ctx) folds x into acc. It must
 * be associative; copies are combined in worker order. */
WEFT_API int weft_fil_reduce_user(weft_fil_red_t r, void (*combine)(void *acc, const void *x, void *ctx),
                                  void *ctx, void *out);
/* Sets every copy to *value (NULL: zero bytes). */
WEFT_API int weft_fil_red_set(weft_fil_red_t r, const void *value);

/* Filament statistics: counted by the running runtime since weft_init,
 * weft_stats_reset or weft_fil_stats_reset; all zero when none runs. */
typedef struct weft_fil_stats {
    uint64_t regions;           /* regions run */
    uint64_t filaments_created; /* iterative filaments created (counted when their pool is next
                                   swept, or its set destroyed) + fork/join filaments forked
                                   (+ forks_pruned) */
    uint64_t filaments_run;     /* filaments executed (iterative: one per filament and sweep;
                                   + forks_pruned) */
    uint64_t forks;             /* forks that made a filament others could take */
    uint64_t forks_pruned;      /* forks turned into plain calls; counted only while the runtime
                                   measures (weft_config_t.measure, WEFT_STATS=1, WEFT_TRACE),
                                   0 otherwise: the count costs a memory increment per join */
    uint64_t steals;            /* fork/join filaments taken from another worker's list */
    uint64_t tree_sends;        /* filaments given to a child in the initial tree distribution */
    uint64_t pools_general;     /* pool sweeps run descriptor by descriptor */
    uint64_t pools_dense_1d;    /* pool sweeps run as a 1-D loop (coarsened) */
    uint64_t pools_dense_2d;    /* pool sweeps run as a 2-D loop (coarsened) */
    uint64_t pools_helped;      /* pool sweeps run by a worker other than the pool's own */
    uint64_t sweeps;            /* pool-set sweeps (barriers) */
    uint64_t sleeps;            /* times a worker blocked waiting inside a region */
} weft_fil_stats_t;
/* Errors: EINVAL null. */
WEFT_API int weft_fil_stats_get(weft_fil_stats_t *out);
/* One worker's share (filaments_run, steals, ... of that worker; regions and
 * sweeps count where they ended, an external caller's region and filaments
 * created by an external thread on worker 0); the shares add up to
 * weft_fil_stats_get's. Errors: EINVAL out of range or null. */
WEFT_API int weft_fil_worker_stats_get(int worker, weft_fil_stats_t *out);
/* Clears the filament counters only. */
WEFT_API int weft_fil_stats_reset(void);

/* ------------------------------------------------------------------------ */
/* Message passing: nodes and ports (docs/design/net.md)                     */
/* ------------------------------------------------------------------------ */

/* A job is N nodes; a node is one address space's share of the job: its own
 * port table and the weft threads spawned on it. With the in-process
 * transport ("inproc", the default) all N nodes live in this process and
 * share the one weft runtime's workers. With "mpi" (builds with MPI) each
 * MPI rank is one node, N is the number of ranks, and every thread of a
 * process is on its rank's node (docs/design/mpi.md).
 *
 * Message-passing calls take a relative timeout in nanoseconds (a receive
 * with a timeout is written that way far more often than with a deadline):
 * WEFT_NET_FOREVER waits without limit, 0 only looks, and any other negative
 * value is refused (EINVAL). */
#define WEFT_NET_FOREVER (-1)

/* The most bytes a port may buffer (max_bytes of weft_net_port_create), and
 * so the longest message any port takes: 2^40 (1 TiB). A bound that keeps a
 * port's byte count and a message's allocation from overflowing. */
#define WEFT_NET_PORT_MAX_BYTES ((size_t)1 << 40)

/* The most ports one weft_net_recv_any may wait on. */
#define WEFT_NET_RECV_ANY_MAX 64

/* A port's global ID: the node it lives on, its slot in that node's port
 * table, and the slot's generation. A destroyed port's ID stays invalid when
 * its slot is reused (the generation differs) until the generation wraps
 * after 2^32 reuses of that one slot. Copy and compare it as a value. */
typedef struct weft_port_id {
    uint32_t node;
    uint32_t index;
    uint32_t gen;
    uint32_t reserved_; /* 0 */
} weft_port_id_t;

/* Configuration for weft_net_init. A field that is set (non-zero, non-NULL)
 * wins over its WEFT_* variable, as for weft_config_t (docs/env.md). */
typedef struct weft_net_config {
    int nodes;                 /* nodes in the job, 1..1024; 0 = 1 */
    const char *transport;     /* "inproc", "faulty" or "mpi" (any case; docs/env.md);
                                  NULL = WEFT_NET or "inproc" */
    int64_t latency_alpha_ns;  /* inproc: injected delay of a message to another node,  */
    int64_t latency_beta_ns;   /* alpha + beta * bytes ns; both 0 = WEFT_NET_LATENCY or none */
} weft_net_config_t;

/* What a receive returns beside the bytes. */
typedef struct weft_net_status {
    weft_port_id_t port; /* the port it came from (weft_net_recv_any: which one) */
    int32_t tag;         /* the sender's tag */
    uint32_t source;     /* the sender's node */
    size_t len;          /* the message's length in bytes (also on EMSGSIZE) */
    int64_t sent_ns;     /* a message from another node: CLOCK_MONOTONIC time of its send, */
    int64_t ready_ns;    /* and when it became receivable (sent_ns + the injected delay); */
                         /* 0 for a message from the same node (it is receivable at once) */
} weft_net_status_t;

/* Starts a job of cfg->nodes nodes (NULL: every field unset) on the weft
 * runtime (started from the environment if it is not running). The caller
 * is on node 0 (mpi: on its rank's node; MPI is initialised here unless the
 * program did it, and then it needs MPI_THREAD_SERIALIZED or above).
 * It also starts the job's services (the naming service and the job-wide
 * barrier, below, built on weft/rpc.h): each node's barrier port,
 * and the naming service's port and server thread on node 0. That thread
 * ends with weft_net_finalize; weft_finalize refuses (EBUSY) while a job is
 * running.
 * Contexts: weft thread or external, the job not started.
 * Errors: EBUSY a job is running; EINVAL a bad field or WEFT_NET /
 *         WEFT_NET_LATENCY / WEFT_MPI_THREAD / WEFT_NET_PEER_TIMEOUT value,
 *         nodes other than the ranks under mpi, or
 *         MPI could not start (a message naming it and the valid values is
 *         printed to stderr); ENOMEM. */
WEFT_API int weft_net_init(const weft_net_config_t *cfg);
/* Ends the job: drops the messages still buffered and frees every port.
 * Under mpi every rank calls it (it waits for the others, except a rank
 * declared dead: one that answers nothing for WEFT_NET_PEER_TIMEOUT while it
 * waits is declared so then), and it calls MPI_Finalize if weft_net_init
 * initialised MPI, unless a rank was declared dead (Open MPI's MPI_Finalize
 * can wait for a dead rank for ever; a line on stderr says it was skipped).
 * Returns 0 also when a rank was declared dead, during the job or while this
 * call waited for it (its messages are dropped; stderr names it). With
 * WEFT_NET_PEER_TIMEOUT=off a dead rank is never declared, and this call
 * waits for its bye for ever.
 * Errors: ENOTCONN no job is running; EBUSY a thread is blocked sending to or
 *         receiving from a port (nothing is changed).
 * Undefined: a thread entering a weft_net_* call on a port of this job while
 * it ends, or after. */
WEFT_API int weft_net_finalize(void);
/* The number of nodes of the running job, 0 if none. Contexts: any. */
WEFT_API int weft_net_num_nodes(void);
/* The transport the running job runs on, as WEFT_NET spells it ("inproc",
 * "faulty" or "mpi"), or NULL if no job is running. The string is static.
 * Contexts: any. */
WEFT_API const char *weft_net_transport(void);
/* The caller's node: the node it was spawned on (weft_net_spawn), inherited
 * by the threads it creates; 0 for other threads and for external kernel
 * threads; -1 if no job is running. Contexts: any. */
WEFT_API int weft_net_self_node(void);
/* weft_thread_create for a thread on `node` (attr may be NULL).
 * Errors: ENOTCONN no job; EINVAL node out of range, null t or fn; as
 *         weft_thread_create. */
WEFT_API int weft_net_spawn(weft_thread_t *t, int node, const weft_attr_t *attr, void *(*fn)(void *), void *arg);

/* Creates a port on the caller's node that buffers at most max_msgs
 * messages and at most max_bytes bytes of them (a send blocks while the
 * next message would pass either bound). max_msgs may be anything from 1 to
 * SIZE_MAX (SIZE_MAX: bounded by bytes alone); max_bytes from 1 to
 * WEFT_NET_PORT_MAX_BYTES. Nothing is allocated for either bound: a port's
 * memory is what it buffers.
 * Errors: ENOTCONN no job; EINVAL null id, max_msgs 0, max_bytes 0 or
 *         above WEFT_NET_PORT_MAX_BYTES; ENOSPC the node has 2^20 ports;
 *         ENOMEM. */
WEFT_API int weft_net_port_create(weft_port_id_t *id, size_t max_msgs, size_t max_bytes);
/* Destroys a port of the caller's node: its buffered messages are dropped,
 * the threads blocked sending to it or receiving from it return EPIPE, and
 * its ID is invalid from now on (ENOENT). The sender of a dropped message
 * (its send returned 0 when the message was buffered) is told: its receive
 * that waits now (weft_net_recv, weft_net_recv_any, weft_rpc_call's wait
 * for the reply), or its next receive that finds nothing at once, returns
 * ECONNABORTED with st->port the destroyed port, so that a thread that sent a
 * request and waits for the answer does not wait for ever. Told once per
 * thread however many of its messages were dropped before it looked (a
 * thread of another rank: once per port, as the refusals come back over the
 * wire; its later sends to the port fail with ENOENT); not told: an
 * external thread. A message that reaches the port after the destroy (it was
 * on the wire) is dropped and told the same way.
 * To stop without dropping: weft_net_port_close, drain, then destroy.
 * Errors: ENOTCONN no job; ENOENT no such port (also when its node is not
 *         one of the job's); EPERM the port is on another node. */
WEFT_API int weft_net_port_destroy(weft_port_id_t id);
/* Closes a port of the caller's node for new messages, keeping it: later
 * sends, and the threads blocked sending to it, return EPIPE; receivers take
 * the messages already buffered, then get EPIPE instead of waiting. How a
 * server stops without losing a request silently (docs/design/rpc.md): close,
 * drain, destroy. Closing a closed port does nothing.
 * Errors: ENOTCONN no job; ENOENT no such port; EPERM the port is on
 *         another node. */
WEFT_API int weft_net_port_close(weft_port_id_t id);

/* Sends len bytes (buf may be NULL when len is 0) with `tag` to port `to`,
 * on any node. Returns once the message is copied into the destination
 * port's buffer (or straight into the buffer of a receiver that waits for
 * it); blocks the calling thread while that buffer is full. Messages from
 * one thread to one port are received in the order they were sent; a port
 * delivers in the order messages entered its buffer.
 * Contexts: weft thread (blocks only the thread) or external.
 * Errors: ENOTCONN no job; ENOENT no such port (node, index or generation;
 *         destroyed); EMSGSIZE len is above the port's max_bytes (it could
 *         never be buffered; decided before anything is allocated for the
 *         message, whatever len is, up to SIZE_MAX; mpi: also len above
 *         2^30, the longest message a frame announces); EPIPE the port is
 *         closed, or the port was destroyed while the sender
 *         waited for room (the message is not delivered); EHOSTDOWN (mpi)
 *         the port's node is declared dead: it answered nothing for
 *         WEFT_NET_PEER_TIMEOUT (default 30 s) while this or another thread
 *         waited for its answer (a port probe, credit, a large message's
 *         transfer), and every send to it returns this from then on (not
 *         ETIMEDOUT, which says a caller's own timeout passed; a message a
 *         send returned 0 for before may be lost with the node);
 *         EINVAL null buf with len > 0; ENOMEM. */
WEFT_API int weft_net_send(weft_port_id_t to, int32_t tag, const void *buf, size_t len);
/* Receives the oldest message of `port` (a port of the caller's node) into
 * buf (cap bytes), waiting at most timeout_ns (WEFT_NET_FOREVER: no limit;
 * 0: looks once, as weft_net_try_recv but with ETIMEDOUT).
 * st (may be NULL) gets its tag, source, length and times.
 * Errors: ENOTCONN no job; ENOENT no such port (also when its node is not
 *         one of the job's); EPERM the port is on another node; ETIMEDOUT
 *         nothing arrived in time; EMSGSIZE the oldest message is longer than
 *         cap: it stays queued, st->len says its length; EPIPE the port was
 *         destroyed while the caller waited, or it is closed and holds no
 *         message (at once, without waiting); ECONNABORTED a message this
 *         thread sent was dropped by weft_net_port_destroy (st->port names
 *         that port; reported instead of waiting or of ETIMEDOUT, once; a
 *         message already receivable here is received first); EINVAL null
 *         buf with cap > 0, timeout_ns negative other than WEFT_NET_FOREVER. */
WEFT_API int weft_net_recv(weft_port_id_t port, void *buf, size_t cap, weft_net_status_t *st, int64_t timeout_ns);
/* weft_net_recv that never blocks. Errors: EAGAIN no message is receivable
 * now (the port is open); ECONNABORTED instead of EAGAIN when a message this
 * thread sent was dropped (as weft_net_recv); EPIPE the port is closed and holds no message (a
 * closed port's buffered messages are received first); as weft_net_recv. */
WEFT_API int weft_net_try_recv(weft_port_id_t port, void *buf, size_t cap, weft_net_status_t *st);
/* Receives from whichever of ports[0..n-1] (ports of the caller's node) has a
 * receivable message first; ports earlier in the array are looked at first.
 * st->port says which port it came from, as it does on an error that names
 * one port (ENOENT, EPIPE, EMSGSIZE).
 * Errors: EINVAL n is 0 or above WEFT_NET_RECV_ANY_MAX, null ports or st;
 *         as weft_net_recv. */
WEFT_API int weft_net_recv_any(const weft_port_id_t *ports, size_t n, void *buf, size_t cap, weft_net_status_t *st,
                               int64_t timeout_ns);

/* ------------------------------------------------------------------------ */
/* Naming service                                                           */
/* ------------------------------------------------------------------------ */
/* Names map to port IDs for the whole job. The service is an RPC server
 * (weft/rpc.h) of one thread on node 0, started by weft_net_init, at the port
 * weft_net_names_port returns (node 0, index 1: the second port the job
 * creates, after node 0's barrier port). Names are 1..WEFT_NET_NAME_MAX
 * bytes, NUL-terminated. Contexts: weft thread or external.
 * Each call below also returns EHOSTDOWN when node 0 is declared dead (mpi),
 * as weft_rpc_call does. (Felten & McNamee, "Improving the performance of
 * message-passing applications by multithreading", §6.3.) */
#define WEFT_NET_NAME_MAX 255

/* Errors: ENOTCONN no job; EINVAL null name or empty; ENAMETOOLONG longer
 * than WEFT_NET_NAME_MAX; EEXIST the name is registered (to any port). */
WEFT_API int weft_net_name_register(const char *name, weft_port_id_t port);
/* Waits until `name` is registered, at most timeout_ns (0: look once;
 * WEFT_NET_FOREVER: no limit), and stores its port in *port.
 * Errors: ENOTCONN; EINVAL null name, empty, null port, or timeout_ns
 *         negative other than WEFT_NET_FOREVER; ENAMETOOLONG;
 *         ETIMEDOUT not registered in time. */
WEFT_API int weft_net_name_lookup(const char *name, weft_port_id_t *port, int64_t timeout_ns);
/* Errors: ENOTCONN; EINVAL; ENAMETOOLONG; ENOENT the name is not registered. */
WEFT_API int weft_net_name_unregister(const char *name);
/* The naming service's port. Errors: ENOTCONN no job; EINVAL null id. */
WEFT_API int weft_net_names_port(weft_port_id_t *id);

/* ------------------------------------------------------------------------ */
/* Job-wide barrier                                                         */
/* ------------------------------------------------------------------------ */
/* Returns once one thread of every node of the job has called it (the
 * "participant" of its node: any one thread, a different one from round to
 * round if the program likes), blocking only the calling thread. Built on
 * one port per node, created by weft_net_init (index 0 of each node); node 0
 * gathers the arrivals and sends the releases. Node-local synchronization is
 * weft_barrier_*.
 * Errors: ENOTCONN no job; EBUSY another thread of this node is in the
 *         barrier now; EPIPE or ENOENT a barrier port was closed or destroyed;
 *         EHOSTDOWN a node it waits for is declared dead (mpi: node 0, or on
 *         node 0 one that has not arrived; WEFT_NET_PEER_TIMEOUT). */
WEFT_API int weft_net_barrier(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WEFT_WEFT_H */
