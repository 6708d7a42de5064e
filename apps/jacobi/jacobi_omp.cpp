// jacobi on OpenMP: one parallel region for the whole iteration; each sweep
// is an `omp for` over the interior rows with static scheduling (the strips of
// the coarse-grain version) and reduction(max:); one thread then swaps the
// grids and tests for convergence.
#include <omp.h>

#include <cstdint>
#include <utility>

#include "apps/jacobi/jacobi_instance.hpp"

namespace weft::apps::jacobi {
namespace {

outcome omp_run(double* a, double* b, int n, int workers) {
    double* old = a;
    double* nw = b;
    outcome o;
    bool done = false;
    std::uint64_t m = 0;  // a bit pattern (jacobi.hpp)
#pragma omp parallel num_threads(workers) shared(old, nw, o, done, m)
    do {
#pragma omp for schedule(static) reduction(max : m)
        for (int i = 1; i < n - 1; ++i) m = relax_rows(old, nw, n, i, i + 1, m);
        // (the implicit barrier of the loop: m is complete)
#pragma omp single
        {
            std::swap(old, nw);
            ++o.sweeps;
            o.maxdiff = from_bits(m);
            done = finished(o.maxdiff, o.sweeps);
            m = 0;
        }
        // (the implicit barrier of single: everyone sees done and the swap)
    } while (!done);
    return o;
}

void run(instance& self, int workers) {
    auto& p = static_cast<problem&>(self);
    p.result = omp_run(p.a.data(), p.b.data(), p.n, workers);
}

peer_registrar const reg{"jacobi", version::omp, run};

}  // namespace
}  // namespace weft::apps::jacobi
