// matmul (inner products): the three versions and the registration
// (apps/matmul/inner_product.hpp).
#include "apps/matmul/inner_product.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "apps/app.hpp"
#include "apps/coarse.hpp"
#include "weft/filament.hpp"

namespace weft::apps::matmul_ip {

operands::operands(int n_)
    : n(n_), a(static_cast<std::size_t>(n_) * n_), bt(static_cast<std::size_t>(n_) * n_),
      c(static_cast<std::size_t>(n_) * n_) {
    // Deterministic values in [-1, 1) (a 64-bit LCG): every instance of a size
    // holds the same inputs, so any two can be compared.
    std::uint64_t s = 0x9E3779B97F4A7C15ull;
    auto next = [&s] {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<double>(s >> 11) * 0x1.0p-52 - 1.0;
    };
    for (double& x : a) x = next();
    for (double& x : bt) x = next();
}

void serial(operands& m) { multiply_rows(m, 0, m.n); }

void coarse(operands& m, int workers) {
    on_kernel_threads(workers,
                      [&](int t) { multiply_rows(m, block_begin(m.n, t, workers), block_begin(m.n, t + 1, workers)); });
}

void filaments(operands& m) {
    const int n = m.n;
    const double* a = m.a.data();
    const double* bt = m.bt.data();
    double* c = m.c.data();
    // The filament: one inner product (§2.1 inner_prod). Captures by value so
    // that the inlined pool loop keeps them in registers.
    weft::pool_set set([=](int i, int j) {
        c[static_cast<std::size_t>(i) * n + j] =
            inner_product(a + static_cast<std::size_t>(i) * n, bt + static_cast<std::size_t>(j) * n, n);
    });
    const int workers = filament_workers();
    for (int w = 0; w < workers; ++w) {
        const int first = block_begin(n, w, workers), last = block_begin(n, w + 1, workers);
        weft::pool p = set.add_pool(w, static_cast<std::size_t>(last - first) * n);
        for (int i = first; i < last; ++i)
            for (int j = 0; j < n; ++j) p.add(i, j);
    }
    weft::run(set);
}

namespace {

struct problem final : instance {
    explicit problem(int n) : m(n) {}
    void reset() override { std::fill(m.c.begin(), m.c.end(), std::numeric_limits<double>::quiet_NaN()); }
    void run_serial() override { serial(m); }
    void run_coarse(int workers) override { coarse(m, workers); }
    void run_filaments() override { filaments(m); }
    std::string compare(const instance& reference) const override {
        const auto& ref = static_cast<const problem&>(reference).m;
        if (ref.n != m.n) return "sizes differ: " + std::to_string(m.n) + " vs " + std::to_string(ref.n);
        return compare_exact(m.c, ref.c, static_cast<std::size_t>(m.n), "C");  // NaN: an element nobody computed
    }
    operands m;
};

registrar const reg{app{
    .name = "matmul",
    .description = "C = A*B (n x n doubles), one iterative filament per inner product, a pool per worker",
    .bench_size = 1500,
    .demo_size = 450,
    .test_size = 48,
    .size_meaning = "n of the n x n matrices",
    .make = [](long size) -> std::unique_ptr<instance> { return std::make_unique<problem>(static_cast<int>(size)); },
}};

}  // namespace
}  // namespace weft::apps::matmul_ip
