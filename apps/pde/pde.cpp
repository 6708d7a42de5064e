// The PDE solver's shared part: decomposition, block grid, stencil, serial
// reference (pde.hpp says what each is).
#include "apps/pde/pde.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace weft::apps::pde {

layout block_layout(int ranks) {
    if (ranks < 1) throw std::invalid_argument("pde: ranks must be >= 1, got " + std::to_string(ranks));
    int py = 1;
    for (int d = 1; d * d <= ranks; ++d)
        if (ranks % d == 0) py = d;
    return {ranks / py, py};
}

int block::neighbours() const noexcept {
    return (west != no_rank) + (east != no_rank) + (south != no_rank) + (north != no_rank);
}

std::pair<std::size_t, std::size_t> near_equal_run(std::size_t total, int parts, int i) {
    std::size_t const base = total / static_cast<std::size_t>(parts);
    std::size_t const extra = total % static_cast<std::size_t>(parts);
    std::size_t const k = static_cast<std::size_t>(i);
    std::size_t const first = k * base + std::min(k, extra);
    return {first, base + (k < extra ? 1 : 0)};
}

block block_of(layout l, int rank, std::size_t gnx, std::size_t gny) {
    if (rank < 0 || rank >= l.px * l.py)
        throw std::invalid_argument("pde: rank " + std::to_string(rank) + " is not in [0, " +
                                    std::to_string(l.px * l.py) + ")");
    if (gnx < 2 * static_cast<std::size_t>(l.px) || gny < 2 * static_cast<std::size_t>(l.py))
        throw std::invalid_argument("pde: a " + std::to_string(gnx) + " x " + std::to_string(gny) + " grid over " +
                                    std::to_string(l.px) + " x " + std::to_string(l.py) +
                                    " ranks leaves a block under 2 points wide; the grid needs at least " +
                                    std::to_string(2 * l.px) + " x " + std::to_string(2 * l.py) + " points");
    int const cx = rank % l.px, cy = rank / l.px;
    block b;
    std::tie(b.x0, b.nx) = near_equal_run(gnx, l.px, cx);
    std::tie(b.y0, b.ny) = near_equal_run(gny, l.py, cy);
    if (cx > 0) b.west = rank - 1;
    if (cx + 1 < l.px) b.east = rank + 1;
    if (cy > 0) b.south = rank - l.px;
    if (cy + 1 < l.py) b.north = rank + l.px;
    return b;
}

grid::grid(std::size_t nx, std::size_t ny) : nx_(nx), ny_(ny), v_((nx + 2) * (ny + 2), 0.0) {}

void init_block(grid& g, block const& b, std::size_t gny) {
    long const nx = static_cast<long>(g.nx()), ny = static_cast<long>(g.ny());
    for (long y = -1; y <= ny; ++y)
        for (long x = -1; x <= nx; ++x) g.at(x, y) = 0.0;
    // The top boundary (above global row gny - 1) is held at 1, corners included.
    if (b.y0 + b.ny == gny)
        for (long x = -1; x <= nx; ++x) g.at(x, ny) = 1.0;
}

void relax_rect(grid const& in, grid& out, long x_lo, long x_hi, long y_lo, long y_hi) noexcept {
    for (long y = y_lo; y < y_hi; ++y)
        for (long x = x_lo; x < x_hi; ++x) out.at(x, y) = relax_point(in, x, y);
}

std::vector<double> interior(grid const& g) {
    std::vector<double> v;
    v.reserve(g.nx() * g.ny());
    for (long y = 0; y < static_cast<long>(g.ny()); ++y) v.insert(v.end(), g.row(y), g.row(y) + g.nx());
    return v;
}

std::vector<double> serial(std::size_t gnx, std::size_t gny, int sweeps) {
    block const b = block_of(layout{}, 0, gnx, gny);
    grid a(gnx, gny), c(gnx, gny);
    init_block(a, b, gny);
    init_block(c, b, gny);
    for (int s = 0; s < sweeps; ++s) {
        relax_rect(a, c, 0, static_cast<long>(gnx), 0, static_cast<long>(gny));
        std::swap(a, c);
    }
    return interior(a);
}

double max_abs_diff(std::vector<double> const& a, std::vector<double> const& b) {
    if (a.size() != b.size()) return INFINITY;
    double d = 0;
    for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
    return d;
}

char const* version_name(version v) noexcept {
    switch (v) {
        case version::mpi_plain: return "mpi_plain";
        case version::blocking1: return "blocking1";
        case version::handcoded: return "handcoded";
    }
    return "?";
}

bool parse_version(std::string const& s, version& v) noexcept {
    for (version c : {version::mpi_plain, version::blocking1, version::handcoded})
        if (s == version_name(c)) {
            v = c;
            return true;
        }
    return false;
}

}  // namespace weft::apps::pde
