// The PDE solver's versions on weft's message passing (include/weft/weft.h,
// "Message passing"; docs/design/pde.md): the programs of Felten & McNamee,
// "Improving the performance of message-passing applications by
// multithreading" (§4, §5), written against the port API only, so that they
// run unchanged over any transport. pde.hpp has the problem, the node-level
// decomposition and the serial reference.
//
// Versions (T = threads per node):
//   blocking1  T = 1: one blocking thread per node: send the block's edges,
//              receive the halos, update the block (the paper's simple
//              blocking program, model T_b, eq. 1).
//   threads2   T = 2 and threads4, T = 4: the node's block cut into T strips
//   threads4   of whole rows, one weft thread per strip (the paper's virtual
//              processors), each running the blocking1 program on its strip:
//              it sends its edges and blocks on its own halo messages, so one
//              thread's communication overlaps another's computation (model
//              T_2, eq. 2, for T = 2). The strips of one node exchange their
//              shared edge rows as same-node messages, as the paper's threads
//              do (its "one local message").
//   handcoded  T = 1: sends the edges (a send returns once the message is
//              buffered), updates the points whose stencil reads no
//              neighbour's halo, then receives the halos and updates the edge
//              points (the paper's "optimal handcoded" program, model T_opt,
//              eq. 3).
// Every point is computed by relax_point, so every version's result equals
// the serial one bit for bit.
//
// A run has three steps, each on every node of the job:
//   1. make_node_ports: a thread on node j creates node j's receive ports
//      (one per halo side of each of its strips) and returns their IDs;
//   2. the directory (every node's ports) reaches every node, and no node
//      sends before every port exists;
//   3. run_node: node j's strips run `sweeps` sweeps and node j sends its
//      result to the gather port on node 0 (when asked).
// run_inproc does all three when every node of the job is in this process
// (step 2 by shared memory: it joins every node's step 1 first);
// run_distributed when this process holds one node (the mpi transport: one
// node per rank; step 2 by the naming service).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "apps/pde/pde.hpp"
#include "weft/weft.h"

namespace weft::apps::pde {

enum class weft_version { blocking1, threads2, threads4, handcoded };
char const* weft_version_name(weft_version v) noexcept;
// The version named s; false when s names none.
bool parse_weft_version(std::string const& s, weft_version& v) noexcept;
// Weft threads per node: 1, 2, 4, 1.
int threads_per_node(weft_version v) noexcept;

// The sides of a strip's halo, named by where the halo lies.
enum side : int { west = 0, east = 1, south = 2, north = 3 };

// One strip of a node's block: rows [y0, y0 + ny) of the block (block-local),
// all its columns. Strip i of T is near_equal_run(block ny, T, i).
struct strip {
    std::size_t y0 = 0, ny = 0;
};
// Strip `i` of `threads` of block b. Throws std::invalid_argument when the
// block has fewer rows than threads (a strip needs at least one).
strip strip_of(block const& b, int threads, int i);

// One node's receive ports: for strip i and side s, ports[i * 4 + s] (a side
// with no neighbour still has a port; nothing is ever sent to it), and on
// node 0 the gather port.
struct node_ports {
    std::vector<weft_port_id_t> halo;
    weft_port_id_t gather{};
    bool has_gather = false;
};

// A problem: the global grid, the version and its sweeps.
struct problem {
    std::size_t gnx = 0, gny = 0;
    weft_version version = weft_version::blocking1;
    int sweeps = 1;
};

// Step 1, on a thread of node `node`: creates that node's ports for p (and
// the gather port if node is 0). Throws weft::error on a port failure,
// std::invalid_argument as block_of / strip_of do.
node_ports make_node_ports(problem const& p, int node);
// Destroys them (on a thread of the same node).
void destroy_node_ports(node_ports const& ports);

// Step 3, on a thread of node `node` once every node's ports exist
// (directory[j] = node j's): builds node `node`'s strips (their grids
// allocated and initialised), calls ready(), which returns once every node of
// the job has built its strips (a barrier), runs the strips (the caller runs
// strip 0, weft threads on the same node the others) and returns the node's
// seconds per sweep, from its first send to the end of its last update: a
// node's time never includes a neighbour still building its grids. With
// `gather`, node `node` then sends its points to node 0's gather port and
// node 0 returns the global interior (gnx * gny values, row-major) in
// `result`; other nodes leave `result` empty. A failed send or receive (a
// bug, or a port gone under the run) prints what failed and aborts the
// process, as the MPI versions' MPI_Abort does: the other nodes would
// otherwise wait for its edges for ever.
double run_node(problem const& p, int node, std::vector<node_ports> const& directory, bool gather,
                std::vector<double>* result, std::function<void()> const& ready);

// Steps 1-3 on every node of the running job, all of which must be in this
// process (the inproc transport): one weft thread per node for each step.
// Returns the slowest node's seconds per sweep; with `gather`, fills
// `result` with the global interior. Throws std::invalid_argument when no
// job runs or the grid cannot be split so.
double run_inproc(problem const& p, bool gather, std::vector<double>* result);

// How long run_distributed waits for a name by default: 30 s.
inline constexpr std::int64_t kLookupTimeoutNs = 30'000'000'000;

// Steps 1-3 for the one node of the job that this process holds,
// weft_net_self_node() (the mpi transport, one node per MPI rank): one thread
// of every node calls it with the same problem and `run`, a name unique to
// this run among the job's runs (e.g. a counter every rank advances alike).
// Step 2 by the naming service: the node registers each of its ports as
// "pde/<run>/<node>/<i>" (i: the index in node_ports::halo), node 0 also its
// gather port "pde/<run>/gather" and a port for the nodes' times
// "pde/<run>/times"; the node then looks up its neighbours' ports and node
// 0's (a lookup returns once the name exists, so once the port does), waiting
// at most lookup_timeout_ns for each, and runs run_node with a
// weft_net_barrier as its ready(), so that every node starts its sweeps
// together. After run_node every node sends its
// seconds per sweep to node 0 and unregisters its names (every lookup was
// done before the first barrier; after the final one node 0 may end the job,
// and with it the naming service), and after a final weft_net_barrier (no
// neighbour sends to its ports any more) destroys its ports. Returns on node
// 0 the slowest node's seconds per sweep (this node's on the others); with
// `gather`, node 0 fills `result` as run_inproc does. Runs on a weft thread
// of this node.
// Throws std::invalid_argument when no job runs, `run` is empty or the grid
// cannot be split so (every node checks every node's block, so all refuse
// alike before any port exists); std::runtime_error naming the name when a
// lookup times out (the node's names and ports are gone then; the other
// nodes wait in the barrier for it, so the caller ends the job: mpiexec does
// when a rank exits with an error); weft::error on a port or naming failure.
double run_distributed(problem const& p, std::string const& run, bool gather, std::vector<double>* result,
                       std::int64_t lookup_timeout_ns = kLookupTimeoutNs);

}  // namespace weft::apps::pde
