// weft::detail::sleep — the stages of each of weft's waiters, made from the
// constants of core/tunables.hpp (why each value: there, and README.md beside
// this file, "Stages").
#pragma once

#include "core/sleep/backoff.hpp"
#include "core/tunables.hpp"

namespace weft::detail::sleep {

// An idle worker (core/worker.cpp): tun::idle_spins looks, each followed by a
// pause; or, for a policy whose look is a round of steal attempts, that policy's
// idle_yield_rounds looks, each followed by a sched_yield() (sched/policy.hpp;
// ws); then tun::idle_yields sched_yield()s; then it parks.
inline backoff<yield_count> idle_worker_stages(int policy_yield_rounds) noexcept {
    if (policy_yield_rounds > 0) return {policy_yield_rounds, relax::os_yield, yield_count{tun::idle_yields}};
    return {tun::idle_spins, relax::pause, yield_count{tun::idle_yields}};
}

// A filament participant (fil/sleepers.hpp, wait_until) and the coarse-grain
// sweep barrier of apps/ (apps/coarse.hpp), which waits as the participants
// do so that the fil/coarse ratios compare equal waits: tun::fil_wait_spins
// pauses, then yielding for tun::fil_wait_yield_ns, then block.
inline backoff<yield_for> filament_stages() noexcept {
    return {tun::fil_wait_spins, relax::pause, yield_for{tun::fil_wait_yield_ns}};
}

}  // namespace weft::detail::sleep
