// fib as an apps::instance (shared by fib.cpp and the peer files).
#pragma once

#include <cstdint>
#include <string>

#include "apps/app.hpp"

namespace weft::apps::fib {

struct problem final : instance {
    explicit problem(int n_) : n(n_) {}
    void reset() override { result = -1; }
    void run_serial() override;
    void run_coarse(int workers) override;
    void run_filaments() override;
    std::string compare(const instance& reference) const override;

    int n;
    std::int64_t result = -1;
};

}  // namespace weft::apps::fib
