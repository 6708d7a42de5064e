// The matmul algorithm on OpenMP tasks: each fork is a task, each join a
// taskwait; temporaries from malloc, counted to report the heap peak.
#include <omp.h>

#include <atomic>
#include <cstdlib>

#include "harness.hpp"
#include "matmul_peers.hpp"

namespace weft::bench::matmul {
namespace {

struct omp_exec : counting_heap {
    template <class... F>
    void fork_join(F&&... f) {
        // Tasks capture the callables by reference: they outlive the taskwait.
        ((void)[&] {
#pragma omp task default(shared)
            f();
        }(), ...);
#pragma omp taskwait
    }
};

}  // namespace

peer_result run_openmp(problem const& p, apps::matmul::view c, int workers) {
    omp_exec ex;
    std::uint64_t t0 = now_ns();
#pragma omp parallel num_threads(workers) default(shared)
#pragma omp single
    apps::matmul::multiply(ex, p.a, p.b, c, p.n, p.leaf);
    std::uint64_t t1 = now_ns();
    return {static_cast<double>(t1 - t0) / 1e9, ex.peak.load()};
}

}  // namespace weft::bench::matmul
