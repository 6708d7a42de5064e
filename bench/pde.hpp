// weft-bench pde: the parent (pde.cpp) and its MPI child (pde_child_mpi.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace weft::bench::pde {

// The message sizes of the model's fits (alpha and beta, the overhead o):
// up to 2 KiB, below Open MPI's shared-memory eager limit (4 KiB with its
// header), where a message's cost is a straight line in its length. Above it
// a message goes by rendezvous and costs a few us more than the line says,
// a few per cent of the computation of the blocks that send such edges (side
// 512 and up). And the computation between send and receive of the overhead
// exchange: above the latency at every size, so that the message is in when
// its receive starts.
inline std::vector<std::size_t> const kFitSizes = {8, 256, 1024, 2048};
inline constexpr std::uint64_t kOverheadComputeNs = 20000;

// Sweeps of a run on blocks of side `side`: work / side^2, within [2, max_sweeps].
int sweeps_for(long side, double work, int max_sweeps);

// calc(n) measured on the job (the paper's calculation phase, with every
// rank computing at once, so with the memory bandwidth and CPUs it shares):
// this rank's block of side `side`, `sweeps` sweeps with no messages, seconds
// per sweep. The caller lines the ranks up first (a barrier); the children
// measure it in every round, before the round's versions, and print it as
// "calc SIDE RANK ROUND SECONDS_PER_SWEEP".
double calc_on_job(int ranks, int rank, long side, int sweeps);

// The child's body, one rank of `ranks`: first, on ranks 0 and 1, the
// exchanges of the model's inputs over plain MPI (both send, then both
// receive; and the same with kOverheadComputeNs of computation between), rank
// 0 printing "fit remote ALPHA_NS BETA_NS_PER_BYTE" and "fit overhead O_NS
// O_BETA_NS_PER_BYTE". Then for every side, each version's checked run (the
// result gathered on rank 0 and compared with the serial program's), and
// `rounds` rounds of calc(n) and a timed run of each version. Rank 0 prints
//   "check VERSION SIDE SWEEPS MAX_ABS_DIFF" and "pde VERSION SIDE ROUND SECONDS_PER_SWEEP";
// every rank prints its calc(n) of each round, "calc SIDE RANK ROUND SECONDS_PER_SWEEP".
int child(int ranks, std::vector<long> const& sides, std::vector<std::string> const& versions, int rounds,
          double work, int max_sweeps);

}  // namespace weft::bench::pde
