// weft-bench harness — a flat JSON object writer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "harness/stats.hpp"

namespace weft::bench {

// `s` as a JSON string literal, quotes included: ", \ and control characters
// are escaped; other bytes (UTF-8) pass through unchanged.
std::string json_quote(std::string_view s);

// A double as a JSON number (7 significant digits); NaN and infinities,
// which JSON cannot express, become null.
std::string json_number(double v);

// A flat JSON object built field by field, in insertion order. Adding a key
// twice replaces nothing: it appends a duplicate, so don't.
class json_object {
public:
    json_object& add(std::string_view key, double v);
    json_object& add(std::string_view key, int v);
    json_object& add(std::string_view key, long v);
    json_object& add(std::string_view key, long long v);
    json_object& add(std::string_view key, unsigned v);
    json_object& add(std::string_view key, unsigned long v);
    json_object& add(std::string_view key, unsigned long long v);
    json_object& add(std::string_view key, bool v);
    json_object& add(std::string_view key, std::string_view v);
    json_object& add(std::string_view key, char const* v);
    json_object& add(std::string_view key, std::string const& v);
    json_object& add_null(std::string_view key);
    // A nested value that is already valid JSON text (an array, an object).
    json_object& add_raw(std::string_view key, std::string_view json);
    // A JSON array of strings.
    json_object& add(std::string_view key, std::vector<std::string> const& v);
    // Adds the statistics of a figure as KEY (median), KEY_spread, KEY_min,
    // KEY_max. This is the convention every experiment uses for a figure
    // measured over rounds.
    json_object& add_summary(std::string_view key, summary const& s);

    // The fields of `other`, in its order, after this object's.
    json_object& add_fields(json_object const& other);

    bool empty() const noexcept { return body_.empty(); }
    std::string str() const;

private:
    json_object& field(std::string_view key, std::string_view value_text);
    std::string body_;
};

}  // namespace weft::bench
