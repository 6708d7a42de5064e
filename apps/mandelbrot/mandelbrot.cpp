// mandelbrot: the coarse-grain and filaments versions, the instance and the
// registration (apps/mandelbrot/mandelbrot.hpp).
#include "apps/mandelbrot/mandelbrot.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "apps/app.hpp"
#include "apps/coarse.hpp"
#include "weft/filament.hpp"

namespace weft::apps::mandelbrot {

void coarse(std::int32_t* img, int n, int workers) {
    auto work = [=](int t) {
        for (int i = t; i < n; i += workers)
            for (int j = 0; j < n; ++j) point(img, n, i, j);
    };
    on_kernel_threads(workers, work);
}

void filaments(std::int32_t* img, int n) {
    weft::pool_set set([=](int i, int j) { point(img, n, i, j); });
    // Creating the 3.24 M descriptors is timed with the rest: room for each
    // pool's rows up front (no regrowth, no copies) and the pool chosen once
    // per row (no division per point) keep it short (docs/design/apps.md,
    // "Creating the filaments is timed").
    const int workers = filament_workers();
    const std::size_t rows_per_pool = static_cast<std::size_t>((n + workers - 1) / workers);
    std::vector<weft::pool> pools = set.add_pools(rows_per_pool * static_cast<std::size_t>(n));
    const int p = static_cast<int>(pools.size());
    for (int i = 0; i < n; ++i) {
        weft::pool& row_pool = pools[static_cast<std::size_t>(i % p)];
        for (int j = 0; j < n; ++j) row_pool.add(i, j);
    }
    weft::run(set);
}

namespace {

struct problem final : instance {
    explicit problem(int n_) : n(n_), img(static_cast<std::size_t>(n_) * n_) {}
    void reset() override { std::fill(img.begin(), img.end(), -1); }
    void run_serial() override { serial(img.data(), n); }
    void run_coarse(int workers) override { coarse(img.data(), n, workers); }
    void run_filaments() override { filaments(img.data(), n); }
    std::string compare(const instance& reference) const override {
        const auto& ref = static_cast<const problem&>(reference);
        std::size_t differ = 0, first = 0;
        for (std::size_t k = 0; k < img.size(); ++k)
            if (img[k] != ref.img[k] && differ++ == 0) first = k;
        if (differ == 0) return {};
        const std::size_t i = first / static_cast<std::size_t>(n), j = first % static_cast<std::size_t>(n);
        return std::to_string(differ) + " pixels differ from serial, first (" + std::to_string(i) + ", " +
               std::to_string(j) + "): " + std::to_string(img[first]) + " iterations, serial " +
               std::to_string(ref.img[first]);
    }

    int n;
    std::vector<std::int32_t> img;
};

registrar const reg{app{
    .name = "mandelbrot",
    .description = "Mandelbrot set on an n x n image, a filament per point, rows cyclic over the workers",
    .bench_size = 1800,
    .demo_size = 800,
    .test_size = 48,
    .size_meaning = "image side n (n x n points, at most 1000 iterations each)",
    .make = [](long size) -> std::unique_ptr<instance> { return std::make_unique<problem>(static_cast<int>(size)); },
}};

}  // namespace
}  // namespace weft::apps::mandelbrot
