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

// Memory quota K of the dfs scheduler (WEFT_QUOTA): bytes a thread may allocate
// through weft's allocator, net of frees, between two scheduling points before
// it is preempted; a single allocation above K first forks about size/K dummy
// threads and then waits for its turn. 256 KiB: a quarter of this machine's
// per-core L2 (1 MiB), so what a thread allocates in one quantum stays cached;
// the additive term of dfs's bound, c*K*p*D, stays at tens of MiB for p = 2 and
// D ~ 20. 64 KiB (until session 5) made seed 000's matrix multiply's 128 x 128
// temporaries wait for their turn too, which ran their siblings one after the
// other: 0.18 s against 0.152 s on 2 workers (medians of six processes each),
// for a peak heap of 1.01x serial instead of 1.01-1.06x. See docs/design/dfs.md, "Default quota".
inline constexpr std::size_t default_quota = 256 * 1024;
// Accepted range of WEFT_QUOTA. Below a page the dummy-thread count of an
// ordinary allocation explodes; above 1 TiB the quota never triggers.
inline constexpr std::size_t min_quota = 1024;
inline constexpr std::size_t max_quota = std::size_t(1) << 40;
// Most dummy threads forked before one allocation (size/K is capped here): a
// 1 GiB allocation with K = 1 KiB would otherwise fork a million threads. Guess.
inline constexpr std::uint32_t max_dummies_per_alloc = 1u << 16;
// A large allocation waits for its turn (dfs, src/core/preempt.cpp, await_turn)
// for at most this many pieces of higher-priority work run first, per dummy
// thread it forked, and waits at most this long per dummy thread at a time
// (at most alloc_turn_max_wait_ns) while such work runs on another worker.
// The end of one of seed 000's sub-multiplies (a 64 x 64 leaf, ~50 us here,
// then its add) takes a few hundred microseconds; 1 ms per dummy (8 ms for a
// 2 MiB temporary at K = 256 KiB) leaves room for a worker descheduled by a
// busy host in the middle of it: at 200 us, one process in six still let a
// temporary through early (1.25x the serial heap in one of its rounds).
inline constexpr std::uint64_t alloc_turn_runs_per_dummy = 64;
inline constexpr std::int64_t alloc_turn_wait_ns_per_dummy = 1'000'000;
inline constexpr std::int64_t alloc_turn_max_wait_ns = 50'000'000;
// ... spinning for the first 50 us of each wait, then yielding the CPU
// between looks (sched_yield), as an idle worker does.
inline constexpr std::int64_t alloc_turn_spin_ns = 50'000;
// Weft's allocator re-sums the per-worker heap counters (to sample the peak)
// on every allocation with one worker, and with several once its own counter
// has grown by this many bytes since its last sample (or for an allocation at
// least this big): reading the other workers' counters costs a cache miss
// each. The sampled peak may miss up to about workers * this. Guess.
inline constexpr std::size_t heap_sample_step = 16 * 1024;

// Highest worker count accepted from WEFT_WORKERS / weft_config_t.
inline constexpr int max_workers = 1024;

}  // namespace weft::detail::tun
