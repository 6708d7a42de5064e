// Raw MPI ping-pong between two ranks: the baseline of weft-bench msg, and the
// alpha (per-message) and beta (per-byte) costs of weft-bench pde's model.
//
// Rank 0 sends `bytes` to rank 1 with MPI_Send, which sends them back; a round
// times `iters` such round trips (after a tenth as many unrecorded ones) and
// records the half round trip, total / (2 * iters). The parent (pingpong.cpp)
// starts the two ranks (mpi_launch.hpp), the child (pingpong_mpi.cpp) runs the
// rounds and prints one line per size and round: "pingpong BYTES ROUND NS".
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace weft::bench::pingpong {

struct point {
    std::size_t bytes = 0;
    std::vector<double> half_rtt_ns;  // one per round
};

// Round trips per round for a message of `bytes`: `iters` up to 4 KiB, then
// halved at every doubling (at least 10), so that every size takes about as
// long as the 4 KiB one.
long iters_for(std::size_t bytes, long iters);

// Parses "8,64,1K,1M" (K and M are x1024, x1024^2) into byte counts in
// [1, 64 MiB]; throws usage_error naming `option` and the bad item.
std::vector<std::size_t> parse_sizes(std::string const& option, std::vector<std::string> const& items);

// Runs the ping-pong job (mpiexec -n 2 this executable `experiment`
// --mpi-child ... extra) and returns the measurements in the order of `sizes`;
// `what` names the job in errors.
std::vector<point> measure(std::string const& experiment, std::vector<std::size_t> const& sizes, int rounds,
                           long iters, std::vector<std::string> const& extra = {},
                           char const* what = "the raw MPI ping-pong");

// The child's body: arguments as measure passes them (rank 0 prints).
int child(std::vector<std::size_t> const& sizes, int rounds, long iters);

// The same ping-pong between weft threads on two nodes, weft_net_send and
// weft_net_recv, one worker per node (pingpong_weft.cpp). `transport`
// "mpi": a child of an MPI job (its two ranks are the nodes; weft initialises
// MPI), rank 0 prints the lines `child` prints. "inproc": both nodes in this
// process; returns the points.
int weft_child(std::vector<std::size_t> const& sizes, int rounds, long iters);
std::vector<point> weft_inproc(std::vector<std::size_t> const& sizes, int rounds, long iters);
// A null RPC (weft::rpc::call) from rank 0 to a one-thread server on rank 1
// over weft's mpi transport, one worker per rank (pingpong_weft.cpp): the
// child of an MPI job; rank 0 prints "rpc ROUND NS", NS the mean round trip
// of the round's `iters` calls.
int rpc_child(int rounds, long iters);

// Least-squares fit of latency = alpha + beta * bytes over the points with
// bytes <= max_bytes (their median latencies).
struct fit {
    double alpha_ns = 0;
    double beta_ns_per_byte = 0;
    std::size_t points = 0;
};
fit fit_alpha_beta(std::vector<point> const& points, std::size_t max_bytes);

}  // namespace weft::bench::pingpong
