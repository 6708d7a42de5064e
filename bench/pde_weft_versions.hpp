// weft-bench pde: the weft versions on the running inproc job (pde_weft_versions.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "apps/pde/pde_weft.hpp"
#include "pde_model.hpp"
#include "pingpong.hpp"

namespace weft::bench::pde {

// alpha and beta of a message between a thread on node a and one on node b
// of the running job (a == b: same-node), as a solver's strip sees it: the
// time per step of an exchange (both threads send to the other, then
// receive), for every size, `rounds` rounds interleaved over the sizes,
// `iters` steps each, fitted by least squares. With compute_ns > 0, each
// thread computes that long between its send and its receive and the fit is
// of the step less compute_ns: when compute_ns covers the latency, what a
// message costs the CPU at each end (the model's overhead o).
pingpong::fit weft_message_fit(int a, int b, std::vector<std::size_t> const& sizes, int rounds, long iters,
                               std::uint64_t compute_ns = 0);
// Its measurements before the fit: per size, one time per round.
std::vector<pingpong::point> weft_message_points(int a, int b, std::vector<std::size_t> const& sizes, int rounds,
                                                 long iters, std::uint64_t compute_ns = 0);

// The grain exchange of the model's o (pde_model.hpp, overhead_at_grain):
// the computation of each thread between its sends and its receives, a
// relaxation of nx x ny points (grain_rect_of), and what a run of it
// measured: nanoseconds per step, and of them the computation's.
struct grain_rect {
    std::size_t nx = 0, ny = 0;
};
struct grain_step {
    double step_ns = 0, compute_ns = 0;
};

// The exchange on the running job: `threads` threads on node a and as many
// on node b, thread i of one exchanging with thread i of the other (each
// step: send `messages` messages of `bytes`, each through its own port,
// relax `rect`, receive as many), `iters` steps after a tenth as many
// unrecorded ones; the first pair's thread on a's times.
grain_step weft_grain_step(int a, int b, int threads, int messages, std::size_t bytes, long iters, grain_rect rect);

// The thread counts whose o the versions' models use (handcoded 1, threads2
// 2, threads4 4; blocking1 none), each once.
std::vector<int> grain_threads(std::vector<weft::apps::pde::weft_version> const& vs);

// The computation between a thread's sends and its receives in the version
// with `threads` threads per node on `nodes` blocks of side x side: a strip,
// side columns by side / threads rows, for the threads; handcoded's interior,
// n - e points, as side columns (threads 1).
grain_rect grain_rect_of(int nodes, long side, int threads);

// calc(n): seconds per sweep of every node relaxing its side x side block at
// once on the job's workers, with no messages (a weft thread per node; the
// wall time from a barrier of the nodes, their grids built, to the last end,
// over `sweeps` sweeps, as a version's run is timed). It
// carries what the nodes share: CPUs (more nodes than workers) and caches and
// memory bandwidth.
double weft_calc_time(int nodes, long side, int sweeps);

// The model's view of version with `threads` threads per node on `nodes`
// blocks of side x side: the busiest thread's messages (pde_model.hpp).
model_shape weft_shape(int nodes, long side, int threads);

// Eq. (1), (2) or (3) for the version; with `overlap`, their form with one
// exchange's messages in flight at once (pde_model.hpp).
double weft_model(weft::apps::pde::weft_version v, model_params const& m, model_shape const& s, bool overlap = false);

// One run of the version on the running job's nodes (blocks of side x side):
// seconds per sweep of the slowest node. With check, the result is compared
// with the serial program's and a difference ends the experiment.
double weft_run(int nodes, long side, weft::apps::pde::weft_version v, int sweeps, bool check);

// weft-bench pde --mpi-child --child-transport mpi: one rank of `ranks` of a
// job that runs the weft versions over weft's mpi transport (one node per
// rank, one worker each; apps/pde run_distributed). First the model's inputs,
// measured on this job with weft_message_fit's exchange: remote between
// threads of ranks 0 and 1 (their ports found through the naming service),
// same-node between two threads of rank 0, each over kFitSizes, and the
// remote overhead (the exchange with kOverheadComputeNs of computation between
// send and receive); rank 0 prints their samples, "fitpoint remote ...",
// "fitpoint overhead ..." and "fitpoint local ..." (print_points). Then, as the raw MPI child
// (pde_experiment.hpp, child), for every side each version's checked run and `rounds`
// rounds of calc(n), the grain exchanges between ranks 0 and 1 (one per
// thread count of grain_threads, relaxing grain_rect_of between sends and
// receives; rank 0 prints "grain SIDE THREADS COMPUTE_NS STEP_NS", both per
// step) and the versions' timed runs; rank 0 prints the
// "check" and "pde" lines, the time the slowest node's.
int weft_mpi_child(int ranks, std::vector<long> const& sides, std::vector<std::string> const& versions, int rounds,
                   double work, int max_sweeps);

}  // namespace weft::bench::pde
