// The policy contract (src/sched/policy.hpp) as the registry enforces it
// (src/core/registry.hpp): which callbacks each
// built-in policy fills, and the refusal of a definition that breaks the
// contract (negative: a missing required callback, a partial set of space
// hooks), which stops the program with a message naming the policy.
#include <gtest/gtest.h>

#include <cstring>

#include "sched/policy.hpp"

namespace weft::detail {
namespace {

bool has_space(const sched_policy_def* d) {
    const sched_space_hooks& h = d->space;
    return h.on_block != nullptr && h.on_exit != nullptr && h.on_alloc != nullptr && h.on_run != nullptr &&
           h.alloc_turn != nullptr;
}
bool no_space(const sched_policy_def* d) {
    const sched_space_hooks& h = d->space;
    return h.on_block == nullptr && h.on_exit == nullptr && h.on_alloc == nullptr && h.on_run == nullptr &&
           h.alloc_turn == nullptr;
}

// requirement: the space-efficient policy fills every space hook, the others none.
TEST(SchedRegistry, only_dfs_has_space_hooks) {
    for (const char* name : {"fifo", "lifo", "ws", "dfs"}) {
        const sched_policy_def* d = registry<sched_policy_def>::find(name);
        ASSERT_NE(d, nullptr) << name << " is not registered; registered: " << registry<sched_policy_def>::names();
        EXPECT_NE(d->pick_next, nullptr) << name;
        if (std::strcmp(name, "dfs") == 0) EXPECT_TRUE(has_space(d)) << name;
        else EXPECT_TRUE(no_space(d)) << name;
    }
}

sched_policy_def minimal(const char* name) {
    sched_policy_def d;
    d.name = name;
    d.description = "a test's";
    d.create = [](int) -> void* { return nullptr; };
    d.destroy = [](void*) {};
    d.spawn = [](void*, int, ult*, ult*) { return false; };
    d.ready = [](void*, int, ult*, ready_reason) {};
    d.pick_next = [](void*, int) -> ult* { return nullptr; };
    return d;
}

// negative: one space hook without the others.
TEST(SchedRegistryDeathTest, partial_space_hooks_are_refused) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    static sched_policy_def d = minimal("partial");
    d.space.on_run = [](void*, int, ult*) {};
    EXPECT_DEATH(registrar<sched_policy_def> r{&d},
                 "scheduling policy 'partial' is malformed: space needs all five hooks");
}

// negative: a required callback missing.
TEST(SchedRegistryDeathTest, missing_pick_next_is_refused) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    static sched_policy_def d = minimal("no_pick");
    d.pick_next = nullptr;
    EXPECT_DEATH(registrar<sched_policy_def> r{&d},
                 "scheduling policy 'no_pick' is malformed: .*pick_next are required");
}

}  // namespace
}  // namespace weft::detail
