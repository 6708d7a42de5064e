// weft-bench harness — provenance: how the tool was built and what the machine was doing.
#pragma once

#include <string>

#include "harness/json.hpp"

namespace weft::bench {

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

}  // namespace weft::bench
