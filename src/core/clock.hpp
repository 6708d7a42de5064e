// weft::detail — the monotonic clock and the conversions between nanoseconds
// and timespec, written once for the whole runtime (and libweft-pthread).
//
// Every deadline inside weft is an absolute CLOCK_MONOTONIC time in
// nanoseconds (an int64_t: 292 years from boot). A deadline on another clock
// (CLOCK_REALTIME, from a POSIX API) is converted once, on entry
// (deadline_from_timespec in core/wait.hpp), so that a later jump of that clock
// does not move it.
#pragma once

#include <time.h>

#include <climits>
#include <cstdint>

namespace weft::detail {

inline constexpr std::int64_t kNsPerSecond = 1'000'000'000;

// Whether t is a time or duration the POSIX calls accept: tv_sec >= 0 and
// 0 <= tv_nsec < 1e9.
inline constexpr bool timespec_valid(const timespec& t) noexcept {
    return t.tv_sec >= 0 && t.tv_nsec >= 0 && t.tv_nsec < kNsPerSecond;
}

// A valid t (timespec_valid) in nanoseconds; INT64_MAX for a t past the
// year 2262 (INT64_MAX ns), which no wait reaches.
inline constexpr std::int64_t ns_of(const timespec& t) noexcept {
    if (t.tv_sec >= (INT64_MAX - t.tv_nsec) / kNsPerSecond) return INT64_MAX;
    return std::int64_t(t.tv_sec) * kNsPerSecond + t.tv_nsec;
}

// ns (>= 0) as a timespec.
inline constexpr timespec timespec_of(std::int64_t ns) noexcept {
    return timespec{static_cast<time_t>(ns / kNsPerSecond), static_cast<long>(ns % kNsPerSecond)};
}

// Now on `clock`, nanoseconds.
inline std::int64_t clock_ns(clockid_t clock) noexcept {
    timespec ts;
    clock_gettime(clock, &ts);
    return ns_of(ts);
}

// CLOCK_MONOTONIC now, nanoseconds: the clock of every deadline.
inline std::int64_t monotonic_ns() noexcept { return clock_ns(CLOCK_MONOTONIC); }

// CLOCK_MONOTONIC_COARSE now, nanoseconds: the same clock at the resolution
// of the kernel's tick (1-4 ms), a few ns to read; for time stamps that are
// compared at the scale of milliseconds or more, never for deadlines.
inline std::int64_t coarse_monotonic_ns() noexcept { return clock_ns(CLOCK_MONOTONIC_COARSE); }

}  // namespace weft::detail
