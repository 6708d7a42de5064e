// weft-bench pde: the parent (pde.cpp) and its MPI child (pde_child_mpi.cpp).
#pragma once

#include <string>
#include <vector>

namespace weft::bench::pde {

// Sweeps of a run on blocks of side `side`: work / side^2, within [2, max_sweeps].
int sweeps_for(long side, double work, int max_sweeps);

// calc(n) measured on the job (the paper's calculation phase, with every
// rank computing at once, so with the memory bandwidth and CPUs it shares):
// this rank's block of side `side`, `sweeps` sweeps with no messages, seconds
// per sweep, the median of `rounds` runs. The caller lines the ranks up first
// (a barrier); the children print it as "calc SIDE RANK SECONDS_PER_SWEEP".
double calc_on_job(int ranks, int rank, long side, int sweeps, int rounds);

// The child's body, one rank of `ranks`: for every side and version, a
// checked run (the result gathered on rank 0 and compared with the serial
// program's) and then `rounds` timed ones. Rank 0 prints
//   "check VERSION SIDE SWEEPS MAX_ABS_DIFF" and "pde VERSION SIDE ROUND SECONDS_PER_SWEEP";
// every rank prints its calc(n), "calc SIDE RANK SECONDS_PER_SWEEP".
int child(int ranks, std::vector<long> const& sides, std::vector<std::string> const& versions, int rounds,
          double work, int max_sweeps);

}  // namespace weft::bench::pde
