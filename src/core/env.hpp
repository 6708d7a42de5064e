// weft::detail — reading the WEFT_* environment and weft_config_t into settings.
#pragma once

#include <cstddef>
#include <string>

#include "weft/weft.h"

namespace weft::detail {

struct settings {
    int workers = 0;            // resolved: >= 1
    std::string sched;          // a registered policy name
    std::size_t stack_size = 0; // resolved default stack size, bytes
    std::size_t quota = 0;      // resolved WEFT_QUOTA, bytes (dfs memory quota K)
    bool stats = false;
    bool measure = false;       // work/span measurement (stats, cfg.measure or a trace imply it)
    std::string trace_path;     // WEFT_TRACE: empty = no trace
};

// Resolves every setting: cfg field if non-zero, else the WEFT_* variable, else
// the default. Returns 0, or EINVAL after printing to stderr a message that
// names the bad variable (or field), its value, and the valid values.
[[nodiscard]] int read_settings(const weft_config_t* cfg, settings* out);

// The number of CPUs this process may use: the affinity mask, capped by the
// cgroup (v2 cpu.max, v1 cfs quota) CPU quota, rounded up; at least 1.
int usable_cpus();

// Parses a byte size: digits with an optional K, KiB, M, MiB, G, GiB suffix
// (case-insensitive, powers of 1024). False on anything else or overflow.
bool parse_bytes(const char* text, std::size_t* out);

}  // namespace weft::detail
