// multigrid as an apps::instance (shared by multigrid.cpp and any peer files).
#pragma once

#include <cstddef>
#include <string>

#include "apps/app.hpp"
#include "apps/multigrid/multigrid.hpp"

namespace weft::apps::multigrid {

struct problem final : instance {
    explicit problem(std::size_t n_) : n(n_), h(make_hierarchy(n_)) {}
    void reset() override { multigrid::reset(h); }
    void run_serial() override;
    void run_coarse(int workers) override;
    void run_filaments() override;
    std::string compare(const instance& reference) const override;

    std::size_t n;
    hierarchy h;
};

}  // namespace weft::apps::multigrid
