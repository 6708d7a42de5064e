// weft-bench harness — a target: a figure measured over rounds against the
// bound an issue or a paper sets for it, as one JSONL record and a table row.
#pragma once

#include "harness/experiment.hpp"
#include "harness/json.hpp"
#include "harness/stats.hpp"
#include "harness/table.hpp"

namespace weft::bench {

// What a target is held to: its name, a short text for the table, the bound,
// and whether the median must be at least (else at most) the bound.
struct target_bound {
    char const* name;
    char const* what;
    double bound;
    bool at_least;
};

// Emits the record {"experiment", "target": NAME, the experiment's own
// `fields`, "value" (the median of `value`), "bound", "met", "compare"
// ("at_least" or "at_most"), "value_min", "value_max", "rounds", provenance}
// and adds the row NAME, WHAT, median, min-max, bound, met/MISSED to `t`.
// Returns whether the target was met.
bool emit_target(context& ctx, table& t, target_bound const& b, summary const& value, json_object const& fields = {});

}  // namespace weft::bench
