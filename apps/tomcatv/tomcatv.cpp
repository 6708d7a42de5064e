// Tomcatv-like mesh generation: the three versions and the registration
// (apps/tomcatv/tomcatv.hpp).
#include "apps/tomcatv/tomcatv.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>
#include <string>
#include <tuple>
#include <vector>

#include "apps/app.hpp"
#include "apps/coarse.hpp"
#include "weft/filament.hpp"

namespace weft::apps::tomcatv {

mesh::mesh(int n_, int iterations_)
    : n(n_), iterations(iterations_), x(static_cast<std::size_t>(n_) * n_), y(x.size()), rx(x.size()),
      ry(x.size()), aa(x.size()), dd(x.size()), d(x.size()), residual(static_cast<std::size_t>(iterations_)) {}

grids mesh::view() { return {n, x.data(), y.data(), rx.data(), ry.data(), aa.data(), dd.data(), d.data()}; }

void serial(mesh& m) {
    const grids g = m.view();
    const int n = m.n;
    for (int it = 0; it < m.iterations; ++it) {
        for (int i = 1; i < n - 1; ++i)
            for (int j = 1; j < n - 1; ++j) residual_point(g, i, j);
        double res = 0.0;
        for (int i = 1; i < n - 1; ++i) res = std::max(res, relax_line(g, i));
        m.residual[static_cast<std::size_t>(it)] = res;
    }
}

void coarse(mesh& m, int workers) {
    const grids g = m.view();
    const int n = m.n;
    if (m.iterations <= 0) return;
    struct alignas(64) slot {
        double max;
    };
    std::vector<slot> maxima(static_cast<std::size_t>(workers), slot{0.0});
    int it = 0;
    bool after_relaxation = false;  // which phase the next barrier completes
    auto complete = [&]() noexcept {
        if (after_relaxation) {
            double res = 0.0;
            for (const slot& s : maxima) res = std::max(res, s.max);
            m.residual[static_cast<std::size_t>(it)] = res;
            ++it;
        }
        after_relaxation = !after_relaxation;
    };
    sweep_barrier sync(workers, complete);
    auto work = [&](int t) {
        const int first = block_begin(n, t, workers), last = block_begin(n, t + 1, workers);
        while (it < m.iterations) {
            for (int i = first; i < last; ++i)
                for (int j = 1; j < n - 1; ++j) residual_point(g, i, j);
            sync.arrive_and_wait();
            double res = 0.0;
            for (int i = first; i < last; ++i) res = std::max(res, relax_line(g, i));
            maxima[static_cast<std::size_t>(t)].max = res;
            sync.arrive_and_wait();
        }
    };
    on_kernel_threads(workers, work);
}

void filaments(mesh& m) {
    const grids g = m.view();
    const int n = m.n;
    if (m.iterations <= 0) return;
    if (n < 3) {  // no interior point: what serial's empty loops give
        std::fill(m.residual.begin(), m.residual.end(), 0.0);
        return;
    }
    int it = 0;  // written only by the after function
    weft::reduction<double, weft::maximum<>> maxres(0.0);
    // Forward sweeps, not the paper's back-and-forth (§3.1): the 7 matrices
    // (45 MB at n = 900) do not fit the cache, so there is nothing to reuse,
    // and a reversed point loop defeats the hardware prefetcher.
    weft::pool_set residuals([g](int i, int j) { residual_point(g, i, j); }, nullptr, weft::order::forward);
    weft::pool_set relaxation(
        [g, &maxres](int i, int) {
            double& local = maxres.local();
            local = std::max(local, relax_line(g, i));
        },
        [&] {
            m.residual[static_cast<std::size_t>(it)] = maxres.reduce();
            maxres.reset();
            return ++it < m.iterations ? weft::next::continue_ : weft::next::done;
        },
        weft::order::forward);
    // Pool w of both sets: the interior rows of block w; every interior point
    // of them for the residuals, each row once for the relaxation.
    const int workers = filament_workers();
    for (int w = 0; w < workers; ++w) {
        const int first = block_begin(n, w, workers), last = block_begin(n, w + 1, workers);
        const std::size_t rows = static_cast<std::size_t>(last - first);
        weft::pool points = residuals.add_pool(w, rows * static_cast<std::size_t>(n - 2));
        weft::pool lines = relaxation.add_pool(w, rows);
        for (int i = first; i < last; ++i) {
            for (int j = 1; j < n - 1; ++j) points.add(i, j);
            lines.add(i);
        }
    }
    weft::run(residuals, relaxation);
}

namespace {

constexpr int iterations = 100;

struct problem final : instance {
    explicit problem(int n) : m(n, iterations), x0(m.x.size()), y0(m.y.size()) {
        // A unit square of n x n points, x along j and y along i; the side
        // i = 0 has a bump, and the interior points start off a perturbation
        // of the square that knows nothing of it.
        const double h = 1.0 / (n - 1), pi = std::numbers::pi;
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                const std::size_t c = static_cast<std::size_t>(i) * n + j;
                const bool boundary = i == 0 || j == 0 || i == n - 1 || j == n - 1;
                x0[c] = j * h + (boundary ? 0.0 : 0.3 * h * std::sin(7.0 * i * h) * std::sin(pi * j * h));
                y0[c] = i * h + (i == 0 ? 0.1 * std::sin(pi * j * h) : 0.0);
            }
    }
    void reset() override {
        m.x = x0;
        m.y = y0;
        for (auto* v : {&m.rx, &m.ry, &m.aa, &m.dd, &m.d}) std::fill(v->begin(), v->end(), 0.0);
        std::fill(m.residual.begin(), m.residual.end(), -1.0);
    }
    void run_serial() override { serial(m); }
    void run_coarse(int workers) override { coarse(m, workers); }
    void run_filaments() override { filaments(m); }
    std::string compare(const instance& reference) const override {
        const auto& ref = static_cast<const problem&>(reference).m;
        if (ref.n != m.n) return "sizes differ: " + std::to_string(m.n) + " vs " + std::to_string(ref.n);
        for (std::size_t k = 0; k < m.residual.size(); ++k)
            if (!(m.residual[k] == ref.residual[k]))
                return "max residual of iteration " + std::to_string(k) + " is " + std::to_string(m.residual[k]) +
                       ", serial gives " + std::to_string(ref.residual[k]);
        // The same arithmetic on every point: any difference is an error.
        const std::size_t n = static_cast<std::size_t>(m.n);
        for (auto [name, mine, theirs] : {std::tuple{"X", &m.x, &ref.x}, std::tuple{"Y", &m.y, &ref.y}}) {
            std::size_t bad = 0, first = 0;
            for (std::size_t k = 0; k < mine->size(); ++k)
                if (!((*mine)[k] == (*theirs)[k]) && bad++ == 0) first = k;
            if (bad)
                return std::to_string(bad) + " points of " + name + " differ; first (" + std::to_string(first / n) +
                       ", " + std::to_string(first % n) + ") = " + std::to_string((*mine)[first]) +
                       ", serial gives " + std::to_string((*theirs)[first]);
        }
        return {};
    }
    mesh m;
    std::vector<double> x0, y0;
};

registrar const reg{app{
    .name = "tomcatv",
    .description = "Tomcatv-like mesh relaxation, 7 n x n matrices, 100 iterations of two pool sets (points, lines)",
    .bench_size = 900,
    .demo_size = 400,
    .test_size = 24,
    .size_meaning = "n of the n x n mesh (100 iterations)",
    .make = [](long size) -> std::unique_ptr<instance> { return std::make_unique<problem>(static_cast<int>(size)); },
}};

}  // namespace
}  // namespace weft::apps::tomcatv
