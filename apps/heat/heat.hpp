// heat: the two-dimensional heat equation by explicit finite differences, the
// shape of Cilk's `heat` (Arora, Blumofe & Plaxton run it beside knary,
// Figures 25 and 28): every time step a divide-and-conquer over the grid's
// rows on weft threads, and a join of them all before the next step.
//
// An nx x ny grid, its edges held fixed (the top row at 1, the other edges at
// 0), the interior starting at 0; each of `steps` steps computes, for every
// interior point,
//     new[i][j] = old[i][j] + alpha * (old[i-1][j] + old[i+1][j] + old[i][j-1] + old[i][j+1] - 4 old[i][j])
// with alpha = 0.2 (below 1/4: the explicit scheme is stable), then swaps the
// grids. Every point's arithmetic is the same in both versions, so they agree
// exactly.
//   serial     the steps in plain loops;
//   fork_join  each step's rows by divide_and_conquer (apps/fork_join.hpp),
//              pieces of about fork_join_grain points. Call it on a weft
//              thread of a running runtime.
// heat is not part of the Filaments suite (apps/app.hpp registers that
// paper's applications): it has no coarse-grain or filaments version.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace weft::apps::heat {

inline constexpr double alpha = 0.2;
// Points of one piece of fork_join's step: about 4 us here, 50 times a spawn
// and join.
inline constexpr int fork_join_grain = 4096;

struct grid {
    // nx, ny >= 3 (an interior); steps >= 0. Starts reset.
    grid(int nx, int ny, int steps);
    // The initial state: edges fixed, interior 0, in both buffers.
    void reset();
    // The buffer with the newest values (after `steps` steps).
    const std::vector<double>& newest() const { return steps % 2 == 0 ? u : v; }
    int nx, ny, steps;
    std::vector<double> u, v;  // row-major nx x ny; step s reads (s even ? u : v)
};

// One step of rows [i0, i1) (interior rows only) from `old` into `nw`.
inline void step_rows(const double* old, double* nw, int ny, int i0, int i1) {
    for (int i = i0; i < i1; ++i) {
        const double* up = old + static_cast<std::size_t>(i - 1) * ny;
        const double* row = old + static_cast<std::size_t>(i) * ny;
        const double* down = old + static_cast<std::size_t>(i + 1) * ny;
        double* out = nw + static_cast<std::size_t>(i) * ny;
        for (int j = 1; j < ny - 1; ++j)
            out[j] = row[j] + alpha * (up[j] + down[j] + row[j - 1] + row[j + 1] - 4.0 * row[j]);
    }
}

void serial(grid& g);
void fork_join(grid& g);

// Empty when a's newest values equal b's exactly; else how many points differ
// and the first (apps/coarse.hpp, compare_exact).
std::string compare(const grid& a, const grid& b);

}  // namespace weft::apps::heat
