// weft-bench pde: the parent (pde_experiment.cpp) and its MPI child (pde_child_mpi.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "pingpong.hpp"

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

// The remote inputs of the model, as the MPI children measure them between
// ranks 0 and 1: for every size of kFitSizes, the time per step of the plain
// exchange (both send, then both receive: the latency) and of the same with
// kOverheadComputeNs of computation between send and receive, less that
// computation (the overhead o). `step(bytes, compute_ns)` runs one exchange
// and returns its time per step; the rounds are interleaved over the sizes.
struct remote_points {
    std::vector<pingpong::point> latency, overhead;
};
remote_points measure_remote(int rounds, std::function<double(std::size_t bytes, std::uint64_t compute_ns)> const& step);

// A child's measurements of one of the model's fits (remote, overhead,
// local), one line per size and round, "fitpoint NAME BYTES NS": the parent
// pools them over the rounds' jobs, takes each size's median and fits the
// line (so that one disturbed exchange moves one sample, not a job's fit).
void print_points(char const* name, std::vector<pingpong::point> const& pts);

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
// 0 printing their samples, "fitpoint remote ..." and "fitpoint overhead ..."
// (print_points). Then for every side, each version's checked run (the
// result gathered on rank 0 and compared with the serial program's), and
// `rounds` rounds of calc(n) and a timed run of each version. Rank 0 prints
//   "check VERSION SIDE SWEEPS MAX_ABS_DIFF" and "pde VERSION SIDE ROUND SECONDS_PER_SWEEP";
// every rank prints its calc(n) of each round, "calc SIDE RANK ROUND SECONDS_PER_SWEEP".
int child(int ranks, std::vector<long> const& sides, std::vector<std::string> const& versions, int rounds,
          double work, int max_sweeps);

}  // namespace weft::bench::pde
