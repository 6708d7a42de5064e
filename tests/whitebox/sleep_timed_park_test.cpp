// Class: requirement, whitebox. Until when a parked idle worker sleeps in the
// kernel (src/core/sleep/timed_park.hpp; docs/design/net.md, "A timer's
// waiter wakes on time"): the rule alone, no threads and no runtime. A
// deadline that is the earliest timer's is slept to a wake-up early, so that
// the worker is awake when the timer is due; every other deadline as it is.
#include <gtest/gtest.h>

#include <cstdint>

#include "core/sleep/timed_park.hpp"
#include "core/tunables.hpp"

namespace {

using weft::detail::sleep::sleep_until;

constexpr std::int64_t none = INT64_MAX;

TEST(SleepTimedPark, a_timer_deadline_is_slept_to_a_wake_up_early) {
    EXPECT_EQ(sleep_until(1'000'000, 1'000'000, false, 25'000), 975'000);
    // The runtime's own margin, whatever it is, is taken off.
    namespace tun = weft::detail::tun;
    EXPECT_EQ(sleep_until(5'000'000, 5'000'000, false, tun::timer_wake_early_ns), 5'000'000 - tun::timer_wake_early_ns);
    EXPECT_GT(tun::timer_wake_early_ns, 0);
}

TEST(SleepTimedPark, other_deadlines_are_slept_to_as_they_are) {
    // No deadline at all: an untimed park (woken by a waker only).
    EXPECT_EQ(sleep_until(none, none, false, 25'000), none);
    EXPECT_EQ(sleep_until(none, 1'000'000, false, 25'000), none);
    // A watch period or a progress hook's poll before the earliest timer.
    EXPECT_EQ(sleep_until(400'000, 1'000'000, false, 25'000), 400'000);
    // The deadlock detector's grace period, even if it happened to equal a timer's.
    EXPECT_EQ(sleep_until(1'000'000, 1'000'000, true, 25'000), 1'000'000);
}

}  // namespace
