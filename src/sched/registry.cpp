#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sched/policy.hpp"

namespace weft::detail {

namespace {
// Function-local static: registration runs during other files' static
// initialization, whose order relative to this file is unspecified.
std::vector<const sched_policy_def*>& registry() {
    static std::vector<const sched_policy_def*> policies;
    return policies;
}
}  // namespace

namespace {
// A definition that breaks the contract of policy.hpp is a bug in weft itself,
// found at start-up: it stops the program with the policy and what is wrong.
[[noreturn]] void bad_policy(const sched_policy_def* def, const char* what) {
    std::fprintf(stderr, "weft: scheduling policy '%s' is malformed: %s (see src/sched/policy.hpp)\n",
                 def->name != nullptr ? def->name : "(unnamed)", what);
    std::abort();
}
}  // namespace

void register_policy(const sched_policy_def* def) {
    if (def->name == nullptr || def->create == nullptr || def->destroy == nullptr || def->spawn == nullptr ||
        def->ready == nullptr || def->pick_next == nullptr)
        bad_policy(def, "name, create, destroy, spawn, ready and pick_next are required");
    const sched_space_hooks& h = def->space;
    const int space = (h.on_block != nullptr) + (h.on_exit != nullptr) + (h.on_alloc != nullptr) +
                      (h.on_run != nullptr) + (h.alloc_turn != nullptr);
    if (space != 0 && space != 5)
        bad_policy(def, "space needs all five hooks (on_block, on_exit, on_alloc, on_run, alloc_turn) or none");
    registry().push_back(def);
}

const sched_policy_def* find_policy(const char* name) {
    for (const sched_policy_def* def : registry())
        if (std::strcmp(def->name, name) == 0) return def;
    return nullptr;
}

std::string policy_names() {
    std::string names;
    for (const sched_policy_def* def : registry()) {
        if (!names.empty()) names += ", ";
        names += def->name;
    }
    return names;
}

}  // namespace weft::detail
