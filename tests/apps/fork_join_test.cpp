// The fork/join versions weft-bench knary runs beside knary (apps/lu/lu.hpp
// fork_join, apps/heat/heat.hpp): each equals its serial version exactly at 1,
// 2 and 4 workers (4 oversubscribed on a 2-CPU machine), and the runtime's
// profiler sees their dag (work above span once there is more than one piece).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "apps/heat/heat.hpp"
#include "apps/lu/lu.hpp"
#include "support/weft_test.hpp"
#include "weft/weft.h"

namespace {

namespace heat = weft::apps::heat;
namespace lu = weft::apps::lu;

class ForkJoin : public ::testing::TestWithParam<int> {
protected:
    void SetUp() override {
        weft_config_t cfg = wt::config(GetParam());
        cfg.measure = 1;
        ASSERT_EQ(weft_init(&cfg), 0);
    }
    void TearDown() override { EXPECT_EQ(weft_finalize(), 0); }
};

TEST_P(ForkJoin, heat_equals_serial) {
    wt::watchdog dog(wt::default_test_limit(), "heat fork_join");
    heat::grid reference(200, 90, 7);
    heat::serial(reference);
    // The first interior row after one step: 0.2 of the fixed top row.
    heat::grid one(5, 5, 1);
    heat::serial(one);
    EXPECT_EQ(one.newest()[5 + 2], heat::alpha);
    EXPECT_EQ(one.newest()[2 * 5 + 2], 0.0);

    heat::grid g(200, 90, 7);
    ASSERT_EQ(weft_stats_reset(), 0);
    heat::fork_join(g);
    EXPECT_EQ(heat::compare(g, reference), "");
    weft_stats_t st{};
    ASSERT_EQ(weft_stats_get(&st), 0);
    EXPECT_GE(st.threads_created, 7u * 3) << "198 rows in pieces of at most 46: 3 splits or more, every step";
    EXPECT_GT(st.work_ns, st.span_ns);

    g.reset();  // a second run from reset inputs agrees too
    heat::fork_join(g);
    EXPECT_EQ(heat::compare(g, reference), "");
    g.v[3 * 90 + 4] += 1e-9;  // a changed point is reported (7 steps: newest is v)
    EXPECT_NE(heat::compare(g, reference).find("1 of "), std::string::npos) << heat::compare(g, reference);
}

TEST_P(ForkJoin, lu_equals_serial) {
    wt::watchdog dog(wt::default_test_limit(), "lu fork_join");
    constexpr int n = 90;
    lu::matrix reference(n);
    reference.a = lu::input_values(n);
    lu::serial(reference);
    lu::matrix m(n);
    m.a = lu::input_values(n);
    lu::fork_join(m);
    EXPECT_EQ(m.perm, reference.perm);
    EXPECT_EQ(m.a, reference.a);
    EXPECT_NE(m.a, lu::input_values(n));
}

INSTANTIATE_TEST_SUITE_P(Workers, ForkJoin, ::testing::Values(1, 2, 4),
                         [](const auto& info) { return std::to_string(info.param) + "_workers"; });

TEST(Heat, rejects_a_grid_without_interior) {
    try {
        heat::grid g(2, 10, 1);
        FAIL() << "a 2 x 10 grid was accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("valid: both sides >= 3"), std::string::npos) << e.what();
    }
}

}  // namespace
