// weft::detail — reading the WEFT_* environment and weft_config_t into settings.
//
// One rule for every variable (docs/env.md, "How a value is read"):
//   1. An unset variable and an empty one mean the same: the default.
//   2. A value is taken exactly as written: nothing is trimmed, and a number,
//      size or keyword with a space in it (before, inside or after) is invalid.
//   3. Keywords (policy names, on/off words, deadlock actions) and size
//      suffixes are case-insensitive.
//   4. An integer is decimal digits only (no sign, no 0x).
//   5. A size is an integer with an optional suffix K, KiB, M, MiB, G or GiB
//      (powers of 1024); no other suffix.
//   6. A bad value makes weft_init return EINVAL after one stderr line:
//        weft: NAME='VALUE' is invalid: expected VALID
// Precedence: a weft_config_t field that is set (non-zero, non-NULL) wins over
// its variable, which is then not read; a field gets the same checks.
// Empty means unset as for the POSIX locale variables (LC_ALL= is treated as
// unset), so `WEFT_TRACE= prog` turns a trace off the way `unset` does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "weft/weft.h"

namespace weft::detail {

struct settings {
    int workers = 0;             // resolved: >= 1
    std::string sched;           // a registered policy name
    std::size_t stack_size = 0;  // resolved default stack size, bytes
    std::size_t quota = 0;       // resolved WEFT_QUOTA, bytes (dfs memory quota K)
    bool stats = false;
    bool measure = false;        // work/span measurement (stats, cfg.measure or a trace imply it)
    bool deadlock_abort = true;  // WEFT_DEADLOCK: report and abort (true) or wait (false)
    bool ws_yield = true;        // WEFT_WS_YIELD: an idle ws worker yields between failed steal rounds
    std::string trace_path;      // WEFT_TRACE: empty = no trace
    std::string adapt;           // WEFT_ADAPT: "off" or a registered probe's name (adapt/probe.hpp)
    bool adapt_explicit = false; // asked for (field or variable), not the default
    int adapt_interval_ms = 0;   // WEFT_ADAPT_INTERVAL: 0 = the mode's default
    std::string budget_name;     // WEFT_BUDGET: a shm name, "off", or empty = the per-user default
    // The message-passing transport's (src/net/mpi.cpp, src/net/protocol_liveness.cpp), validated here so that
    // a bad value is refused whatever the transport, even in a build without MPI.
    bool mpi_thread_multiple = false;  // WEFT_MPI_THREAD: multiple (true) or funneled
    std::int64_t peer_timeout_ns = 0;  // WEFT_NET_PEER_TIMEOUT: 0 = off
};

// WEFT_MPI_THREAD: *multiple true for "multiple", false for "funneled" or
// unset; EINVAL after the rule-6 line.
[[nodiscard]] int read_mpi_thread(bool* multiple);
// WEFT_NET_PEER_TIMEOUT in ns: the default (30 s) when unset, 0 for "off";
// EINVAL after the rule-6 line.
[[nodiscard]] int read_peer_timeout(std::int64_t* ns);

// Resolves every setting: the set field, else the variable, else the default.
// Returns 0, or EINVAL after printing the rule-6 line for the first bad
// variable or field.
[[nodiscard]] int read_settings(const weft_config_t* cfg, settings* out);

// The number of CPUs this process may use: the affinity mask, capped by the
// cgroup (v2 cpu.max, v1 cfs quota) CPU quota, rounded up; at least 1.
int usable_cpus();

// Rule 1: the variable's value, or null if it is unset or empty.
const char* env_value(const char* name);
// Rule 3: keywords compare without case.
bool iequals(std::string_view a, std::string_view b);
// Rule 6: prints "weft: WHAT='VALUE' is invalid: expected VALID" to stderr.
void complain(const char* what, std::string_view value, const std::string& valid);

// Rule 4's integer: false on anything else or above max.
bool parse_count(std::string_view text, unsigned long long max, unsigned long long* out);
// Rule 5's size, in bytes: false on anything else or overflow.
bool parse_bytes(std::string_view text, std::size_t* out);
// "K, KiB, M, MiB, G or GiB": the suffixes parse_bytes accepts, for messages.
std::string byte_suffixes();

}  // namespace weft::detail
