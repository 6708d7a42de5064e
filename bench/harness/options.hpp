// weft-bench harness — command-line options: specs, parsing, validation, help.
#pragma once

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace weft::bench {

enum class opt_kind {
    integer,  // decimal integer within [min, max]
    size,     // byte count: integer with an optional K, M or G suffix (x1024^k)
    number,   // floating-point within [min, max]
    string,   // any text; restricted to `choices` when those are given
    list,     // comma-separated names; each must be one of `choices` when given
    flag,     // no value
};

struct option_spec {
    std::string name{};  // without the leading "--"
    opt_kind kind = opt_kind::integer;
    std::string metavar{};        // shown in help: --rounds N
    std::string default_value{};  // as text; empty = no default (flag: off)
    std::string help{};
    double min = 0;  // integer, size, number: inclusive bounds
    double max = 1e18;
    std::vector<std::string> choices{};  // string, list
    // Or, for names that parts of weft register (scheduling policies): the
    // choices, asked when options are parsed or listed, after static
    // initialisation has registered them (choices, a static experiment's
    // member, would be filled before).
    std::vector<std::string> (*choices_of)() = nullptr;
};

// Ready-made specs, so that experiments spell their common options alike.
option_spec opt_rounds(int default_rounds);
option_spec opt_workers(int default_workers);
option_spec opt_iters(long default_iters, std::string help = {});
option_spec opt_sched();
// --sched LIST: weft scheduling policies, each one weft registers.
option_spec opt_sched_list(std::string default_value, std::string help);

// A command-line mistake: the message names the option or value that was
// wrong and what is valid. main() prints it and exits with status 2.
struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The parsed options of one experiment run.
class options {
public:
    long long integer(std::string_view name) const;  // integer and size kinds
    double number(std::string_view name) const;
    std::string const& string(std::string_view name) const;
    std::vector<std::string> list(std::string_view name) const;
    bool flag(std::string_view name) const;
    // True if the option was given on the command line (not just defaulted).
    bool given(std::string_view name) const;

    // Used by parse_options.
    void set(std::string const& name, std::string value, bool given);

private:
    std::string const& raw(std::string_view name) const;
    std::map<std::string, std::string, std::less<>> values_;
    std::set<std::string, std::less<>> given_;
};

// Parses args (everything after the experiment name) against specs; throws
// usage_error. Accepts "--name value" and "--name=value".
options parse_options(std::string const& command, std::vector<option_spec> const& specs,
                      std::vector<std::string> const& args);

// Help text for a list of options (two columns, defaults shown).
std::string options_help(std::vector<option_spec> const& specs);

}  // namespace weft::bench
