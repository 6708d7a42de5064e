// weft-bench asat: the program of Severance & Enbody's "Automatic Self-Allocating
// Threads (ASAT) on an SGI Challenge" (their Figures 1-5), shared by the weft
// version (asat.cpp) and the OpenMP one (asat_omp.cpp).
//
// The paper's kernel is "a simple, very parallel computation": a parallel loop
// of J = 1..100000 with 3 flops and 5 memory references per iteration and no
// dependences, run inside the DO ITIME time-step loop with a serial part
// between the parallel loops. Here one iteration is
//     a[i] = b[i] * c[i] + d[i] * e[i]
// 3 flops (two multiplies, one add) and 5 memory references (loads of b, c, d,
// e and the store of a). Five arrays of n doubles: n = 100,000 is 4 MB, more
// than a core's 2 MB L2 and well inside the 32 MB L3 of the machine the figures
// come from, so each sweep goes to memory beyond L2 without being bound by
// DRAM alone.
//
// The serial part of time step t (the paper's code between the parallel loops,
// where ASAT_ADJUST runs) folds a strided sample of a into a checksum and
// feeds one element of a back into d, so that each step's loop computes
// something new and cannot be skipped. Bounded: with b, c, e in [0.5, 1) and d
// = a / 2 after the update, every value stays below 2.
#pragma once

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace weft::bench::asat {

inline constexpr int flops_per_iteration = 3;
inline constexpr int refs_per_iteration = 5;
// Elements of a the serial part reads per time step.
inline constexpr std::size_t serial_samples = 64;

struct arrays {
    std::vector<double> a, b, c, d, e;
    double checksum = 0;

    explicit arrays(std::size_t n) : a(n, 0.0), b(n), c(n), d(n), e(n) {
        for (std::size_t i = 0; i < n; ++i) {
            b[i] = 0.5 + 0.5 * static_cast<double>(i % 997) / 997.0;
            c[i] = 0.5 + 0.5 * static_cast<double>(i % 991) / 991.0;
            d[i] = 0.25 + 0.25 * static_cast<double>(i % 983) / 983.0;
            e[i] = 0.5 + 0.5 * static_cast<double>(i % 977) / 977.0;
        }
    }
    std::size_t size() const noexcept { return a.size(); }

    // One iteration of the parallel loop.
    void iteration(std::size_t i) noexcept { a[i] = b[i] * c[i] + d[i] * e[i]; }

    // The serial part before time step t's loop.
    void serial(std::uint64_t t) noexcept {
        std::size_t const n = size();
        std::size_t const stride = n / serial_samples + 1;
        double s = 0;
        for (std::size_t i = static_cast<std::size_t>(t) % stride; i < n; i += stride) s += a[i];
        checksum += s;
        std::size_t const j = static_cast<std::size_t>((t * 7919u) % n);
        d[j] = 0.5 * a[j];
    }

    // Index of the first element whose a differs from the loop's formula over
    // the final inputs (every step's serial part runs before its loop, so
    // after the last loop a must match everywhere); size() if none does.
    std::size_t first_wrong() const noexcept {
        for (std::size_t i = 0; i < size(); ++i) {
            double const want = b[i] * c[i] + d[i] * e[i];
            if (!(std::fabs(a[i] - want) <= 1e-12 * std::fabs(want))) return i;
        }
        return size();
    }
};

#if WEFT_HAVE_OPENMP
// asat_omp.cpp: `steps` time steps, each the serial part and then the loop as
// `#pragma omp parallel` + `omp for` (schedule static) on libgomp, whose team
// size follows OMP_NUM_THREADS and OMP_DYNAMIC. Each team's thread 0 stores the
// team's size in `team` (for the sampler).
void run_openmp(arrays& x, std::uint64_t first_step, std::uint64_t steps, std::atomic<int>& team);
#endif

}  // namespace weft::bench::asat
