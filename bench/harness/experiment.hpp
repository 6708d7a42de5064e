// weft-bench harness — the registry of experiments and the context a run gets.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/json.hpp"
#include "harness/options.hpp"
#include "harness/table.hpp"

namespace weft::bench {

class context;

struct experiment {
    std::string name{};                  // the command: weft-bench NAME
    std::string description{};           // one line, for `weft-bench list`
    std::string details{};               // longer help: what is timed, per what unit
    std::vector<option_spec> options{};  // --json, --jsonl and --help are added
    std::function<int(context&)> run{};  // returns the exit status
    // weft-bench demo runs this experiment (in its own process, with
    // demo_args appended) in increasing demo_order.
    bool in_demo = false;
    std::vector<std::string> demo_args{};
    int demo_order = 100;
};

// Registers an experiment at static-initialisation time:
//     static weft::bench::registrar reg{{.name = "micro", ...}};
struct registrar {
    explicit registrar(experiment e);
};

// All registered experiments, sorted by name.
std::vector<experiment const*> experiments();
experiment const* find_experiment(std::string_view name);

// The options every experiment accepts.
std::vector<option_spec> const& common_options();

// What an experiment's run function gets.
class context {
public:
    context(experiment const& exp, options opts);
    ~context();
    context(context const&) = delete;
    context& operator=(context const&) = delete;

    experiment const& exp() const noexcept { return *exp_; }
    options const& opts() const noexcept { return opts_; }
    // True under --json: stdout carries only JSONL, tables are not printed.
    bool json() const noexcept { return json_; }

    // A record with "experiment" already set; add figures, then emit() it.
    json_object record() const;
    // Prints the record on stdout as one line (under --json) and appends it
    // to the --jsonl file if one was given.
    void emit(json_object const& rec);
    // Prints a table with an optional title (not under --json).
    void print(table const& t, std::string_view title = {});
    // A line of text for the reader: stdout without --json, else nothing.
    void say(char const* fmt, ...) __attribute__((format(printf, 2, 3)));
    // A progress line while the experiment runs ("  [NAME 12.3 s] TEXT": the
    // seconds since it started): on stdout, or on stderr under --json.
    void progress(char const* fmt, ...) __attribute__((format(printf, 2, 3)));
    // A warning: always on stderr, prefixed with "weft-bench NAME: warning: ".
    void warn(char const* fmt, ...) __attribute__((format(printf, 2, 3)));

private:
    experiment const* exp_;
    options opts_;
    bool json_ = false;
    std::FILE* jsonl_ = nullptr;
    std::uint64_t start_ns_ = 0;
};

}  // namespace weft::bench
