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

void register_policy(const sched_policy_def* def) { registry().push_back(def); }

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
