/* weft/filament.h — filaments: stateless threads in pools and fork/join regions.
 *
 * Part of the C API of weft.h, which includes it: the Contexts/Errors/
 * Undefined conventions of weft.h hold here too. */
#ifndef WEFT_FILAMENT_H
#define WEFT_FILAMENT_H

#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WEFT_FILAMENT_H */
