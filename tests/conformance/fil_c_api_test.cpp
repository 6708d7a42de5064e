// The C API of filaments, driven from C (fil_c_api.c): results equal to the
// serial computation at 1, 2 and 4 workers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <vector>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// The sanitizer runtimes' allocator statistics (GCC ships no header for it).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes(void);
#else
#include <malloc.h>
#endif

#include "support/weft_test.hpp"
#include "weft/weft.h"

extern "C" {
int fil_c_jacobi(double* center, int* path, int by_rows);
double fil_c_quad(double a, double b, int tree_only);
double fil_c_quad_start(double a, double b);
int fil_c_reduce_ops(void);
int fil_c_back_and_forth(int* out, int max, int* paths);
}

namespace {

double quad_ref(double a, double b, double fa, double fb, double area) {
    auto f = [](double x) { return std::exp(x) * std::sin(x); };
    double m = (a + b) / 2, fm = f(m);
    double l = (fm + fa) * (m - a) / 2, r = (fb + fm) * (b - m) / 2;
    if (std::fabs(l + r - area) < 1e-7) return l + r;
    return quad_ref(a, m, fa, fm, l) + quad_ref(m, b, fm, fb, r);
}

class FilCApi : public wt::workers_fixture {};

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

// The C loop runs each path forwards, then backwards, then forwards again;
// a column and a row are both dense 1-D, with loops of their own.
TEST_P(FilCApi, back_and_forth_order_on_every_path) {
    int order[64] = {};
    int paths = 0;
    ASSERT_EQ(fil_c_back_and_forth(order, 64, &paths), 30);
    EXPECT_EQ(paths, WEFT_FIL_PATH_DENSE_1D * 100 + WEFT_FIL_PATH_DENSE_1D * 10 + WEFT_FIL_PATH_GENERAL);
    const std::vector<int> forwards = {107, 307, 507, 200, 201, 202, 203, 900, 700, 800};
    const std::vector<int> backwards = {507, 307, 107, 203, 202, 201, 200, 800, 700, 900};
    std::vector<int> want = forwards;
    want.insert(want.end(), backwards.begin(), backwards.end());
    want.insert(want.end(), forwards.begin(), forwards.end());
    EXPECT_EQ(std::vector<int>(order, order + 30), want);
}

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

// Bytes the heap has handed out and not taken back (the sanitizers replace
// malloc, so they are asked instead of glibc).
std::size_t heap_in_use() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return __sanitizer_get_current_allocated_bytes();
#else
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
#endif
}

struct fork_loop {
    int n = 0;
    int children_ran = 0;
    std::size_t heap_after_warmup = 0;
    std::size_t heap_at_end = 0;
};

// A filament that forks a child and joins it, n times: every join lets the
// child's descriptor go, so the loop's memory does not grow with n (without
// that, it would grow by a descriptor, 112 bytes, per iteration until the
// filament returned).
void fork_loop_root(const void* args, void* result) {
    auto* st = *static_cast<fork_loop* const*>(args);
    for (int k = 0; k < st->n; ++k) {
        int ran = 0;
        ASSERT_EQ(weft_fil_fork([](const void* a, void* r) { *static_cast<int*>(r) = *static_cast<const int*>(a); },
                                &k, sizeof k, &ran),
                  0);
        ASSERT_EQ(weft_fil_join(), 0);
        if (ran == k) ++st->children_ran;
        if (k == 1000) st->heap_after_warmup = heap_in_use();
    }
    st->heap_at_end = heap_in_use();
    *static_cast<int*>(result) = 1;
}

TEST_P(FilCApi, fork_join_loop_reuses_descriptor_memory) {
    fork_loop st;
    st.n = 200000;
    fork_loop* arg = &st;
    weft_fil_fj_options_t opts{};
    opts.no_pruning = 1;  // every fork a real one, with a descriptor
    int done = 0;
    ASSERT_EQ(weft_fil_fj_run(&fork_loop_root, &arg, sizeof arg, &done, &opts), 0);
    EXPECT_EQ(done, 1);
    EXPECT_EQ(st.children_ran, st.n);
    const std::size_t growth = st.heap_at_end > st.heap_after_warmup ? st.heap_at_end - st.heap_after_warmup : 0;
    EXPECT_LT(growth, std::size_t{1} << 20) << "the heap grew by " << growth << " bytes over " << st.n - 1001
                                            << " fork+join pairs of one filament";
}

INSTANTIATE_TEST_SUITE_P(workers, FilCApi, ::testing::Values(1, 2, 4),
                         wt::worker_count_name{});

}  // namespace
