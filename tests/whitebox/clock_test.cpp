// Class: whitebox. The monotonic clock and its conversions (core/clock.hpp),
// written once for the runtime and libweft-pthread.
#include <time.h>

#include <climits>
#include <cstdint>

#include "core/clock.hpp"
#include "support/weft_test.hpp"

namespace {

using namespace weft::detail;

std::int64_t raw_ns(clockid_t c) {
    timespec t;
    clock_gettime(c, &t);
    return std::int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

TEST(Clock, monotonic_ns_reads_clock_monotonic) {
    std::int64_t before = raw_ns(CLOCK_MONOTONIC);
    std::int64_t now = monotonic_ns();
    std::int64_t after = raw_ns(CLOCK_MONOTONIC);
    EXPECT_LE(before, now);
    EXPECT_LE(now, after);
}

TEST(Clock, coarse_monotonic_ns_reads_the_coarse_clock) {
    timespec res;
    ASSERT_EQ(clock_getres(CLOCK_MONOTONIC_COARSE, &res), 0);
    std::int64_t before = raw_ns(CLOCK_MONOTONIC_COARSE);
    std::int64_t now = coarse_monotonic_ns();
    std::int64_t after = raw_ns(CLOCK_MONOTONIC_COARSE);
    EXPECT_LE(before, now);
    EXPECT_LE(now, after);
    // The same clock as monotonic_ns, behind it by at most one tick.
    EXPECT_LE(now, monotonic_ns());
    EXPECT_GE(now, monotonic_ns() - ns_of(res) - 1'000'000'000) << "the coarse clock is not CLOCK_MONOTONIC's";
}

TEST(Clock, clock_ns_reads_the_clock_asked_for) {
    std::int64_t before = raw_ns(CLOCK_REALTIME);
    std::int64_t now = clock_ns(CLOCK_REALTIME);
    std::int64_t after = raw_ns(CLOCK_REALTIME);
    EXPECT_LE(before, now);
    EXPECT_LE(now, after);
}

TEST(Clock, timespec_round_trip) {
    for (std::int64_t ns : {std::int64_t{0}, std::int64_t{1}, std::int64_t{999'999'999}, std::int64_t{1'000'000'000},
                            std::int64_t{1'234'567'891'011}, INT64_MAX}) {
        timespec t = timespec_of(ns);
        EXPECT_TRUE(timespec_valid(t)) << ns;
        EXPECT_EQ(ns_of(t), ns);
    }
    timespec t = timespec_of(3'000'000'007);
    EXPECT_EQ(t.tv_sec, 3);
    EXPECT_EQ(t.tv_nsec, 7);
}

TEST(Clock, timespec_valid_rejects_what_posix_rejects) {
    EXPECT_TRUE(timespec_valid(timespec{0, 0}));
    EXPECT_TRUE(timespec_valid(timespec{5, 999'999'999}));
    EXPECT_FALSE(timespec_valid(timespec{-1, 0}));
    EXPECT_FALSE(timespec_valid(timespec{0, -1}));
    EXPECT_FALSE(timespec_valid(timespec{0, 1'000'000'000}));
}

// A time past INT64_MAX ns (the year 2262) saturates instead of wrapping to
// a time in the past, which would end a "sleep forever" at once.
TEST(Clock, ns_of_saturates_past_int64) {
    EXPECT_EQ(ns_of(timespec{INT64_MAX / 1'000'000'000 + 1, 0}), INT64_MAX);
    EXPECT_EQ(ns_of(timespec{static_cast<time_t>(INT64_MAX), 999'999'999}), INT64_MAX);
    EXPECT_GT(ns_of(timespec{INT64_MAX / 1'000'000'000 - 1, 999'999'999}), 0);
}

}  // namespace
