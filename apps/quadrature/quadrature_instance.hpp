// quadrature as an apps::instance (shared by quadrature.cpp and the peer files).
#pragma once

#include <string>

#include "apps/app.hpp"
#include "apps/quadrature/quadrature.hpp"

namespace weft::apps::quadrature {

struct problem final : instance {
    explicit problem(long size) : tol(tolerance(size)) {}
    void reset() override { result = 0.0; }
    void run_serial() override;
    void run_coarse(int workers) override;
    void run_filaments() override;
    std::string compare(const instance& reference) const override;

    double tol;
    double result = 0.0;
};

}  // namespace weft::apps::quadrature
