// weft::detail::sleep — which parked worker a waker claims for new work.
//
// Why this one and not the last to park: README.md beside this file, "Which
// parked worker". A pure function of the parked set and the waker's CPU, so
// that the rule is tested without threads (tests/whitebox/sleep_claim_test.cpp).
#pragma once

#include <span>

#include "core/worker.hpp"

namespace weft::detail::sleep {

// The worker that a waker running on CPU `waker_cpu` claims among `parked`
// (the parked set, in the order its members parked): the last to park of
// those whose park_cpu is another CPU, else (all parked on the waker's CPU)
// the last to park. The kernel would often place one that parked on the
// waker's CPU behind the waker, while another CPU may sit idle. `parked` must
// not be empty; the caller holds the lock that guards it and park_cpu.
inline worker* parked_to_claim(std::span<worker* const> parked, int waker_cpu) {
    for (auto it = parked.rbegin(); it != parked.rend(); ++it)
        if ((*it)->park_cpu != waker_cpu) return *it;
    return parked.back();
}

}  // namespace weft::detail::sleep
