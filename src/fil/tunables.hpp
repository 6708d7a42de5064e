// weft::detail::fil — every tunable of the filaments layer, with its unit and
// invariant. "Guess" marks values picked by reasoning rather than measurement;
// docs/design/filaments.md says which ones were measured.
#pragma once

#include <cstddef>
#include <cstdint>

namespace weft::detail::fil::tun {

// Slots of a participant's fork list (a ring). Must be a power of 2. With
// pruning a list holds at most hungry_list_limit jobs plus the tree sends; with
// pruning off, at most the forks outstanding along one recursion path (fib(40):
// 40). A fork that finds the list full is pruned, so this bounds memory, never
// correctness.
inline constexpr unsigned list_capacity = 256;

// A fork made because some worker is hungry goes to the list only while the
// list is shorter than this; beyond it the fork is pruned (the hungry worker
// has enough to take already). Guess: 2 covers one thief per list on the
// machines we target without flooding the list with small jobs.
inline constexpr int hungry_list_limit = 2;

// While someone is hungry, a join forks only if its frame is no deeper than
// the participant's fork_limit (a stack address). A fork sets the limit to its
// own frame; a job taken back or started sets it refill_margin bytes below the
// current frame (a few frames deeper may fork). Every deepen_every spins, a
// hungry participant lowers the others' limits by deepen_step bytes, so that a
// worker deep in pruned code eventually gives work away. Guesses: ~64 bytes is
// one small recursive frame; one level per ~2 us of hunger.
inline constexpr unsigned refill_margin = 256;
inline constexpr int deepen_every = 32;
inline constexpr unsigned deepen_step = 64;

// A participant with nothing to do scans for work wait_spins times (a pause
// between scans, ~30 ns each here), then scans and yields the CPU (to other
// weft threads, then to other kernel threads) for wait_yield_ns, then sleeps
// on its semaphore. A sleep costs more than the ~20 us futex wake-up: at a
// sweep barrier the sleeper wakes late and the others then wait for it at the
// next one. Jacobi (10,000 sweeps of ~90 us, 2 workers) slept at 5,000-7,000
// of its barriers with 16 yields (~35 us before sleeping), at 12-26 with
// 100-200 us, and ran 0.87-0.90 s instead of 0.98-1.17 s (session 7,
// docs/design/filaments.md, "Waiting"). Yielding, not spinning, fills the
// time, so a worker on an oversubscribed CPU lets the others run.
// apps/coarse.hpp's sweep_barrier copies both, so that the coarse-grain
// baselines wait as the filaments do: change it too.
inline constexpr int wait_spins = 256;
inline constexpr std::int64_t wait_yield_ns = 200'000;

// Bytes of each chunk of a participant's arena (C weft_fil_fork descriptors,
// 96 bytes each). Chunks are kept until the region ends.
inline constexpr std::size_t arena_chunk = 64 * 1024;

// Highest number of pool sets in one sequence (the phase word packs the set
// index in 16 bits).
inline constexpr int max_sets = 65535;

}  // namespace weft::detail::fil::tun
