// weft-bench harness — what every experiment shares.
//
// weft-bench is a registry of experiments. An experiment is one file in bench/
// (bench/micro.cpp, bench/matmul.cpp, ...) that describes itself with an
// `experiment` value and registers it with a static `registrar`; adding an
// experiment therefore touches no other file (bench/CMakeLists.txt globs every
// bench/*.cpp and bench/*/*.cpp into the executable). See docs/bench.md,
// "Adding an experiment", for a complete example.
//
// This header gives the experiment:
//   - timing:      now_ns() on std::chrono::steady_clock;
//   - statistics:  summarize() -> median, min, max, p10, p90 and the spread,
//                  defined as (p90 - p10) / median (linear interpolation
//                  between order statistics, as numpy's default percentile);
//   - output:      json_object (a tiny JSON writer with proper escaping),
//                  table (aligned text tables), and context::emit(), which
//                  writes one JSON object per line (JSONL) on stdout under
//                  --json and appends it to the file named by --jsonl;
//   - options:     option_spec + parse_options() with validation; errors name
//                  the bad option or value and list what is valid (exit 2);
//   - CPU helpers: allowed_cpus(), pin_current_thread(), confine_to_cpus(),
//                  affinity_guard;
//   - processes:   spawn_piped() (a child whose stdout we read), wait_child().
//
// The harness is plain C++20 and uses nothing of weft: it can be compiled and
// tested without the runtime.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <pthread.h>
#include <sched.h>
#include <sys/types.h>

namespace weft::bench {

// ---------------------------------------------------------------------------
// Timing
// ---------------------------------------------------------------------------

// Nanoseconds on the monotonic steady clock (CLOCK_MONOTONIC through the vDSO
// on Linux, ~20 ns per call). Only differences are meaningful.
std::uint64_t now_ns() noexcept;

// Keeps the CPU busy for `ns` nanoseconds (a loop on now_ns, no system call,
// no scheduling point): a stand-in computation of a known length.
void busy_for_ns(std::uint64_t ns) noexcept;

// Keeps the compiler from deleting a computation whose result is otherwise
// unused (the classic benchmark::DoNotOptimize).
template <class T>
inline void keep(T const& value) noexcept {
    asm volatile("" : : "r,m"(value) : "memory");
}

// ---------------------------------------------------------------------------
// Statistics over repeated rounds
// ---------------------------------------------------------------------------

struct summary {
    double median = 0;
    double min = 0;
    double max = 0;
    double p10 = 0;
    double p90 = 0;
    double spread = 0;  // (p90 - p10) / median; 0 when median is 0
    std::size_t n = 0;
};

// Percentile p in [0, 1] of an ascending-sorted, non-empty sample, by linear
// interpolation between the closest ranks (numpy's default "linear" method).
double percentile(std::vector<double> const& sorted, double p);

// Summary of a sample (need not be sorted). An empty sample gives all zeros.
summary summarize(std::vector<double> samples);
// The median over i of num[i] / den[i] (same length): the ratio of two
// versions measured in the same rounds, robust to a machine whose speed moves
// between rounds (a ratio of the two medians mixes rounds seconds apart).
double median_of_ratios(std::vector<double> const& num, std::vector<double> const& den);

// ---------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------

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

    bool empty() const noexcept { return body_.empty(); }
    std::string str() const;

private:
    json_object& field(std::string_view key, std::string_view value_text);
    std::string body_;
};

// ---------------------------------------------------------------------------
// Text tables
// ---------------------------------------------------------------------------

// An aligned text table. Columns whose alignment is 'r' are right-aligned
// (numbers), 'l' left-aligned; by default the first column is left-aligned
// and the others right-aligned.
class table {
public:
    explicit table(std::vector<std::string> headers, std::string align = {});
    void add_row(std::vector<std::string> cells);
    void add_separator();
    void print(std::FILE* out) const;
    std::size_t rows() const noexcept { return rows_.size(); }

private:
    std::vector<std::string> headers_;
    std::string align_;
    std::vector<std::vector<std::string>> rows_;  // an empty row is a separator
};

// Human-readable numbers for tables.
std::string fmt(double v, int decimals);  // fixed decimals
std::string fmt_sig(double v);            // ~3-4 significant digits, thousands separated
std::string fmt_pct(double fraction);     // 0.034 -> "3.4%"
std::string fmt_ratio(double v);          // 12.3 -> "12.3x"

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Experiments and their registry
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Failing loudly
// ---------------------------------------------------------------------------

// Prints "weft-bench: WHAT failed: strerror(rc)" and exits with status 1 when
// rc != 0 (usable on any thread: it calls _exit after flushing stdio). Inline
// with the failure path out of line, since it wraps every timed call.
[[noreturn]] void check_failed(int rc, char const* what);
inline void check(int rc, char const* what) {
    if (__builtin_expect(rc != 0, 0)) check_failed(rc, what);
}
[[noreturn]] void die(char const* fmt, ...) __attribute__((format(printf, 1, 2)));

// ---------------------------------------------------------------------------
// CPUs
// ---------------------------------------------------------------------------

// CPUs this thread may run on (its affinity mask), ascending.
std::vector<int> allowed_cpus();
// Restricts the calling kernel thread to one CPU. Returns 0 or an errno.
int pin_current_thread(int cpu) noexcept;
// A pthread attribute setting: the thread created with it runs on `cpu` only.
int pin_attr(pthread_attr_t* attr, int cpu) noexcept;

// Confines the calling kernel thread, and every thread and child process it
// starts afterwards (they inherit its mask), to the first `want` CPUs it may
// use; returns how many it now has (fewer than `want` when fewer are allowed).
// Call it before the experiment starts any thread. Dies if the kernel refuses.
int confine_to_cpus(int want);

// Saves the calling thread's affinity mask and restores it on destruction.
class affinity_guard {
public:
    affinity_guard() noexcept;
    ~affinity_guard();
    affinity_guard(affinity_guard const&) = delete;
    affinity_guard& operator=(affinity_guard const&) = delete;

private:
    cpu_set_t saved_{};
    bool ok_ = false;
};

// ---------------------------------------------------------------------------
// Child processes
// ---------------------------------------------------------------------------

// A child process whose stdout is a pipe to this one.
struct piped_child {
    pid_t pid = -1;
    int out_fd = -1;  // the pipe's reading end (close-on-exec); the caller closes it
};
// Starts `exe` with `args` (args[0] is argv[0]) and this process's environment
// with `env` applied in order: "NAME=value" sets NAME, "NAME" removes it. The
// child's stdout is the pipe, its stderr this process's. Dies naming `exe` if
// it cannot be started.
piped_child spawn_piped(std::string const& exe, std::vector<std::string> const& args,
                        std::vector<std::string> const& env);
// Waits for the child `pid` to end (retrying on EINTR); returns its waitpid
// status.
int wait_child(pid_t pid);
// spawn_piped, then the child's whole stdout, then wait_child: returns the
// output and sets *status to the waitpid status.
std::string run_piped(std::string const& exe, std::vector<std::string> const& args, std::vector<std::string> const& env,
                      int* status);
// In a child's output that holds weft's statistics (WEFT_STATS=1): the number
// after `key` ("most threads live"), or -1 when `key` is not there; the
// "(peak N)" of the line that starts with `key` ("stack bytes mapped", "heap
// bytes"), or -1 when the line is not there.
double number_after(std::string const& out, char const* key);
long long peak_on_line(std::string const& out, char const* key);

// ---------------------------------------------------------------------------
// Provenance
// ---------------------------------------------------------------------------

// Adds how the tool was built and what the machine was doing: "build_type",
// "context", "sanitize" (from the WEFT_BUILD_* definitions of
// bench/CMakeLists.txt, "" when absent), "cpus" (CPUs this process may use),
// "cpu_model" and "loadavg_1m" (the 1-minute load average when called: a
// value well above the CPU count means the figures were taken on a busy
// machine).
void add_provenance(json_object& rec);
// The CPU's "model name" from /proc/cpuinfo ("" if unknown).
std::string cpu_model();
// The commit of the source tree this tool was built from (WEFT_SOURCE_DIR),
// abbreviated, with "+dirty" when tracked files differ from it; "" when git or
// the tree is not there.
std::string source_commit();
// The current UTC time as "2026-01-31T12:00:00Z".
std::string utc_now_iso();
// A warning to print when the figures come from a build not meant for timing
// (not Release/RelWithDebInfo, or with sanitizers), else "".
std::string build_warning();

// ---------------------------------------------------------------------------
// Locating things
// ---------------------------------------------------------------------------

// Absolute path of the running executable ("" if unknown).
std::string self_exe();
// bench/report/make_report.py, searched for as docs/bench.md says ("" if not
// found).
std::string find_report_script();

}  // namespace weft::bench
