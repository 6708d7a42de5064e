// jacobi on oneTBB: each sweep is a tbb::parallel_reduce (max) over the
// interior rows, in an arena of `workers` threads; the caller swaps the grids
// and tests for convergence between sweeps. The static_partitioner gives each
// thread one contiguous strip of rows, as the coarse-grain, OpenMP
// (schedule(static)) and filaments versions do; the default (auto) partitioner
// would split the rows into many chunks, distributed by stealing.
#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "apps/jacobi/jacobi_instance.hpp"

namespace weft::apps::jacobi {
namespace {

void run(instance& self, int workers) {
    auto& p = static_cast<problem&>(self);
    const int n = p.n;
    double* old = p.a.data();
    double* nw = p.b.data();
    outcome o;
    tbb::task_arena arena(workers);
    arena.execute([&] {
        for (;;) {
            const double m = from_bits(tbb::parallel_reduce(
                tbb::blocked_range<int>(1, n - 1), std::uint64_t{0},
                [&](const tbb::blocked_range<int>& r, std::uint64_t acc) {
                    return relax_rows(old, nw, n, r.begin(), r.end(), acc);
                },
                [](std::uint64_t x, std::uint64_t y) { return std::max(x, y); }, tbb::static_partitioner()));
            std::swap(old, nw);
            ++o.sweeps;
            o.maxdiff = m;
            if (finished(m, o.sweeps)) break;
        }
    });
    p.result = o;
}

peer_registrar const reg{"jacobi", version::tbb, run};

}  // namespace
}  // namespace weft::apps::jacobi
