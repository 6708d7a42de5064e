// jacobi as an apps::instance (shared by jacobi.cpp and the peer files).
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "apps/app.hpp"
#include "apps/jacobi/jacobi.hpp"

namespace weft::apps::jacobi {

struct problem final : instance {
    // Both grids in one allocation, b starting half a page (in address bits
    // 0-11) after a. Two separate large allocations come from mmap at the
    // same page offset; then the store to new[i][j] and the load of
    // old[i][j+1]'s left neighbour one iteration later share their low 12
    // bits, and the load waits for the store (4K aliasing): the same serial
    // code's time would depend on where the grids fall.
    explicit problem(int n_)
        : n(n_),
          storage(2 * static_cast<std::size_t>(n_) * n_ + grid_gap(static_cast<std::size_t>(n_) * n_)),
          a(storage.data(), static_cast<std::size_t>(n_) * n_),
          b(storage.data() + a.size() + grid_gap(a.size()), a.size()) {}
    // Doubles between the grids, so that b's page offset is a's + 2 KiB.
    static std::size_t grid_gap(std::size_t cells) { return (256 - cells % 512 + 512) % 512; }
    // Boundary: top edge 1, the others 0; interior 0; in both grids.
    void reset() override {
        for (std::span<double> g : {a, b}) {
            std::fill(g.begin(), g.end(), 0.0);
            std::fill(g.begin(), g.begin() + n, 1.0);
        }
        result = outcome{};
    }
    void run_serial() override;
    void run_coarse(int workers) override;
    void run_filaments() override;
    std::string compare(const instance& reference) const override;
    // The grid with the newest values.
    std::span<double> newest() const { return result.sweeps % 2 == 1 ? b : a; }

    int n;
    std::vector<double> storage;
    std::span<double> a, b;
    outcome result;
};

}  // namespace weft::apps::jacobi
