// weft-bench pde: the parent (pde.cpp) and its MPI child (pde_child_mpi.cpp).
#pragma once

#include <string>
#include <vector>

namespace weft::bench::pde {

// Sweeps of a run on blocks of side `side`: work / side^2, within [2, max_sweeps].
int sweeps_for(long side, double work, int max_sweeps);

// The child's body, one rank of `ranks`: for every side and version, a
// checked run (the result gathered on rank 0 and compared with the serial
// program's) and then `rounds` timed ones. Rank 0 prints
//   "check VERSION SIDE SWEEPS MAX_ABS_DIFF" and "pde VERSION SIDE ROUND SECONDS_PER_SWEEP".
int child(int ranks, std::vector<long> const& sides, std::vector<std::string> const& versions, int rounds,
          double work, int max_sweeps);

}  // namespace weft::bench::pde
