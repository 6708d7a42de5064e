// weft::detail — every tunable of the core in one place, with its unit and invariant.
// Values marked "guess" were picked by reasoning, not measurement; the design notes
// in docs/design/ say which ones were measured and how.
#pragma once

#include <cstddef>
#include <cstdint>

namespace weft::detail::tun {

// Default usable stack bytes of a weft thread. Mapped lazily: a thread that uses
// 2 KiB costs one or two touched pages, not 64 KiB. See docs/design/stacks-and-context.md.
inline constexpr std::size_t default_stack_size = 64 * 1024;
// Upper bound accepted for a stack size (WEFT_STACK_SIZE, attributes).
inline constexpr std::size_t max_stack_size = std::size_t(1) << 30;

// Stack of a worker's idle flow (the scheduling loop) when it cannot use the
// kernel thread's own stack (worker 0, whose native stack belongs to main).
inline constexpr std::size_t idle_stack_size = 64 * 1024;

// Spin iterations an idle worker makes (each a pause plus a look for work)
// before it parks. ~100 ns each here, so ~50 us: above the ~20 us it costs to
// wake a parked worker on this machine, so a worker that would be woken within
// that time never pays for the futex round trip. Guess, bounded by that figure.
inline constexpr int idle_spins = 512;
// sched_yield calls after the spins, before parking (lets a co-scheduled runnable
// kernel thread, e.g. another program, have the CPU before we sleep). Guess.
inline constexpr int idle_yields = 4;

// Grace period before the deadlock detector reports: every weft thread must have
// been blocked, with no timer pending and no worker running anything, for this long.
// Long enough that an external kernel thread posting a semaphore is not mistaken
// for a deadlock in practice; short enough to fail a hung test quickly.
inline constexpr std::int64_t deadlock_grace_ns = 500'000'000;

// Highest worker count accepted from WEFT_WORKERS / weft_config_t.
inline constexpr int max_workers = 1024;

}  // namespace weft::detail::tun
