// Jacobi iteration for Laplace's equation on an n x n grid (Lowenthal et al. §2.2,
// §4.2): the top edge is held at 1, the other edges at 0, the interior starts
// at 0. A sweep sets every interior point of the new grid to the average of
// its four neighbours in the old grid, then the grids swap roles
// (back-and-forth between two grids, no copy). The iteration stops when the
// largest change of a sweep, max |new - old|, is below `epsilon`, or after
// `max_sweeps` sweeps, whichever comes first: the cap keeps the benchmark
// sizes' running time proportional to n^2 (Jacobi needs O(n^2) sweeps to
// converge), and every version does the same number of sweeps because the
// maximum is order-independent (its value is exact whatever the order).
//
// Versions (every one computes each point with `relax_point`):
//   serial     plain loops over the rows;
//   coarse     one std::thread per worker, each a static strip of rows, a
//              sweep_barrier (apps/coarse.hpp) per sweep whose completion
//              step combines the per-thread maxima, swaps the grids and
//              decides to stop;
//   filaments  one iterative filament per interior point (the paper's
//              `jacobi(i, j)`), in one pool per worker holding a strip of rows,
//              so that the runtime recognises each pool as a dense 2-D block and
//              runs it as a plain loop (§3.1); maxdiff is a weft::reduction
//              (the paper's `Local(maxdiff)`), which weft::with_local keeps in
//              a register while a pool runs, combined with MAX in the pool
//              set's after function, which also swaps the grids (the paper's
//              convergenceCheck). Pools run forward every sweep
//              (weft::order::forward; docs/design/apps.md, "Sweep order");
//   omp, tbb   the same strips with `omp for reduction(max:)` inside one
//              parallel region / tbb::parallel_reduce per sweep.
// Differences from the paper: the sweep cap (above); the boundary values are
// ours (the paper does not give them); maxdiff is reduced as the bit pattern
// of the double (same maximum; see `bits` for why); every version's row loop
// is the one out-of-line relax_rows (see there).
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace weft::apps::jacobi {

// The paper's EPSILON.
inline constexpr double epsilon = 1e-6;
// At most this many sweeps (the benchmark sizes stop here, small grids converge).
inline constexpr int max_sweeps = 10000;

// What a run produces besides the grids: how many sweeps it made and the
// largest change of the last one. After the run the newest values are in the
// grid the first sweep wrote (b) when `sweeps` is odd, in a when it is even.
struct outcome {
    int sweeps = 0;
    double maxdiff = 0.0;
};

// Whether the iteration stops after a sweep whose largest change was m.
inline bool finished(double m, int sweeps) { return m < epsilon || sweeps >= max_sweeps; }

// One filament: point (i, j) of the new grid from the old one; returns
// |new - old| at that point.
inline double relax_point(const double* old, double* nw, int n, int i, int j) {
    const std::ptrdiff_t k = static_cast<std::ptrdiff_t>(i) * n + j;
    // old[k] is loaded before the store to nw[k]: the grids are page-aligned
    // allocations of the same size, so the two addresses share their low 12
    // bits, and a load issued after the store would wait on it (4K aliasing).
    const double here = old[k];
    const double v = 0.25 * (old[k - n] + old[k + n] + old[k - 1] + old[k + 1]);
    nw[k] = v;
    return std::fabs(v - here);
}

// The largest change is kept as the bit pattern of the double: the bit
// patterns of non-negative doubles order as their values, so the maximum is
// the same, and it is an integer: the compiler knows that a store to the grid
// (a double) cannot change it, and keeps a filament's Local(maxdiff) in a
// register across a pool's loop. (As a double it would be reloaded at every
// point in case a grid store aliased it. Every version uses this same kernel.)
inline std::uint64_t bits(double d) { return std::bit_cast<std::uint64_t>(d); }
inline double from_bits(std::uint64_t b) { return std::bit_cast<double>(b); }

// m = max(m, |new - old| at (i, j)), m a bit pattern (the paper's filament
// `if (temp > Local(maxdiff)) Local(maxdiff) = temp`, without a branch).
inline void relax_max(const double* old, double* nw, int n, int i, int j, std::uint64_t& m) {
    const std::uint64_t d = bits(relax_point(old, nw, n, i, j));
    m = d > m ? d : m;
}

// Interior rows [i0, i1): the largest change (a bit pattern), or m if larger.
// Out of line, so that every version that runs rows (serial, coarse, omp, tbb)
// runs the same machine code: inlined into the coarse version's thread
// function, GCC reloads the constants from memory at every point.
// noipa, not just noinline: the serial call passes constants (i0 = 1, m = 0),
// and GCC's constant-propagation clone of this function is other code at
// another alignment, so serial would not run the same code either.
[[gnu::noipa]] inline std::uint64_t relax_rows(const double* old, double* nw, int n, int i0, int i1, std::uint64_t m) {
    for (int i = i0; i < i1; ++i)
        for (int j = 1; j < n - 1; ++j) relax_max(old, nw, n, i, j, m);
    return m;
}

// The first interior row of strip k of `parts` (strip k is rows
// [strip_begin(n, parts, k), strip_begin(n, parts, k + 1))).
inline int strip_begin(int n, int parts, int k) {
    return 1 + static_cast<int>(static_cast<long long>(n - 2) * k / parts);
}

// The serial version. a and b hold the initial grid (both with the boundary).
inline outcome serial(double* a, double* b, int n) {
    double* old = a;
    double* nw = b;
    outcome o;
    for (;;) {
        const double m = from_bits(relax_rows(old, nw, n, 1, n - 1, 0));
        std::swap(old, nw);
        ++o.sweeps;
        o.maxdiff = m;
        if (finished(m, o.sweeps)) return o;
    }
}

// The coarse-grain version on `workers` kernel threads.
outcome coarse(double* a, double* b, int n, int workers);

// The filaments version, on the workers of the running weft runtime.
outcome filaments(double* a, double* b, int n);

}  // namespace weft::apps::jacobi
