// fft2d as an apps::instance (shared by fft2d.cpp and any peer files).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "apps/app.hpp"
#include "apps/fft2d/fft2d.hpp"

namespace weft::apps::fft2d {

struct problem final : instance {
    explicit problem(std::size_t n_) : n(n_), p(n_), data(n_ * n_) {}
    // Regenerates the input (cheaper in memory than keeping a copy of it).
    void reset() override { fill(data.data(), n); }
    void run_serial() override;
    void run_coarse(int workers) override;
    void run_filaments() override;
    std::string compare(const instance& reference) const override;

    std::size_t n;
    plan p;
    std::vector<cplx> data;
};

}  // namespace weft::apps::fft2d
