// weft::detail::fil — parallel_for as one sweep of a pool set made of ranges.
//
// A 1-D range [i0, i1) or a 2-D block [i0, i1) x [j0, j1) is cut into
// contiguous pieces, chunks_per_worker of them per worker, placed in worker
// order (worker w gets the w-th run of pieces: the static block partition of a
// hand-written coarse-grain program). The pieces are pools whose pattern is
// fixed (is_range: no descriptors are stored or recognised) and the pool set
// lets any worker take any unclaimed piece, so a worker that finishes early
// or a server that starts late evens out the load without a steal protocol.
// Rows are cut when there are enough of them, else columns.
#include <cerrno>
#include <exception>
#include <memory>
#include <new>
#include <vector>

#include "core/runtime.hpp"
#include "fil/pool.hpp"
#include "fil/region.hpp"
#include "fil/sweep.hpp"

using namespace weft::detail;
using namespace weft::detail::fil;

extern "C" WEFT_API int weft_fil_run_range_(std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1,
                                            int chunks_per_worker, weft_fil_run_pool_fn_ run, void* ctx, void* exc) {
    if (run == nullptr || chunks_per_worker < 1) return EINVAL;
    if (i1 <= i0 || j1 <= j0) return 0;
    if (int rc = weft_fil_init(); rc != 0) return rc;
    const std::int64_t rows = i1 - i0, cols = j1 - j0;
    const int workers = g_rt->nworkers;
    // One worker: one piece (nobody to share with; one loop, as serial code).
    const std::int64_t want = workers == 1 ? 1 : static_cast<std::int64_t>(workers) * chunks_per_worker;
    const bool by_rows = rows >= want || rows >= cols;
    const std::int64_t len = by_rows ? rows : cols;
    const std::int64_t pieces = len < want ? len : want;

    weft_fil_poolset_s set;
    set.run = run;
    set.run_ctx = ctx;
    set.order = WEFT_FIL_FORWARD;
    set.help_any = true;
    std::unique_ptr<weft_fil_pool_s[]> pools(new (std::nothrow) weft_fil_pool_s[static_cast<std::size_t>(pieces)]);
    if (!pools) return ENOMEM;
    try {
        set.pools.reserve(static_cast<std::size_t>(pieces));
    } catch (const std::bad_alloc&) {
        return ENOMEM;
    }
    for (std::int64_t q = 0; q < pieces; ++q) {
        weft_fil_pool_s& p = pools[static_cast<std::size_t>(q)];
        const std::int64_t lo = len * q / pieces, hi = len * (q + 1) / pieces;
        p.set = &set;
        p.owner = static_cast<int>(q * workers / pieces);
        p.is_range = true;
        p.dirty = false;
        p.pat.i0 = by_rows ? i0 + lo : i0;
        p.pat.nrows = by_rows ? hi - lo : rows;
        p.pat.istride = 1;
        p.pat.j0 = by_rows ? j0 : j0 + lo;
        p.pat.ncols = by_rows ? cols : hi - lo;
        p.pat.path = (p.pat.nrows == 1 || p.pat.ncols == 1) ? WEFT_FIL_PATH_DENSE_1D : WEFT_FIL_PATH_DENSE_2D;
        set.pools.push_back(&p);
    }
    weft_fil_poolset_t sets[1] = {&set};
    int rc = run_sets(sets, 1, exc);
    set.pools.clear();
    return rc;
}
