// Class: requirement. weft::config's stats field against WEFT_STATS (docs/env.md,
// "weft_config_t against the environment"): true or false wins over the
// variable; left empty, the variable decides. (Apart from env_test.cpp, which
// includes src/core and so cannot include weft.hpp beside it.)
#include <string>

#include "support/weft_test.hpp"
#include "weft/weft.hpp"

namespace {

bool has_stats(const std::string& out) { return out.find("weft statistics") != std::string::npos; }

// What starting and stopping weft::runtime(c) printed.
std::string run(const weft::config& c) {
    ::testing::internal::CaptureStderr();
    { weft::runtime rt(c); }
    return ::testing::internal::GetCapturedStderr();
}

TEST(CxxConfig, stats_false_wins_over_weft_stats_on) {
    wt::watchdog dog(wt::default_test_limit(), "CxxConfig");
    wt::scoped_env s("WEFT_STATS", "1");
    EXPECT_FALSE(has_stats(run(weft::config{.workers = 1, .stats = false})));
    EXPECT_TRUE(has_stats(run(weft::config{.workers = 1}))) << "an empty field takes WEFT_STATS";
}

TEST(CxxConfig, stats_true_wins_over_weft_stats_off) {
    wt::watchdog dog(wt::default_test_limit(), "CxxConfig");
    wt::scoped_env s("WEFT_STATS", "0");
    EXPECT_TRUE(has_stats(run(weft::config{.workers = 1, .stats = true})));
    EXPECT_FALSE(has_stats(run(weft::config{.workers = 1})));
}

}  // namespace
