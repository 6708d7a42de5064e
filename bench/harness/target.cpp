// weft-bench harness — a target against its bound (harness/target.hpp).
#include "harness/target.hpp"

#include <string>

#include "harness/provenance.hpp"

namespace weft::bench {

bool emit_target(context& ctx, table& t, target_bound const& b, summary const& value, json_object const& fields) {
    json_object rec = ctx.record();
    rec.add("target", b.name).add_fields(fields);
    bool const met = b.at_least ? value.median >= b.bound : value.median <= b.bound;
    rec.add("value", value.median).add("bound", b.bound).add("met", met);
    rec.add("compare", b.at_least ? "at_least" : "at_most").add("value_min", value.min).add("value_max", value.max);
    rec.add("rounds", static_cast<unsigned long long>(value.n));
    add_provenance(rec);
    ctx.emit(rec);
    t.add_row({b.name, b.what, fmt(value.median, 2), fmt(value.min, 2) + "-" + fmt(value.max, 2),
               std::string(b.at_least ? ">= " : "<= ") + fmt(b.bound, 2), met ? "met" : "MISSED"});
    return met;
}

}  // namespace weft::bench
