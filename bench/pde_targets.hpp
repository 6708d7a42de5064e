// weft-bench pde's targets (Felten & McNamee; issue text in docs/bench.md, "pde"):
// from the smallest n at which weft's model predicts that threads beat one
// blocking thread, the better of threads2 and threads4 within 10% of the
// hand-coded nonblocking version; at every n, every version within 20% of
// weft's model. Judged per transport (inproc with injected latency; mpi with
// at most one rank per CPU) and node count.
#pragma once

#include <string>
#include <vector>

#include "harness.hpp"

namespace weft::bench::pde {

// One row of a weft version as pde_experiment.cpp emits it, with its rounds' times
// (taken in the same rounds as the other versions of its job).
struct target_point {
    std::string transport;  // "inproc" or "mpi"
    long ranks = 0;
    long n = 0;
    std::string version;  // blocking1, threads2, threads4, handcoded
    double time_s = 0;
    double model_overlap_s = 0;
    std::vector<double> round_times;
};

// Emits {"experiment":"pde","target":NAME,"transport","ranks","value","bound","met",...}
// rows, and a table of them.
void emit_targets(context& ctx, std::vector<target_point> const& points, int cpus);

}  // namespace weft::bench::pde
