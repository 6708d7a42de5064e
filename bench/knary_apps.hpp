// The applications weft-bench knary and cycler run beside knary, as Arora,
// Blumofe & Plaxton run lu and heat (Figures 25 and 28): weft's fork/join LU
// (apps/lu/lu.hpp, fork_join) and heat stencil (apps/heat/heat.hpp), as
// workloads whose T1 and Tinf the runtime's profiler measures like knary's.
// Each checks its result against the serial version's after every run.
#pragma once

#include <string>
#include <vector>

#include "harness.hpp"
#include "knary_program.hpp"

namespace weft::bench::knary {

#if WEFT_BENCH_HAVE_APPS
// LU of an n x n matrix ("lu n=N"); heat on an n x n grid for `steps` steps
// ("heat n=N steps=S"). The serial reference is computed here, once.
workload lu_workload(int n);
workload heat_workload(int n, int steps);
#endif

#if WEFT_BENCH_HAVE_APPS
// --lu N, --heat N, --heat-steps S (0 leaves the application out).
std::vector<option_spec> opt_apps(long lu_n, long heat_n, long heat_steps);
// The workloads the options ask for.
std::vector<workload> parse_apps(std::string const& command, options const& o);
#else
// Built without apps/ (WEFT_BUILD_APPS=OFF): knary alone.
inline std::vector<option_spec> opt_apps(long, long, long) { return {}; }
inline std::vector<workload> parse_apps(std::string const&, options const&) { return {}; }
#endif

}  // namespace weft::bench::knary
