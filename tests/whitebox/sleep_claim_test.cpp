// Class: requirement, whitebox. Which parked worker a waker claims
// (src/core/sleep/claim.hpp; core/sleep/README.md, "Which parked worker"):
// the rule alone, fed parked sets with given park CPUs and a waker's CPU, no
// threads and no runtime. That a push with every other worker parked is run
// whichever worker it claims is SchedWsConcurrency's
// push_with_the_other_workers_parked_is_stolen (sched_ws_test.cpp).
#include <gtest/gtest.h>

#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include "core/sleep/claim.hpp"
#include "core/worker.hpp"

namespace {

using weft::detail::worker;

// The position in the parked set (in park order) of the worker that a waker
// on `waker_cpu` claims, when the i-th to park parked on park_cpus[i].
std::size_t claimed(const std::vector<int>& park_cpus, int waker_cpu) {
    std::vector<worker> workers(park_cpus.size());
    std::vector<worker*> parked;
    for (std::size_t i = 0; i < park_cpus.size(); ++i) {
        workers[i].index = static_cast<int>(i);
        workers[i].park_cpu = park_cpus[i];
        parked.push_back(&workers[i]);
    }
    worker* w = weft::detail::sleep::parked_to_claim(parked, waker_cpu);
    for (std::size_t i = 0; i < parked.size(); ++i)
        if (parked[i] == w) return i;
    ADD_FAILURE() << "parked_to_claim returned a worker outside the parked set";
    return parked.size();
}

// For failure messages: "parked on CPUs [1, 0], waker on CPU 0".
std::string setup(const std::vector<int>& park_cpus, int waker_cpu) {
    std::ostringstream s;
    s << "parked (first to last) on CPUs [";
    for (std::size_t i = 0; i < park_cpus.size(); ++i) s << (i ? ", " : "") << park_cpus[i];
    s << "], waker on CPU " << waker_cpu;
    return s.str();
}

#define EXPECT_CLAIMS(park_cpus, waker_cpu, position) \
    EXPECT_EQ(claimed(park_cpus, waker_cpu), std::size_t{position}) << setup(park_cpus, waker_cpu)

using cpus = std::vector<int>;

// requirement: the last to park parked on the waker's CPU (the kernel would
// queue it behind the waker), an earlier one elsewhere: the earlier one.
TEST(SleepClaim, passes_over_the_last_to_park_when_it_parked_on_the_wakers_cpu) {
    EXPECT_CLAIMS((cpus{1, 0}), 0, 0);
    EXPECT_CLAIMS((cpus{0, 1}), 1, 0);
    EXPECT_CLAIMS((cpus{1, 0, 0, 0}), 0, 0);
}

// requirement: among several that parked elsewhere, the last of them to park.
TEST(SleepClaim, takes_the_last_to_park_of_those_on_other_cpus) {
    EXPECT_CLAIMS((cpus{1, 2, 0, 0}), 0, 1);
    EXPECT_CLAIMS((cpus{1, 0, 2, 0}), 0, 2);
    EXPECT_CLAIMS((cpus{3, 1, 0, 1, 0}), 0, 3);
}

// requirement: with none on the waker's CPU (as many workers as CPUs), the last to park.
TEST(SleepClaim, takes_the_last_to_park_when_none_parked_on_the_wakers_cpu) {
    EXPECT_CLAIMS((cpus{1, 2, 3}), 0, 2);
    EXPECT_CLAIMS((cpus{1, 1}), 0, 1);
}

// requirement: with all on the waker's CPU, the last to park: someone must be woken.
TEST(SleepClaim, takes_the_last_to_park_when_all_parked_on_the_wakers_cpu) {
    EXPECT_CLAIMS((cpus{0, 0, 0}), 0, 2);
    EXPECT_CLAIMS((cpus{5}), 5, 0);
}

// negative: a CPU that sched_getcpu() could not tell (-1) matches no real
// CPU: a waker that does not know its CPU takes the last to park, and a
// worker whose park CPU is unknown counts as parked elsewhere.
TEST(SleepClaim, an_unknown_cpu_matches_no_other) {
    EXPECT_CLAIMS((cpus{0, 1}), -1, 1);
    EXPECT_CLAIMS((cpus{-1, 0}), 0, 0);
}

}  // namespace
