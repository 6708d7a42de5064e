// weft-bench asat's OpenMP version: the time-step loop of asat_kernel.hpp on
// libgomp, run in a child process with OMP_DYNAMIC=true (asat.cpp).
#include <omp.h>

#include <atomic>
#include <cstdint>

#include "asat_kernel.hpp"

namespace weft::bench::asat {

void run_openmp(arrays& x, std::uint64_t first_step, std::uint64_t steps, std::atomic<int>& team) {
    long const n = static_cast<long>(x.size());
    for (std::uint64_t t = first_step; t < first_step + steps; ++t) {
        x.serial(t);
        // A parallel region per time step, as the paper's compiler makes one per
        // DOACROSS loop: libgomp chooses its team size here (with OMP_DYNAMIC,
        // from the load average).
#pragma omp parallel default(shared)
        {
            if (omp_get_thread_num() == 0) team.store(omp_get_num_threads(), std::memory_order_relaxed);
#pragma omp for schedule(static)
            for (long i = 0; i < n; ++i) x.iteration(static_cast<std::size_t>(i));
        }
    }
}

}  // namespace weft::bench::asat
