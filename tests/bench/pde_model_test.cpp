// The arithmetic of weft-bench pde's model (bench/pde_model.hpp): equations
// (1)-(3) of Felten & McNamee in the paper's own units (t = 1 per point), the
// three predictions the paper draws from them (§5), and the four-thread
// generalisation reducing to eq. (2) at T = 2.
#include <gtest/gtest.h>

#include <cmath>

#include "../../bench/pde_model.hpp"

namespace {

using namespace weft::bench::pde;

// The paper's setting: 4 remote neighbours, edges of sqrt(n) values of one
// unit each, t = 1.
model_params paper(double alpha_r, double beta_r, double alpha_l, double beta_l, double c) {
    model_params m;
    m.t_point_s = 1;
    m.alpha_r_s = alpha_r;
    m.beta_r_s = beta_r;
    m.alpha_l_s = alpha_l;
    m.beta_l_s = beta_l;
    m.switch_s = c;
    return m;
}

model_shape one_thread(double n) {
    model_shape s;
    s.n = n;
    s.e = 4 * std::sqrt(n);
    s.remote = 4;
    s.remote_bytes = std::sqrt(n);
    return s;
}

model_shape two_threads(double n) {
    model_shape s;
    s.n = n;
    s.threads = 2;
    s.remote = 3;
    s.remote_bytes = std::sqrt(n / 2);
    s.local = 1;
    s.local_bytes = std::sqrt(n / 2);
    return s;
}

TEST(PdeModel, equations_as_printed) {
    model_params const m = paper(100, 2, 5, 0.5, 1);
    for (double n : {16.0, 400.0, 10000.0}) {
        double const r = std::sqrt(n), h = std::sqrt(n / 2);
        EXPECT_DOUBLE_EQ(t_blocking(m, one_thread(n)), n + 4 * 100 + 4 * 2 * r) << n;
        EXPECT_DOUBLE_EQ(t_threads(m, two_threads(n)), 2 * std::max(1 + n / 2 + 5 + 0.5 * h, 3 * 100 + 3 * 2 * h))
            << n;
        EXPECT_DOUBLE_EQ(t_handcoded(m, one_thread(n)), std::max(n - 4 * r, 4 * 100 + 4 * 2 * r) + 4 * r) << n;
    }
}

// §5: "For small values of n the constant terms dominate, so the blocking
// program is better. For very large values of n, both methods tend toward n
// operations per update ... For intermediate values of n, though, the
// multithreaded program is faster".
TEST(PdeModel, the_papers_three_predictions) {
    model_params const m = paper(100, 1, 2, 0.1, 1);
    EXPECT_LT(t_blocking(m, one_thread(4)), t_threads(m, two_threads(4)));
    EXPECT_LT(t_threads(m, two_threads(1000)), t_blocking(m, one_thread(1000)));
    double const big = 1e8;
    EXPECT_NEAR(t_threads(m, two_threads(big)) / big, 1.0, 1e-3);
    EXPECT_NEAR(t_blocking(m, one_thread(big)) / big, 1.0, 1e-3);
    // The hand-coded program is never slower than the blocking one (where its
    // 4 sqrt(n) edge points are at most n: n >= 16).
    for (double n : {16.0, 100.0, 1000.0, 1e6}) EXPECT_LE(t_handcoded(m, one_thread(n)), t_blocking(m, one_thread(n)));
}

TEST(PdeModel, cpu_share_scales_the_computation_only) {
    model_params m = paper(100, 1, 2, 0.1, 0);
    double const alone = t_blocking(m, one_thread(1e4));
    m.share = 2;
    EXPECT_DOUBLE_EQ(t_blocking(m, one_thread(1e4)), alone + 1e4);
}

TEST(PdeModel, four_threads_hide_latency_behind_three_subphases) {
    model_params const m = paper(300, 0, 0, 0, 0);
    model_shape s;
    s.n = 400;
    s.threads = 4;
    s.remote = 2;
    // Latency-bound: 4 subphases of 2 * 300 / 3 each.
    EXPECT_DOUBLE_EQ(t_threads(m, s), 4 * (2 * 300.0 / 3));
    s.n = 4000;  // compute-bound: 4 subphases of n / 4
    EXPECT_DOUBLE_EQ(t_threads(m, s), 4000);
}

}  // namespace
