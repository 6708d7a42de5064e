// jacobi as an apps::instance (shared by jacobi.cpp and the peer files).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "apps/app.hpp"
#include "apps/jacobi/jacobi.hpp"

namespace weft::apps::jacobi {

struct problem final : instance {
    explicit problem(int n_) : n(n_), a(static_cast<std::size_t>(n_) * n_), b(a.size()) {}
    // Boundary: top edge 1, the others 0; interior 0; in both grids.
    void reset() override {
        for (std::vector<double>* g : {&a, &b}) {
            std::fill(g->begin(), g->end(), 0.0);
            std::fill(g->begin(), g->begin() + n, 1.0);
        }
        result = outcome{};
    }
    void run(version v, int workers) override;
    std::string compare(const instance& reference) const override;
    // The grid with the newest values.
    const std::vector<double>& newest() const { return result.sweeps % 2 == 1 ? b : a; }

    int n;
    std::vector<double> a, b;
    outcome result;
};

}  // namespace weft::apps::jacobi
