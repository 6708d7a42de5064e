// multigrid: the grids, the V-cycle schedule and the row kernels every version
// shares (apps/multigrid/multigrid.hpp). In their own translation unit: one
// copy of the arithmetic, whichever version calls it.
#include <cmath>
#include <cstddef>
#include <vector>

#include "apps/multigrid/multigrid.hpp"

namespace weft::apps::multigrid {

hierarchy make_hierarchy(std::size_t n) {
    hierarchy h;
    for (std::size_t m = n; m >= 3; m = (m - 1) / 2 + 1) {
        h.emplace_back(m);
        if (m == 3) break;
    }
    // f = 2 pi^2 sin(pi x) sin(pi y) (u = sin(pi x) sin(pi y) solves it) plus a
    // small deterministic ripple, so every frequency is present.
    level& top = h.front();
    const double pi = std::acos(-1.0);
    for (std::size_t i = 1; i + 1 < n; ++i)
        for (std::size_t j = 1; j + 1 < n; ++j) {
            const double x = static_cast<double>(i) / static_cast<double>(n - 1);
            const double y = static_cast<double>(j) / static_cast<double>(n - 1);
            const double ripple = static_cast<double>((i * 7 + j * 13) % 17) / 170.0;
            top.f.row(i)[j] = 2.0 * pi * pi * std::sin(pi * x) * std::sin(pi * y) + ripple;
        }
    return h;
}

std::vector<step> vcycle_schedule(const hierarchy& h) {
    std::vector<step> s;
    const int last = static_cast<int>(h.size()) - 1;
    for (int l = 0; l < last; ++l) {
        s.push_back({op::relax_ut, l});
        s.push_back({op::relax_tu, l});
        s.push_back({op::residual, l});
        s.push_back({op::restrict_, l});
    }
    for (int l = last - 1; l >= 0; --l) {
        s.push_back({op::interpolate, l});
        s.push_back({op::relax_ut, l});
        s.push_back({op::relax_tu, l});
    }
    return s;
}

namespace {

void relax_row(const level& L, const grid& src, grid& dst, std::size_t i) {
    const std::size_t n = L.n;
    const double* up = src.row(i - 1);
    const double* mid = src.row(i);
    const double* down = src.row(i + 1);
    const double* f = L.f.row(i);
    double* out = dst.row(i);
    const double h2 = L.h2;
    for (std::size_t j = 1; j + 1 < n; ++j)
        out[j] = (1.0 - omega) * mid[j] + omega * 0.25 * (up[j] + down[j] + mid[j - 1] + mid[j + 1] + h2 * f[j]);
}

void residual_row(level& L, std::size_t i) {
    const std::size_t n = L.n;
    const double* up = L.u.row(i - 1);
    const double* mid = L.u.row(i);
    const double* down = L.u.row(i + 1);
    const double* f = L.f.row(i);
    double* r = L.r.row(i);
    const double inv_h2 = 1.0 / L.h2;
    for (std::size_t j = 1; j + 1 < n; ++j)
        r[j] = f[j] - (4.0 * mid[j] - up[j] - down[j] - mid[j - 1] - mid[j + 1]) * inv_h2;
}

// Coarse row I of `coarse` from fine rows 2I - 1 .. 2I + 1 of `fine`.
void restrict_row(const level& fine, level& coarse, std::size_t I) {
    const std::size_t nc = coarse.n;
    const double* up = fine.r.row(2 * I - 1);
    const double* mid = fine.r.row(2 * I);
    const double* down = fine.r.row(2 * I + 1);
    double* f = coarse.f.row(I);
    double* u = coarse.u.row(I);
    for (std::size_t J = 1; J + 1 < nc; ++J) {
        const std::size_t j = 2 * J;
        f[J] = (4.0 * mid[j] + 2.0 * (up[j] + down[j] + mid[j - 1] + mid[j + 1]) + up[j - 1] + up[j + 1] +
                down[j - 1] + down[j + 1]) *
               (1.0 / 16.0);
        u[J] = 0.0;
    }
}

// Fine row i of `fine` += the bilinear interpolation of `coarse`'s u.
void interpolate_row(level& fine, const level& coarse, std::size_t i) {
    const std::size_t nc = coarse.n;
    double* u = fine.u.row(i);
    const double* a = coarse.u.row(i / 2);
    if (i % 2 == 0) {  // on a coarse row
        for (std::size_t J = 0; J + 1 < nc; ++J) {
            if (J > 0) u[2 * J] += a[J];
            u[2 * J + 1] += 0.5 * (a[J] + a[J + 1]);
        }
    } else {  // between coarse rows i / 2 and i / 2 + 1
        const double* b = coarse.u.row(i / 2 + 1);
        for (std::size_t J = 0; J + 1 < nc; ++J) {
            if (J > 0) u[2 * J] += 0.5 * (a[J] + b[J]);
            u[2 * J + 1] += 0.25 * (a[J] + a[J + 1] + b[J] + b[J + 1]);
        }
    }
}

}  // namespace

void run_row(hierarchy& h, const step& s, std::size_t i) {
    level& L = h[static_cast<std::size_t>(s.level)];
    switch (s.kind) {
        case op::relax_ut: relax_row(L, L.u, L.t, i); break;
        case op::relax_tu: relax_row(L, L.t, L.u, i); break;
        case op::residual: residual_row(L, i); break;
        case op::restrict_: restrict_row(L, h[static_cast<std::size_t>(s.level) + 1], i); break;
        case op::interpolate: interpolate_row(L, h[static_cast<std::size_t>(s.level) + 1], i); break;
    }
}

void direct_solve(hierarchy& h) {
    level& c = h.back();  // 3 x 3: one unknown, 4 u = h^2 f
    c.u.row(1)[1] = c.h2 * c.f.row(1)[1] * 0.25;
}

void reset(hierarchy& h) {
    for (double& x : h.front().u.v) x = 0.0;
}

}  // namespace weft::apps::multigrid
