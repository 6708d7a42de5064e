// weft::detail — preemption by the runtime (preempt.cpp).
#pragma once

#include <cstdint>

namespace weft::detail {

struct worker;

// Preemption by the runtime, used by weft's allocator
// when the policy's on_alloc asks for it (dfs memory quota, Narlikar & Blelloch):
// preempt makes the current ult ready with ready_reason::preempted and runs
// what the policy picks, which may be the same ult (then nothing switches);
// run_dummies forks n dummy threads as a binary tree and joins them;
// await_turn then lets the work left of the ult go first, as the policy's
// alloc_turn says, within bounds proportional to n (tun::alloc_turn_*).
worker* preempt(worker* w);
worker* run_dummies(worker* w, std::uint32_t n);
worker* await_turn(worker* w, std::uint32_t n);

}  // namespace weft::detail
