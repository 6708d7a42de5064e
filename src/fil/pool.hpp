// weft::detail::fil — pools and pool sets of iterative filaments (Lowenthal, Freeh & Andrews §2.1-2.2, §3.1).
//
// A pool is an array of descriptors, each only the filament's two arguments
// (8 bytes: no function pointer, no link — the function is the pool set's),
// placed on one worker. A pool set groups pools with one body and one after
// function. Descriptors are classified once after each change
// (pattern.cpp): a pool that is a dense 1-D or 2-D range then runs as a plain
// loop with the indices generated in registers.
#pragma once

#include <cstdint>
#include <vector>

#include "base/primitives.hpp"
#include "weft/detail/filament_abi.hpp"
#include "weft/weft.h"

namespace weft::detail::fil {

struct desc {
    std::int32_t i, j;
};
static_assert(sizeof(desc) == 8, "descriptors are two ints");

// The result of classifying a pool (the dense fields of weft_fil_pool_view_).
struct pattern {
    int path = WEFT_FIL_PATH_GENERAL;
    std::int64_t i0 = 0, istride = 1, nrows = 0, j0 = 0, ncols = 0;
};

// Classifies n descriptors (pattern.cpp). O(n), vectorisable; run by the worker
// that runs the pool, the first time it runs after a change.
pattern recognize(const desc* d, std::size_t n);

}  // namespace weft::detail::fil

struct weft_fil_pool_s {
    weft_fil_poolset_s* set = nullptr;
    int owner = 0;  // the worker it is placed on (taken modulo the workers)
    std::vector<weft::detail::fil::desc> descs;
    // Classification, redone when `dirty` (descs changed since).
    weft::detail::fil::pattern pat;
    bool dirty = true;
    // Descriptors added since the count of created filaments last took them
    // (at the pool's next sweep, or when its set is destroyed): an add is a
    // push and two plain stores, no shared counter (mandelbrot adds 3.24 M).
    std::size_t uncounted = 0;
    bool is_range = false;    // a parallel_for chunk: pat is fixed, no descriptors
    std::uint64_t sweeps = 0; // sweeps run (parity: direction of the next one)
    // How the last sweep ran; read by weft_fil_pool_path from any thread.
    weft::detail::atomic<int> last_path{WEFT_FIL_PATH_NONE};
    // The last sweep number that claimed this pool (sweep.cpp): one worker
    // runs each pool per sweep, its owner unless the owner is absent.
    alignas(64) weft::detail::atomic<std::uint64_t> claimed{0};
};

struct weft_fil_poolset_s {
    // What runs a pool: the C loop over fn (sweep.cpp) or a C++ template.
    weft_fil_run_pool_fn_ run = nullptr;
    void* run_ctx = nullptr;
    weft_fil_after_ctx_fn_ after = nullptr;  // null: see weft_fil_poolset_create
    void* after_ctx = nullptr;
    // The C API's pieces.
    weft_fil_fn fn = nullptr;
    weft_fil_after_fn c_after = nullptr;
    void* arg = nullptr;

    int order = WEFT_FIL_BACK_AND_FORTH;
    // Any worker may run any unclaimed pool (parallel_for chunks); else only
    // the pools of workers whose server has not started (locality first).
    bool help_any = false;
    bool in_program = false;  // listed for weft_fil_start (program.cpp)
    std::vector<weft_fil_pool_s*> pools;
    weft::detail::atomic<bool> running{false};
};
