// weft::detail — the futex, written once: a kernel thread sleeps on a 32-bit
// word until another wakes it. Used where a kernel thread (a parked worker,
// a thread outside weft, an I/O helper, a probe's controller) must block in the
// kernel; weft threads block through core/wait.hpp instead.
//
// Always process-private (FUTEX_PRIVATE_FLAG): no word is shared between
// processes. Every waiter re-checks its word in a loop: futex_wait returns on a
// wake, a signal, a timeout, a word that no longer holds `expected`, or
// spuriously.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>
#include <cstdint>

#include "base/primitives.hpp"
#include "core/clock.hpp"

namespace weft::detail {

// Sleeps while *word == expected, with no deadline.
inline void futex_wait(atomic<std::uint32_t>* word, std::uint32_t expected) noexcept {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT | FUTEX_PRIVATE_FLAG, expected, nullptr,
            nullptr, 0);
}

// Sleeps while *word == expected, until deadline_ns at the latest (absolute
// CLOCK_MONOTONIC ns, core/clock.hpp; INT64_MAX: none, the timers' "no
// deadline"). FUTEX_WAIT_BITSET takes the deadline as an absolute
// CLOCK_MONOTONIC time, so the caller's deadline reaches the kernel as it is,
// without a clock read; a deadline already past returns at once.
inline void futex_wait(atomic<std::uint32_t>* word, std::uint32_t expected, std::int64_t deadline_ns) noexcept {
    if (deadline_ns == INT64_MAX) return futex_wait(word, expected);
    timespec at = timespec_of(deadline_ns < 0 ? 0 : deadline_ns);
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, expected, &at,
            nullptr, FUTEX_BITSET_MATCH_ANY);
}

// Wakes one kernel thread sleeping on word, if any.
inline void futex_wake(atomic<std::uint32_t>* word) noexcept {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, nullptr, nullptr, 0);
}

}  // namespace weft::detail
