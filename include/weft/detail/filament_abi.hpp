// weft/detail/filament_abi.hpp — the ABI between the filament templates of
// weft/filament.hpp and libweft (not for direct use).
//
// The templates inline the hot path of every fork (the pruning test) into the
// user's code; everything else (pushing a real fork, waiting in a join,
// starting a region, running pool sets) is a call into the library through
// these few functions, and a few constants compiled into programs. src/fil/
// includes this header for the same layouts, so they are ABI: change them only
// with the soname (and the C++ part with the inline namespace d0).
#pragma once

#include <atomic>
#include <cstdint>

#include "weft/detail/fil_hunger.hpp"
#include "weft/weft.h"

extern "C" {

struct weft_fil_job_;
struct weft_fil_latch_;

// A fork/join filament as the library sees it: rayon's JobRef, a function and
// the address of its state. The state (closure, result, exception) lives
// wherever the forker put it: on its stack (C++ join) or in its worker's arena
// (C weft_fil_fork). `execute` must not throw.
struct weft_fil_job_ {
    void (*execute)(weft_fil_job_* self);
    weft_fil_latch_* latch;  // counts this job until it has run
    int thief;               // set by the library: the worker that took it (-1: none)
    int reserved_;
};

// Counts the children of a parent that have not finished. The parent (the
// participant `owner`) waits for 0 in weft_fil_join_; the worker that finishes
// a stolen child decrements it and wakes the owner if it sleeps.
struct weft_fil_latch_ {
    std::atomic<int> pending;
    void* owner;  // the waiting participant (opaque)
};

// The hot prefix of the calling worker's participant in the running region.
// weft_fil_self_ points to it while the kernel thread runs filaments of a
// region, and to weft_fil_outside_ otherwise. Read on every join: keep it small.
struct weft_fil_self_t_ {
    // This participant's copy of the region's hunger word: zero (or only the
    // counting bias) while every participant has work, the forks are pruned
    // and this participant's list holds its ready job; else a join must look
    // further (weft/detail/fil_hunger.hpp).
    weft::detail::hunger_word hungry;
    int index;   // this participant's worker
    int nparts;  // participants (workers) of the region
    // Jobs on this participant's list (written under the list's lock; read by
    // idle participants choosing the longest list).
    std::atomic<int> queued;
    // While someone is hungry, only a join whose frame is at or above this
    // stack address (no deeper) forks: the work it gives away is then one of
    // the biggest pieces this worker has. Hungry participants lower it as they
    // wait (src/fil/sleepers.hpp, wait_until).
    std::atomic<std::uintptr_t> fork_limit;
    // Forks turned into calls by the inline test while they are counted (or
    // while someone is hungry). Written only by this participant; the library
    // reads it when the participant leaves. On a cache line of its own: idle
    // participants read `queued` and write `fork_limit` above while they look
    // for work, and a counter written at every join must not share their line
    // (fib(38), 2 workers, one run each: 0.041-0.043 s apart, 0.046-0.047 s
    // beside them; 1 worker: 0.078 s either way).
    alignas(64) unsigned long long pruned;
};

// The stack pointer (the depth of the caller on its worker's stack).
inline std::uintptr_t weft_fil_sp_() noexcept {
    std::uintptr_t sp;
#if defined(__x86_64__)
    asm volatile("mov %%rsp, %0" : "=r"(sp));
#elif defined(__aarch64__)
    asm volatile("mov %0, sp" : "=r"(sp));
#else
    sp = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
#endif
    return sp;
}

WEFT_API extern __thread __attribute__((tls_model("initial-exec"))) weft_fil_self_t_* weft_fil_self_;

// Outside any region weft_fil_self_ points here, never at null: this
// participant is always hungry and its fork_limit is 0, so the inline test of
// weft::join fails (to join_cold, which starts a region) without a null check
// of its own. Never written.
WEFT_API extern weft_fil_self_t_ weft_fil_outside_;

// The calling kernel thread's participant in the running region, or null.
inline weft_fil_self_t_* weft_fil_current_() noexcept {
    weft_fil_self_t_* p = weft_fil_self_;
    return p != &weft_fil_outside_ ? p : nullptr;
}

// A pool as its run function sees it: descriptors, or the dense pattern they
// form (recognised by the library), or a range (parallel_for).
struct weft_fil_pool_view_ {
    const std::int32_t* desc;  // pairs (i, j); n of them (general path)
    std::int64_t n;            // filaments
    int path;                  // WEFT_FIL_PATH_GENERAL / _DENSE_1D / _DENSE_2D
    int backward;              // 1: run in reverse order this sweep
    // Dense paths: rows i0, i0 + istride, ... (nrows of them), each the columns
    // j0 .. j0 + ncols - 1. DENSE_1D is nrows == 1 or ncols == 1.
    std::int64_t i0, istride, nrows, j0, ncols;
};

typedef void (*weft_fil_run_pool_fn_)(void* ctx, const weft_fil_pool_view_* view);
typedef int (*weft_fil_after_ctx_fn_)(void* ctx);

// Forks j (the inline test saw a hungry worker): 1 if it was made available to
// other workers (then the caller runs its own branch and calls weft_fil_join_),
// 0 if the library pruned it (run it yourself, now).
WEFT_API int weft_fil_fork_(weft_fil_job_* j);
// After running its own branch: 1 if j was taken back (run it yourself), 0 if
// another worker ran it (it has finished; its latch is 0).
WEFT_API int weft_fil_join_(weft_fil_job_* j);
// Runs root(ctx) as the root of a fork/join region. root must not throw.
WEFT_API int weft_fil_run_fj_(void (*root)(void*), void* ctx, const weft_fil_fj_options_t* opts);
// Creates a pool set driven by C++ callbacks (not in the weft_fil_start list).
WEFT_API int weft_fil_poolset_create_cb_(weft_fil_poolset_t* ps, weft_fil_run_pool_fn_ run,
                                         weft_fil_after_ctx_fn_ after, void* ctx);
// Runs a sequence of pool sets; a C++ exception thrown by a callback is
// stored in *exc (a std::exception_ptr*), and the call returns ECANCELED.
WEFT_API int weft_fil_run_sets_ex_(const weft_fil_poolset_t* sets, int n, void* exc);
// One sweep over [i0, i1) x [j0, j1) cut into pools (chunks_per_worker per
// worker, help between workers allowed); exceptions as above.
WEFT_API int weft_fil_run_range_(std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1,
                                 int chunks_per_worker, weft_fil_run_pool_fn_ run, void* ctx, void* exc);

}  // extern "C"

namespace weft {
namespace detail {
inline namespace d0 {

// Pieces of a top-level parallel_for per worker (weft_fil_run_range_): enough
// for a worker that finishes early to help, few enough that a piece is a long
// loop. Guess.
inline constexpr int for_chunks_per_worker = 4;
// Nested loops split down to about this many pieces per worker. Guess.
inline constexpr int for_nested_pieces_per_worker = 8;

}  // namespace d0
}  // namespace detail
}  // namespace weft
