// Pinned parents (src/sched/policy.hpp, "Pinned ults"): a ult pinned to its
// worker (a filament region's caller, main while it finalizes) is never
// preempted by its child; the core makes the child ready through the policy,
// so that a loop of spawns goes on and other workers take the children, under
// every policy. Requirement tests: counts and orders, no timing (each child
// waits for another child to run elsewhere, with a bound that only turns a
// hang into a failure).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include <weft/filament.hpp>

#include "core/ult.hpp"
#include "core/wait.hpp"
#include "support/weft_test.hpp"
#include "weft/weft.h"

namespace {

// Children that hold their worker (no yield) until a child has started on
// another worker: they can all end only if the children are spread.
struct spread {
    static constexpr int max_workers = 64;
    std::atomic<bool> started_on[max_workers] = {};
    std::atomic<int> met{0};
    std::atomic<bool> gave_up{false};  // one child timed out: the others stop waiting
};

void* hold_until_another_worker_runs_one(void* arg) {
    auto* s = static_cast<spread*>(arg);
    const int me = weft_worker_id();
    s->started_on[me].store(true);
    auto seen_elsewhere = [&] {
        for (int v = 0; v < spread::max_workers; ++v)
            if (v != me && s->started_on[v].load()) return true;
        return false;
    };
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!seen_elsewhere()) {
        if (s->gave_up.load()) return nullptr;
        if (std::chrono::steady_clock::now() > give_up) {
            s->gave_up.store(true);
            return nullptr;
        }
    }
    s->met.fetch_add(1);
    return nullptr;
}

// The spawn loop: `n` children, then their joins.
void spawn_loop(spread* s, int n) {
    std::vector<weft_thread_t> kids(static_cast<std::size_t>(n), WEFT_THREAD_NULL);
    for (auto& k : kids) ASSERT_EQ(weft_thread_create(&k, nullptr, &hold_until_another_worker_runs_one, s), 0);
    for (auto& k : kids) ASSERT_EQ(weft_thread_join(k, nullptr), 0);
}

class PinnedParent : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Concurrent, PinnedParent, ::testing::ValuesIn(wt::rt_params_multi()), wt::rt_param_name);

// requirement: the root filament of a region runs on the region's caller,
// pinned to its worker for the region; the threads it creates in a loop run
// on other workers too. Were the caller preempted by each child, its
// continuation would wait in its worker's inbox and the first child would
// wait for a second one that is never created.
TEST_P(PinnedParent, spawn_loop_in_a_filament_spreads_children) {
    spread s;
    const int n = 2 * workers();
    weft::fork_join([&] { spawn_loop(&s, n); });
    EXPECT_FALSE(s.gave_up.load()) << "a child waited 20 s for another child to run on another worker";
    EXPECT_EQ(s.met.load(), n);
}

// requirement (whitebox): the same for any pinned ult, the core's rule, not
// the filaments'.
TEST_P(PinnedParent, spawn_loop_of_a_pinned_thread_spreads_children) {
    spread s;
    const int n = 2 * workers();
    weft::detail::ult* self = weft::detail::current_ult();
    self->pinned_worker = weft_worker_id();
    spawn_loop(&s, n);
    self->pinned_worker = -1;
    EXPECT_FALSE(s.gave_up.load()) << "a child waited 20 s for another child to run on another worker";
    EXPECT_EQ(s.met.load(), n);
}

// --- dfs: the child of a pinned parent keeps its place in the serial order ---------

struct order_log {
    std::vector<std::string> events;  // one worker: no lock needed
};
struct pinned_parent_args {
    order_log* log;
    weft_thread_t child = WEFT_THREAD_NULL;
};

void* log_child(void* arg) {
    static_cast<order_log*>(arg)->events.push_back("child");
    return nullptr;
}

// Pins itself, creates a child (which does not preempt it), then waits for it.
void* pinned_parent(void* arg) {
    auto* a = static_cast<pinned_parent_args*>(arg);
    weft::detail::ult* self = weft::detail::current_ult();
    self->pinned_worker = weft_worker_id();
    EXPECT_EQ(weft_thread_create(&a->child, nullptr, &log_child, a->log), 0);
    a->log->events.push_back("parent goes on");
    EXPECT_EQ(weft_thread_join(a->child, nullptr), 0);
    self->pinned_worker = -1;
    return nullptr;
}

class PinnedParentDfs : public wt::single_runtime_fixture {
public:
    PinnedParentDfs() { cfg_ = wt::config(1, "dfs"); }
};

// requirement (Narlikar & Blelloch's serial depth-first order): main forks P,
// which runs at once and leaves main's continuation to its right; P, pinned,
// forks C. C is not run at once, but its place is immediately left of P, so
// when P blocks in the join, C runs before main's continuation, as in the
// serial execution. A child placed as a new root (at the right end) would run
// after it.
TEST_F(PinnedParentDfs, child_of_pinned_parent_runs_before_the_grandparents_continuation) {
    order_log log;
    pinned_parent_args a{&log};
    weft_thread_t p = WEFT_THREAD_NULL;
    ASSERT_EQ(weft_thread_create(&p, nullptr, &pinned_parent, &a), 0);
    log.events.push_back("main goes on");
    ASSERT_EQ(weft_thread_join(p, nullptr), 0);
    EXPECT_EQ(log.events, (std::vector<std::string>{"parent goes on", "child", "main goes on"}));
}

}  // namespace
