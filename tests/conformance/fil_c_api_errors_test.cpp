// The error paths of the filament C API: the checks of fil_c_api_errors.c (from
// C), and the regions a C++ exception cancels (ECANCELED), at 1, 2 and 4 workers.
#include <gtest/gtest.h>

#include <cerrno>
#include <stdexcept>

#include "support/weft_test.hpp"
#include "weft/weft.h"

extern "C" {
int fil_c_error_arguments(void);
int fil_c_error_busy(void);
int fil_c_error_reductions(void);
}

namespace {

class FilCApiErrors : public wt::workers_fixture {};

// Each returns the line of fil_c_api_errors.c whose check failed, or 0.
TEST_P(FilCApiErrors, bad_arguments_are_einval) { EXPECT_EQ(fil_c_error_arguments(), 0); }
TEST_P(FilCApiErrors, a_running_set_is_ebusy) { EXPECT_EQ(fil_c_error_busy(), 0); }
TEST_P(FilCApiErrors, reductions) { EXPECT_EQ(fil_c_error_reductions(), 0); }

void throwing_root(const void*, void*) { throw std::runtime_error("root"); }

void throwing_child_root(const void*, void* result) {
    int r = 0;
    ASSERT_EQ(weft_fil_fork([](const void*, void*) { throw std::runtime_error("child"); }, nullptr, 0, &r), 0);
    (void)weft_fil_join();
    *static_cast<int*>(result) = 1;
}

TEST_P(FilCApiErrors, fj_run_of_a_throwing_filament_is_ecanceled) {
    EXPECT_EQ(weft_fil_fj_run(&throwing_root, nullptr, 0, nullptr, nullptr), ECANCELED);
    int result = 0;
    EXPECT_EQ(weft_fil_fj_run(&throwing_child_root, nullptr, 0, &result, nullptr), ECANCELED);
    // The runtime runs the next region as usual.
    EXPECT_EQ(weft_fil_fj_run([](const void*, void* r) { *static_cast<int*>(r) = 7; }, nullptr, 0, &result, nullptr),
              0);
    EXPECT_EQ(result, 7);
}

TEST_P(FilCApiErrors, start_of_a_throwing_body_or_after_function_is_ecanceled) {
    for (int in_after : {0, 1}) {
        weft_fil_poolset_t ps;
        weft_fil_fn body = [](int i, int, void*) {
            if (i == 5) throw std::runtime_error("body");
        };
        weft_fil_after_fn after = [](void*) -> int { throw std::runtime_error("after"); };
        weft_fil_fn quiet = [](int, int, void*) {};
        ASSERT_EQ(weft_fil_poolset_create(&ps, in_after ? quiet : body, in_after ? after : nullptr, nullptr), 0);
        weft_fil_pool_t pool;
        ASSERT_EQ(weft_fil_pool_create(ps, 0, 16, &pool), 0);
        ASSERT_EQ(weft_fil_create_range(pool, 0, 10, 1, 0, 1), 0);
        EXPECT_EQ(weft_fil_start(), ECANCELED) << (in_after ? "after function" : "body");
        // The set is no longer running: it can be destroyed.
        EXPECT_EQ(weft_fil_poolset_destroy(ps), 0);
    }
    // A forked root that throws cancels weft_fil_start too.
    int r = 0;
    ASSERT_EQ(weft_fil_fork(&throwing_root, nullptr, 0, &r), 0);
    EXPECT_EQ(weft_fil_start(), ECANCELED);
    EXPECT_EQ(weft_fil_start(), 0) << "nothing left to run";
}

INSTANTIATE_TEST_SUITE_P(workers, FilCApiErrors, ::testing::Values(1, 2, 4),
                         wt::worker_count_name{});

}  // namespace
