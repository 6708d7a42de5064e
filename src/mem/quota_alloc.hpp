// weft::detail — weft's allocator (weft_malloc & co., weft::allocator): heap
// accounting for every policy, and the memory quota for policies that ask for
// one (sched_policy_def::space.on_alloc; dfs, Narlikar & Blelloch §4).
//
// Accounting without a shared counter. Each worker has a slot with its own
// running total (bytes allocated minus bytes freed by code running on it;
// a block freed on another worker than the one it came from makes one slot
// go up and another down, and only the sum means anything). Only the owner
// writes its slot (a relaxed load and store, no locked instruction).
// Allocations from kernel threads outside weft (or with no runtime) go to one
// shared atomic. The peak is the highest sum ever sampled, as for the live
// thread count (src/core/thread.cpp, sample_max_live):
//   - with one worker, every allocation samples: the peak is exact;
//   - with several, a worker samples when its own total has grown by
//     tun::heap_sample_step since its last sample, or for an allocation at
//     least that big: summing costs a cache miss per other worker, whose
//     slots their owners keep writing. The sampled peak may then be short of
//     the true one by up to about workers * heap_sample_step.
// The accounting is per process: a block may outlive the runtime that
// allocated it; weft_stats_reset starts the peak again from the current sum.
//
// The quota window. "Bytes allocated since the ult was last scheduled" needs no
// hook in the dispatch path: a worker's slot remembers which ult opened the
// window and the worker's switch count at that moment. If either differs at
// the next allocation or free, the ult has been switched out and back (or is
// another ult, maybe at the same address: a recycled stack, but then at a
// later switch count): the window starts again from zero. weft_stats_reset
// zeroes the switch counts, so it also bumps a generation that every window
// carries.
#pragma once

#include <cstddef>

#include "weft/weft.h"

namespace weft::detail {

// For an allocator that keeps its own blocks and only needs weft's accounting
// and quota (libweft-pthread's malloc, src/shim/malloc.cpp): the same
// bookkeeping weft_malloc does, without its header.
// heap_charge: the quota decision before an allocation of `bytes` by the
// running ult (dfs may preempt it or delay it behind dummy threads, so the
// caller must be a ult that holds no lock a switch could not release);
// a no-op for policies without a quota and off a worker.
void heap_charge(std::size_t bytes);
// heap_note_alloc / heap_note_free: `bytes` now allocated / freed by the
// caller (a worker's slot, or the shared count off a worker). Never switch;
// safe from any kernel thread, before the runtime starts and after it. Both
// skip what the runtime allocates for itself (core/own_allocation.hpp).
void heap_note_alloc(std::size_t bytes);
void heap_note_free(std::size_t bytes);
// heap_source (what the heap figure counts) is declared in core/stats.hpp.

}  // namespace weft::detail
