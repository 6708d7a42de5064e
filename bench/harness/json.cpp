// weft-bench harness — a flat JSON object writer (harness/json.hpp).
#include "harness/json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace weft::bench {

std::string json_quote(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 2);
    out.push_back('"');
    for (char const c : s) {
        auto const u = static_cast<unsigned char>(c);
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (u < 0x20 || u == 0x7f) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", u);
                out += buf;
            } else {
                out.push_back(c);
            }
        }
    }
    out.push_back('"');
    return out;
}

std::string json_number(double v) {
    if (!std::isfinite(v)) return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.7g", v);
    return buf;
}

json_object& json_object::add_fields(json_object const& other) {
    if (!body_.empty() && !other.body_.empty()) body_ += ',';
    body_ += other.body_;
    return *this;
}

json_object& json_object::field(std::string_view key, std::string_view value_text) {
    if (!body_.empty()) body_ += ',';
    body_ += json_quote(key);
    body_ += ':';
    body_ += value_text;
    return *this;
}

json_object& json_object::add(std::string_view key, double v) { return field(key, json_number(v)); }
json_object& json_object::add(std::string_view key, int v) { return field(key, std::to_string(v)); }
json_object& json_object::add(std::string_view key, long v) { return field(key, std::to_string(v)); }
json_object& json_object::add(std::string_view key, long long v) { return field(key, std::to_string(v)); }
json_object& json_object::add(std::string_view key, unsigned v) { return field(key, std::to_string(v)); }
json_object& json_object::add(std::string_view key, unsigned long v) { return field(key, std::to_string(v)); }
json_object& json_object::add(std::string_view key, unsigned long long v) { return field(key, std::to_string(v)); }
json_object& json_object::add(std::string_view key, bool v) { return field(key, v ? "true" : "false"); }
json_object& json_object::add(std::string_view key, std::string_view v) { return field(key, json_quote(v)); }
json_object& json_object::add(std::string_view key, char const* v) {
    return v ? field(key, json_quote(v)) : add_null(key);
}
json_object& json_object::add(std::string_view key, std::string const& v) { return field(key, json_quote(v)); }
json_object& json_object::add_null(std::string_view key) { return field(key, "null"); }
json_object& json_object::add_raw(std::string_view key, std::string_view json) { return field(key, json); }

json_object& json_object::add(std::string_view key, std::vector<std::string> const& v) {
    std::string arr = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) arr += ',';
        arr += json_quote(v[i]);
    }
    arr += ']';
    return field(key, arr);
}

json_object& json_object::add_summary(std::string_view key, summary const& s) {
    std::string k(key);
    add(k, s.median);
    add(k + "_spread", s.spread);
    add(k + "_min", s.min);
    add(k + "_max", s.max);
    return *this;
}

std::string json_object::str() const { return "{" + body_ + "}"; }

}  // namespace weft::bench
