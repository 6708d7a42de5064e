// The C API of filaments, driven from C (fil_c_api.c): results equal to the
// serial computation at 1, 2 and 4 workers.
#include <gtest/gtest.h>

#include <cmath>

#include "support/weft_test.hpp"
#include "weft/weft.h"

extern "C" {
int fil_c_jacobi(double* center, int* path, int by_rows);
double fil_c_quad(double a, double b, int tree_only);
double fil_c_quad_start(double a, double b);
int fil_c_reduce_ops(void);
}

namespace {

double quad_ref(double a, double b, double fa, double fb, double area) {
    auto f = [](double x) { return std::exp(x) * std::sin(x); };
    double m = (a + b) / 2, fm = f(m);
    double l = (fm + fa) * (m - a) / 2, r = (fb + fm) * (b - m) / 2;
    if (std::fabs(l + r - area) < 1e-7) return l + r;
    return quad_ref(a, m, fa, fm, l) + quad_ref(m, b, fm, fb, r);
}

class FilCApi : public ::testing::TestWithParam<int> {
protected:
    void SetUp() override {
        weft_config_t cfg{};
        cfg.workers = GetParam();
        ASSERT_EQ(weft_init(&cfg), 0);
    }
    void TearDown() override { ASSERT_EQ(weft_finalize(), 0); }
};

TEST_P(FilCApi, jacobi_start) {
    double c1 = 0, c2 = 0;
    int p1 = 0, p2 = 0;
    int it1 = fil_c_jacobi(&c1, &p1, 0);
    ASSERT_GT(it1, 1);
    int it2 = fil_c_jacobi(&c2, &p2, 1);  // the same filaments, a row per weft_fil_create_range
    EXPECT_EQ(it1, it2);
    EXPECT_EQ(c1, c2);
    EXPECT_EQ(p1, WEFT_FIL_PATH_DENSE_2D);
    EXPECT_EQ(p2, WEFT_FIL_PATH_DENSE_2D);
}

TEST_P(FilCApi, quadrature_fork_join) {
    auto f = [](double x) { return std::exp(x) * std::sin(x); };
    const double a = 1, b = 20;
    double want = quad_ref(a, b, f(a), f(b), (f(a) + f(b)) * (b - a) / 2);
    EXPECT_NEAR(fil_c_quad(a, b, 0), want, 1e-9 * std::fabs(want));
    EXPECT_NEAR(fil_c_quad(a, b, 1), want, 1e-9 * std::fabs(want));
    EXPECT_NEAR(fil_c_quad_start(a, b), want, 1e-9 * std::fabs(want));
}

TEST_P(FilCApi, reduce_operators) { EXPECT_EQ(fil_c_reduce_ops(), 0); }

TEST_P(FilCApi, errors) {
    weft_fil_poolset_t ps;
    EXPECT_EQ(weft_fil_poolset_create(nullptr, nullptr, nullptr, nullptr), EINVAL);
    EXPECT_EQ(weft_fil_poolset_create(&ps, nullptr, nullptr, nullptr), EINVAL);
    char big[WEFT_FIL_ARGS_MAX + 1] = {};
    EXPECT_EQ(weft_fil_fork([](const void*, void*) {}, big, sizeof big, nullptr), EINVAL);
    EXPECT_EQ(weft_fil_run_sets(nullptr, 1), EINVAL);
    weft_fil_red_t r;
    EXPECT_EQ(weft_fil_red_create(&r, 7, 0, nullptr), EINVAL);
    EXPECT_EQ(weft_fil_red_create(&r, WEFT_FIL_BYTES, 65, nullptr), EINVAL);
    EXPECT_EQ(weft_fil_join(), 0);  // outside a filament: nothing to wait for
}

INSTANTIATE_TEST_SUITE_P(workers, FilCApi, ::testing::Values(1, 2, 4),
                         wt::worker_count_name{});

}  // namespace
