// heat: the serial and fork/join versions (apps/heat/heat.hpp).
#include "apps/heat/heat.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "apps/coarse.hpp"
#include "apps/fork_join.hpp"

namespace weft::apps::heat {

grid::grid(int nx_, int ny_, int steps_)
    : nx(nx_),
      ny(ny_),
      steps(steps_),
      u(static_cast<std::size_t>(nx_ < 3 ? 0 : nx_) * static_cast<std::size_t>(ny_ < 3 ? 0 : ny_)),
      v(u.size()) {
    if (nx < 3 || ny < 3 || steps < 0)
        throw std::invalid_argument("heat: grid " + std::to_string(nx) + " x " + std::to_string(ny) + ", " +
                                    std::to_string(steps) + " steps; valid: both sides >= 3, steps >= 0");
    reset();
}

void grid::reset() {
    for (std::vector<double>* g : {&u, &v}) {
        std::fill(g->begin(), g->end(), 0.0);
        std::fill(g->begin(), g->begin() + ny, 1.0);
    }
}

void serial(grid& g) {
    for (int s = 0; s < g.steps; ++s) {
        const std::vector<double>& old = s % 2 == 0 ? g.u : g.v;
        std::vector<double>& nw = s % 2 == 0 ? g.v : g.u;
        step_rows(old.data(), nw.data(), g.ny, 1, g.nx - 1);
    }
}

void fork_join(grid& g) {
    const int grain = std::max(1, fork_join_grain / (g.ny - 2));
    for (int s = 0; s < g.steps; ++s) {
        const double* old = (s % 2 == 0 ? g.u : g.v).data();
        double* nw = (s % 2 == 0 ? g.v : g.u).data();
        divide_and_conquer(1, g.nx - 1, grain, [&](int i0, int i1) { step_rows(old, nw, g.ny, i0, i1); });
    }
}

std::string compare(const grid& a, const grid& b) {
    return compare_exact(a.newest(), b.newest(), static_cast<std::size_t>(a.ny), "the grid");
}

}  // namespace weft::apps::heat
