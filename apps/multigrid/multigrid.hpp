// Multigrid V-cycles for the 2-D Poisson equation -(u_xx + u_yy) = f on the
// unit square, u = 0 on the boundary, on an n x n grid, n = 2^k + 1 (Lowenthal
// et al. §4.4, after [PT91]: a coarse-grid correction made of relaxation,
// restriction, direct solution on the coarsest grid, and interpolation).
//
// One V-cycle from level l (level 0 is the n x n grid, each next level has
// (n_l - 1) / 2 + 1 points a side, the last is 3 x 3):
//   relax twice            weighted Jacobi (omega = 4/5), u -> t, then t -> u;
//   residual               r = f + laplacian_h(u);
//   restrict               full weighting of r gives the next level's f; its u
//                          starts at 0;
//   (next level's V-cycle; on the 3 x 3 grid: u = f h^2 / 4, exact)
//   interpolate            u += bilinear interpolation of the next level's u;
//   relax twice.
// `cycles` V-cycles from u = 0.
//
// The whole solve is a fixed schedule of `step`s (a phase on one level), each a
// loop over the interior rows of one grid, whose rows are independent (Jacobi
// writes another grid). Every version runs the same schedule with the same row
// kernels, so every output equals the serial one bit for bit. They differ in
// how a step's rows run:
//   serial     a loop;
//   filaments  one pool set per step of the V-cycle (a sequence of pool sets,
//              the paper's "sequences of iterative filaments"), one filament per
//              row, rows placed on the workers' pools in contiguous strips, the
//              same strips in every step (locality between phases); each strip
//              is a dense range, run as a loop (§3.1). The direct solution is the
//              after function of the restriction to the coarsest grid, and the
//              after function of the last step counts V-cycles;
//   coarse     one kernel thread per worker with the same static strips and a
//              barrier after every step (its completion does the direct solve).
// Difference from the paper (and from its Jacobi, §2.2): a filament is a row,
// not a point. Per-point descriptors would be 5.7 n^2 filaments per run (96
// million at the benchmark size, n = 4097: 768 MB); weft_fil_create costs
// 3.0 ns a filament (weft-bench micro, fil_create), so creating them would
// take ~0.29 s against ~2 s for the whole serial solve (the paper counts
// creation in the time; docs/design/apps.md). Rows are still n times finer
// than the coarse-grain strips.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace weft::apps::multigrid {

inline constexpr double omega = 0.8;  // weighted Jacobi (optimal smoothing in 2-D)
inline constexpr int cycles = 10;     // V-cycles per solve

// An n x n grid of doubles, row-major.
struct grid {
    explicit grid(std::size_t n_) : n(n_), v(n_ * n_, 0.0) {}
    double* row(std::size_t i) { return v.data() + i * n; }
    const double* row(std::size_t i) const { return v.data() + i * n; }
    std::size_t n;
    std::vector<double> v;
};

// One level: the solution u, Jacobi's second grid t, the right-hand side f,
// the residual r; h2 = h^2 with h = 1 / (n - 1).
struct level {
    explicit level(std::size_t n_)
        : n(n_), h2(1.0 / static_cast<double>((n_ - 1) * (n_ - 1))), u(n_), t(n_), f(n_), r(n_) {}
    std::size_t n;
    double h2;
    grid u, t, f, r;
};

// The levels, finest first, down to 3 x 3. n must be 2^k + 1, k >= 1.
using hierarchy = std::vector<level>;
hierarchy make_hierarchy(std::size_t n);

enum class op {
    relax_ut,     // t = jacobi(u) on level l
    relax_tu,     // u = jacobi(t) on level l
    residual,     // r = f + laplacian(u) on level l
    restrict_,    // level l+1's f = full weighting of level l's r, its u = 0 (rows of l+1)
    interpolate,  // level l's u += interpolation of level l+1's u
};

struct step {
    op kind;
    int level;
    // The grid whose interior rows the step loops over (level + 1 for restrict_).
    int rows_level() const { return kind == op::restrict_ ? level + 1 : level; }
};

// The steps of one V-cycle from level 0, in order.
std::vector<step> vcycle_schedule(const hierarchy& h);
// Whether the direct solve follows step s (s restricts to the coarsest level).
inline bool solves_after(const hierarchy& h, const step& s) {
    return s.kind == op::restrict_ && s.level + 2 == static_cast<int>(h.size());
}

// Row i (interior) of step s. Rows of a step are independent.
void run_row(hierarchy& h, const step& s, std::size_t i);
// The exact solution on the 3 x 3 grid.
void direct_solve(hierarchy& h);

// Resets level 0's u to 0 (the initial guess); f is never written.
void reset(hierarchy& h);

// The versions: `cycles` V-cycles; the result is h[0].u.
void serial(hierarchy& h);
void filaments(hierarchy& h);
void coarse(hierarchy& h, int workers);

}  // namespace weft::apps::multigrid
