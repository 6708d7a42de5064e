// quicksort as an apps::instance (shared by quicksort.cpp and any peer files).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "apps/app.hpp"
#include "apps/quicksort/quicksort.hpp"

namespace weft::apps::quicksort {

struct problem final : instance {
    explicit problem(std::size_t n_) : n(n_), keys(n_) {}
    // Regenerates the keys (cheaper in memory than keeping a copy of them).
    void reset() override { fill(keys.data(), n); }
    void run_serial() override;
    void run_coarse(int workers) override;
    void run_filaments() override;
    std::string compare(const instance& reference) const override;

    std::size_t n;
    std::vector<key> keys;
};

}  // namespace weft::apps::quicksort
