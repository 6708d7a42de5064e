// weft::detail::sleep — until when a parked idle worker sleeps in the kernel.
//
// Why it leaves early for a timer: README.md beside this file (step 4) and
// docs/design/net.md, "A timer's waiter wakes on time". A pure function of
// the park's deadline and the earliest timer's, so that the rule is tested
// without threads (tests/whitebox/sleep_timed_park_test.cpp).
#pragma once

#include <cstdint>

namespace weft::detail::sleep {

// The time a worker parked until `deadline` (INT64_MAX: none) futex-sleeps
// to, when the earliest armed timer is due at `earliest_timer` (INT64_MAX:
// none) and `early_ns` is the wake-up it spins instead of paying. A deadline
// that is the timer's ends the sleep `early_ns` before it (the worker spins
// the rest); any other deadline (a watch period, a progress hook's poll, the
// deadlock detector's grace period: `detector`) is slept to as it is.
inline std::int64_t sleep_until(std::int64_t deadline, std::int64_t earliest_timer, bool detector,
                                std::int64_t early_ns) {
    bool const timer = !detector && deadline != INT64_MAX && deadline == earliest_timer;
    return timer ? deadline - early_ns : deadline;
}

}  // namespace weft::detail::sleep
