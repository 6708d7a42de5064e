// weft/detail/fil_pool_loops.hpp — the loops that run one pool of a pool set
// (not for direct use).
//
// One definition for both APIs: weft::pool_set (weft/filament.hpp) passes its
// body, which is inlined into the loops; the C API (src/fil/pool.cpp) passes a
// call through the set's function pointer. What the recognised paths remove in
// both is the descriptor traffic: on a dense path the arguments are loop
// counters in registers (Lowenthal, Freeh & Andrews §3.1, "pattern recognition").
#pragma once

#include <cstdint>

#include "weft/detail/filament_abi.hpp"
#include "weft/weft.h"

namespace weft {
namespace detail {
inline namespace d0 {

// body(i, j) for every filament of the pool v describes, in v's order.
template <class F>
[[gnu::always_inline]] inline void run_pool_loops(F&& body, const weft_fil_pool_view_* v) {
    const bool back = v->backward != 0;
    if (v->path == WEFT_FIL_PATH_GENERAL) {
        // Arguments loaded from the descriptors.
        const std::int32_t* d = v->desc;
        const std::int64_t n = v->n;
        if (!back) {
            for (std::int64_t k = 0; k < n; ++k) body(static_cast<int>(d[2 * k]), static_cast<int>(d[2 * k + 1]));
        } else {
            for (std::int64_t k = n; k-- > 0;) body(static_cast<int>(d[2 * k]), static_cast<int>(d[2 * k + 1]));
        }
        return;
    }
    // Dense: arguments generated in registers.
    const int i0 = static_cast<int>(v->i0), s = static_cast<int>(v->istride), j0 = static_cast<int>(v->j0);
    const int nr = static_cast<int>(v->nrows), nc = static_cast<int>(v->ncols);
    const int j1 = j0 + nc;
    if (nc == 1) {
        // A column: one loop. As rows of one column it would set up a one-trip
        // inner loop per filament: 18.3 instructions a filament against 13.3
        // through the C API with micro's body (bench/callgrind_micro.sh fil_sweep_dense).
        if (!back) {
            for (int r = 0, i = i0; r < nr; ++r, i += s) body(i, j0);
        } else {
            for (int r = nr - 1, i = i0 + (nr - 1) * s; r >= 0; --r, i -= s) body(i, j0);
        }
    } else if (!back) {
        for (int r = 0, i = i0; r < nr; ++r, i += s)
            for (int j = j0; j < j1; ++j) body(i, j);
    } else {
        for (int r = nr - 1, i = i0 + (nr - 1) * s; r >= 0; --r, i -= s)
            for (int j = j1 - 1; j >= j0; --j) body(i, j);
    }
}

}  // namespace d0
}  // namespace detail
}  // namespace weft
