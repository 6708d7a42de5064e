// weft-bench harness — timing: the monotonic clock, a busy loop, keep().
#pragma once

#include <cstdint>

namespace weft::bench {

// Nanoseconds on the monotonic steady clock (CLOCK_MONOTONIC through the vDSO
// on Linux, ~20 ns per call). Only differences are meaningful.
std::uint64_t now_ns() noexcept;

// CPU time (user and system) of the whole process, all its threads, from
// CLOCK_PROCESS_CPUTIME_ID: in nanoseconds and in seconds.
std::uint64_t process_cpu_ns() noexcept;
double process_cpu_s() noexcept;

// Keeps the CPU busy for `ns` nanoseconds (a loop on now_ns, no system call,
// no scheduling point): a stand-in computation of a known length.
void busy_for_ns(std::uint64_t ns) noexcept;

// Keeps the compiler from deleting a computation whose result is otherwise
// unused (the classic benchmark::DoNotOptimize).
template <class T>
inline void keep(T const& value) noexcept {
    asm volatile("" : : "r,m"(value) : "memory");
}

}  // namespace weft::bench
