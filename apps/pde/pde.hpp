// The PDE solver of Felten & McNamee ("Improving the performance of
// message-passing applications by multithreading", §4): Laplace's equation on
// a 2-D grid by Jacobi relaxation with the five-point stencil, the grid split
// over p ranks in 2-D blocks. This header is the part every version shares and
// that needs no MPI: the decomposition, the grid of one block with its halo,
// the stencil, and the serial reference. The message-passing versions are in
// pde_weft.hpp (on weft's ports) and pde_mpi.hpp (raw MPI, compiled only when
// weft is built with MPI).
//
// Problem: the global grid has gnx x gny interior points; the row above the
// top row (y = gny) is held at 1, the other three boundaries at 0 (as
// apps/jacobi), the interior starts at 0. A sweep sets every interior point of
// the new grid to the average of its four neighbours in the old grid; the
// grids then swap roles. Every version runs a fixed number of sweeps and
// computes each point with `relax_point`, in the same operand order, so every
// version's result equals the serial one bit for bit.
//
// Decomposition: 2-D blocks (docs/design/mpi.md, "The PDE solver"). The p
// ranks form a px x py process grid as close to square as p allows (px >= py,
// px * py = p; a prime p gives strips, p x 1); rank r sits at column r % px,
// row r / px. A block exchanges one edge with each of its up to four
// neighbours per sweep: a block of n points whose sides are sqrt(n) sends
// 4 messages of sqrt(n) values, the shape of the paper's model (1)-(3).
// Strips would send 2 messages of the whole grid's width, which does not
// shrink as p grows.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace weft::apps::pde {

// The process grid: px columns by py rows of ranks.
struct layout {
    int px = 1;
    int py = 1;
};
// The process grid for `ranks` >= 1 ranks: px * py == ranks, px >= py, py the
// largest divisor of ranks not above sqrt(ranks).
layout block_layout(int ranks);

// No neighbour on that side (the global boundary is there).
inline constexpr int no_rank = -1;

// One rank's block of the global grid.
struct block {
    std::size_t x0 = 0, y0 = 0;  // global coordinates of its first interior point
    std::size_t nx = 0, ny = 0;  // its interior points along x and y
    // The neighbouring ranks, or no_rank where the block touches the boundary.
    int west = no_rank, east = no_rank, south = no_rank, north = no_rank;
    // Neighbours it exchanges with each sweep (0..4).
    int neighbours() const noexcept;
};
// Run `i` of `parts` near-equal runs of `total` points, the longer first:
// {first, length}. Blocks split the grid so, and strips (pde_weft.hpp) a block.
std::pair<std::size_t, std::size_t> near_equal_run(std::size_t total, int parts, int i);

// Rank `rank`'s block of a gnx x gny grid over `l`: the columns (rows) are
// split into px (py) runs whose lengths differ by at most one, the longer ones
// first. Throws std::invalid_argument (naming the sizes) when a block would
// have fewer than 2 points along a side.
block block_of(layout l, int rank, std::size_t gnx, std::size_t gny);

// One block's values with a halo of one point on every side: (nx + 2) x
// (ny + 2), row-major, row y = 0 the halo below the block. Two of them make
// the old and the new grid of a sweep.
class grid {
public:
    grid(std::size_t nx, std::size_t ny);
    std::size_t nx() const noexcept { return nx_; }
    std::size_t ny() const noexcept { return ny_; }
    std::size_t stride() const noexcept { return nx_ + 2; }
    // Interior point (x, y), 0-based; the halo is x or y = -1 and nx or ny.
    double& at(long x, long y) noexcept { return v_[index(x, y)]; }
    double at(long x, long y) const noexcept { return v_[index(x, y)]; }
    double* row(long y) noexcept { return &v_[index(0, y)]; }
    double const* row(long y) const noexcept { return &v_[index(0, y)]; }

private:
    std::size_t index(long x, long y) const noexcept {
        return static_cast<std::size_t>(y + 1) * (nx_ + 2) + static_cast<std::size_t>(x + 1);
    }
    std::size_t nx_, ny_;
    std::vector<double> v_;
};

// Sets `g` to the start of a run for block `b` of a grid whose interior has
// gny rows: interior 0, the halo on the global boundary at its boundary value
// (1 above the top row, 0 elsewhere), the halo towards neighbours 0.
void init_block(grid& g, block const& b, std::size_t gny);

// The five-point Jacobi update of one point: the average of its four
// neighbours in `in`. Every version computes each point with this function.
inline double relax_point(grid const& in, long x, long y) noexcept {
    return 0.25 * ((in.at(x - 1, y) + in.at(x + 1, y)) + (in.at(x, y - 1) + in.at(x, y + 1)));
}
// Updates the points x in [x_lo, x_hi), y in [y_lo, y_hi) of `out` from `in`.
void relax_rect(grid const& in, grid& out, long x_lo, long x_hi, long y_lo, long y_hi) noexcept;

// The serial reference: `sweeps` sweeps over the whole gnx x gny grid; returns
// the interior, row-major (gnx * gny values).
std::vector<double> serial(std::size_t gnx, std::size_t gny, int sweeps);

// The interior of `g`, row-major (nx * ny values).
std::vector<double> interior(grid const& g);

// The largest |a[i] - b[i]| over two results of the same size (0 when equal).
double max_abs_diff(std::vector<double> const& a, std::vector<double> const& b);

// The message-passing versions (pde_mpi.cpp): mpi_plain exchanges the halo
// with blocking MPI_Sendrecv and then updates the block; blocking1 has the
// shape of weft's blocking1 (pde_weft.hpp): MPI_Isend of the four edges, then
// a blocking MPI_Recv of each halo, then the whole block; handcoded posts
// MPI_Irecv/MPI_Isend, updates the points that need no halo while the edges
// travel, then the block's edge points (the paper's "optimal handcoded"
// program, §5.1).
enum class version { mpi_plain, blocking1, handcoded };
char const* version_name(version v) noexcept;
// The version named s; false when s names none.
bool parse_version(std::string const& s, version& v) noexcept;

}  // namespace weft::apps::pde
