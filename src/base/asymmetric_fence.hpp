// weft::detail — fences, and asymmetric ones: a free fence for the hot side of a
// store-buffering handshake, and an expensive one for the rare side.
//
// Two handshakes in the runtime have the shape "A: store x; load y" against
// "B: store y; load x", where one of them must see the other's store:
//   - a thread made ready vs. a worker going to sleep (parking protocol),
//   - a thread ending vs. weft_finalize waiting for the last one.
// Each needs a full fence on *both* sides. The hot side (every ready, every
// exit) gets light_fence(): only a compiler barrier, when the rare side's
// heavy_fence() is membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), which runs a
// full barrier on every CPU that is running one of our threads (Linux >= 4.14).
// This is the pattern of liburcu and folly::asymmetricHeavyBarrier. Where
// membarrier is missing, both sides fall back to a seq_cst fence.
#pragma once

#include <atomic>

namespace weft::detail {

inline void fence_seq_cst() { std::atomic_thread_fence(std::memory_order_seq_cst); }

// True once membarrier registration succeeded (set by init_asymmetric_fence).
extern bool g_membarrier;

// Registers the process for expedited membarrier; call before any worker runs.
void init_asymmetric_fence();

inline void light_fence() {
    if (__builtin_expect(g_membarrier, 1)) asm volatile("" ::: "memory");
    else fence_seq_cst();
}

void heavy_fence();

}  // namespace weft::detail
