// weft-bench harness — command-line options: specs, parsing, validation, help (harness/options.hpp).
#include "harness/options.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "harness/failure.hpp"
#include "harness/table.hpp"
#include "sched/policy.hpp"

namespace weft::bench {

option_spec opt_rounds(int default_rounds) {
    return {.name = "rounds",
            .kind = opt_kind::integer,
            .metavar = "N",
            .default_value = std::to_string(default_rounds),
            .help = "repeated measurement rounds; figures are medians over them",
            .min = 1,
            .max = 100000};
}

option_spec opt_workers(int default_workers) {
    return {.name = "workers",
            .kind = opt_kind::integer,
            .metavar = "N",
            .default_value = std::to_string(default_workers),
            .help = "worker kernel threads of the weft runtime",
            .min = 1,
            .max = 4096};
}

option_spec opt_iters(long default_iters, std::string help) {
    return {.name = "iters",
            .kind = opt_kind::integer,
            .metavar = "N",
            .default_value = std::to_string(default_iters),
            .help = help.empty() ? "operations timed per round" : std::move(help),
            .min = 1,
            .max = 1e12};
}

namespace {
std::vector<std::string> sched_names() {
    std::vector<std::string> names;
    weft::detail::registry<weft::detail::sched_policy_def>::for_each(
        [&](weft::detail::sched_policy_def const& d) { names.emplace_back(d.name); });
    return names;
}
}  // namespace

option_spec opt_sched_list(std::string default_value, std::string help) {
    return {.name = "sched",
            .kind = opt_kind::list,
            .metavar = "LIST",
            .default_value = std::move(default_value),
            .help = std::move(help),
            .choices_of = sched_names};
}

option_spec opt_sched() {
    return {.name = "sched",
            .kind = opt_kind::string,
            .metavar = "NAME",
            .default_value = "",
            .help = "weft scheduling policy (default: WEFT_SCHED, else the runtime's default)"};
}

std::string const& options::raw(std::string_view name) const {
    auto it = values_.find(name);
    if (it == values_.end())
        die("internal error: option --%.*s was read but never declared", int(name.size()), name.data());
    return it->second;
}

long long options::integer(std::string_view name) const { return std::atoll(raw(name).c_str()); }
double options::number(std::string_view name) const { return std::strtod(raw(name).c_str(), nullptr); }
std::string const& options::string(std::string_view name) const { return raw(name); }
bool options::flag(std::string_view name) const { return raw(name) == "1"; }
bool options::given(std::string_view name) const { return given_.contains(name); }

std::vector<std::string> options::list(std::string_view name) const {
    std::vector<std::string> out;
    std::string const& s = raw(name);
    std::size_t start = 0;
    while (start <= s.size() && !s.empty()) {
        std::size_t const comma = s.find(',', start);
        std::size_t const end = comma == std::string::npos ? s.size() : comma;
        if (end > start) out.push_back(s.substr(start, end - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

void options::set(std::string const& name, std::string value, bool given) {
    values_[name] = std::move(value);
    if (given) given_.insert(name);
}

namespace {

std::string bound_text(double v) {
    if (v >= 1e18) return "inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", v);
    return buf;
}

std::vector<std::string> choices_of(option_spec const& spec) {
    return spec.choices_of != nullptr ? spec.choices_of() : spec.choices;
}

// Validates `value` for `spec`, returning its canonical text (sizes in bytes).
std::string validate(std::string const& command, option_spec const& spec, std::string const& value) {
    auto bad = [&](std::string const& what) -> usage_error {
        return usage_error(command + ": --" + spec.name + " expects " + what + ", got '" + value + "'");
    };
    auto range = [&](double v, std::string const& kind) {
        if (v < spec.min || v > spec.max)
            throw bad(kind + " in [" + bound_text(spec.min) + ", " + bound_text(spec.max) + "]");
    };
    switch (spec.kind) {
    case opt_kind::integer: {
        long long v = 0;
        auto const* first = value.data();
        auto const* last = value.data() + value.size();
        auto [ptr, ec] = std::from_chars(first, last, v);
        if (value.empty() || ec != std::errc{} || ptr != last)
            throw bad("an integer in [" + bound_text(spec.min) + ", " + bound_text(spec.max) + "]");
        range(static_cast<double>(v), "an integer");
        return std::to_string(v);
    }
    case opt_kind::size: {
        unsigned long long v = 0;
        auto const* first = value.data();
        auto const* last = value.data() + value.size();
        auto [ptr, ec] = std::from_chars(first, last, v);
        std::string suffix(ptr, last);
        std::transform(suffix.begin(), suffix.end(), suffix.begin(), ::tolower);
        unsigned long long mul = 1;
        if (suffix.empty() || suffix == "b")
            mul = 1;
        else if (suffix == "k" || suffix == "kib" || suffix == "kb")
            mul = 1ull << 10;
        else if (suffix == "m" || suffix == "mib" || suffix == "mb")
            mul = 1ull << 20;
        else if (suffix == "g" || suffix == "gib" || suffix == "gb")
            mul = 1ull << 30;
        else
            mul = 0;
        if (value.empty() || ec != std::errc{} || ptr == first || mul == 0)
            throw bad("a size in bytes, optionally with a K, M or G suffix");
        double const bytes = static_cast<double>(v) * static_cast<double>(mul);
        range(bytes, "a size");
        return std::to_string(v * mul);
    }
    case opt_kind::number: {
        char* end = nullptr;
        errno = 0;
        double const v = std::strtod(value.c_str(), &end);
        if (value.empty() || end != value.c_str() + value.size() || errno || !std::isfinite(v))
            throw bad("a number in [" + bound_text(spec.min) + ", " + bound_text(spec.max) + "]");
        range(v, "a number");
        return value;
    }
    case opt_kind::string: {
        std::vector<std::string> const choices = choices_of(spec);
        if (!choices.empty() && std::find(choices.begin(), choices.end(), value) == choices.end())
            throw bad("one of " + join(choices, ", "));
        return value;
    }
    case opt_kind::list: {
        options tmp;
        tmp.set("x", value, true);
        auto items = tmp.list("x");
        if (items.empty()) throw bad("a comma-separated list");
        std::vector<std::string> const choices = choices_of(spec);
        if (!choices.empty())
            for (auto const& item : items)
                if (std::find(choices.begin(), choices.end(), item) == choices.end())
                    throw usage_error(command + ": --" + spec.name + ": unknown name '" + item +
                                      "'; valid: " + join(choices, ", "));
        return value;
    }
    case opt_kind::flag: return "1";
    }
    return value;
}

}  // namespace

options parse_options(std::string const& command, std::vector<option_spec> const& specs,
                      std::vector<std::string> const& args) {
    options opts;
    auto find = [&](std::string_view name) -> option_spec const* {
        for (auto const& s : specs)
            if (s.name == name) return &s;
        return nullptr;
    };
    auto valid_list = [&] {
        std::vector<std::string> names;
        for (auto const& s : specs) names.push_back("--" + s.name);
        return join(names, ", ");
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string const& arg = args[i];
        if (arg.size() < 3 || arg.compare(0, 2, "--") != 0)
            throw usage_error(command + ": unexpected argument '" + arg +
                              "'; options start with --; valid: " + valid_list());
        std::string name = arg.substr(2);
        std::string value;
        bool has_value = false;
        if (auto eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name.resize(eq);
            has_value = true;
        }
        option_spec const* spec = find(name);
        if (!spec) throw usage_error(command + ": unknown option '--" + name + "'; valid options: " + valid_list());
        if (spec->kind == opt_kind::flag) {
            if (has_value) throw usage_error(command + ": --" + name + " takes no value");
            opts.set(name, "1", true);
            continue;
        }
        if (!has_value) {
            if (i + 1 >= args.size())
                throw usage_error(command + ": --" + name + " needs a value (" +
                                  (spec->metavar.empty() ? std::string("VALUE") : spec->metavar) + ")");
            value = args[++i];
        }
        opts.set(name, validate(command, *spec, value), true);
    }
    for (auto const& s : specs) {
        if (opts.given(s.name)) continue;
        if (s.kind == opt_kind::flag)
            opts.set(s.name, "0", false);
        else if (s.default_value.empty())
            opts.set(s.name, "", false);
        else  // canonical form too (a size default of "64K" reads as 65536)
            opts.set(s.name, validate(command + " (default)", s, s.default_value), false);
    }
    return opts;
}

std::string options_help(std::vector<option_spec> const& specs) {
    std::vector<std::pair<std::string, std::string>> rows;
    std::size_t w = 0;
    for (auto const& s : specs) {
        std::string left = "  --" + s.name;
        if (s.kind != opt_kind::flag) left += " " + (s.metavar.empty() ? std::string("VALUE") : s.metavar);
        std::string right = s.help;
        if (std::vector<std::string> const choices = choices_of(s); !choices.empty())
            right += " (" + join(choices, ", ") + ")";
        if (s.kind != opt_kind::flag && !s.default_value.empty()) right += " [default: " + s.default_value + "]";
        w = std::max(w, left.size());
        rows.emplace_back(std::move(left), std::move(right));
    }
    std::string out;
    for (auto const& [l, r] : rows) out += l + std::string(w - l.size() + 2, ' ') + r + "\n";
    return out;
}

}  // namespace weft::bench
