// weft::detail::net — the transport seam: how a message reaches a port on
// another node.
//
// The port code (port.cpp) owns ports, buffers and every wait; it hands a
// message for another node to the job's transport and nothing else. A
// transport delivers the message into the destination port through
// port_put (port.hpp) on the destination's side, so a transport sees bytes
// and port IDs, never a port's insides:
//   - inproc (inproc.cpp): every node is in this process; send calls port_put
//     directly, after stamping the injected delay alpha + beta * bytes as the
//     message's ready time;
//   - a protocol transport (protocol_transport.cpp) over a link (link.hpp):
//     weft's wire protocol (protocol.hpp) ships a frame (wire.hpp) to the
//     destination rank within its credit, and that rank's progress step, run
//     by the scheduler (core/progress.hpp), decodes it and calls
//     port_try_put, or hands it to a delivery thread that waits for room. The
//     links: mpi (mpi.cpp, built when MPI is: one node per rank;
//     docs/design/mpi.md) and faulty (faulty.cpp: every node in this process,
//     with injected faults, for tests).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/registry.hpp"
#include "core/tunables.hpp"
#include "net/message.hpp"
#include "weft/weft.h"

namespace weft::detail::net {

struct job;

class transport {
public:
    virtual ~transport() = default;
    // The job's nodes when the transport decides them (mpi: the
    // communicator's size), or 0: as configured.
    virtual std::uint32_t nodes() const { return 0; }
    // The node of every thread of this process when it holds one node only
    // (mpi: its rank), or -1 when it holds them all.
    virtual std::int32_t home() const { return -1; }
    // Called by weft_net_init once the job is published, on the calling
    // thread: 0, or an errno (the job is then taken down again).
    [[nodiscard]] virtual int start(job&) { return 0; }
    // Called by weft_net_init after start, once this process has created its
    // nodes' service ports (services.cpp), on the calling thread: returns when
    // every node of the job has (mpi: a nonblocking barrier that blocks only
    // the calling thread), so that no node sends to another's barrier or
    // naming port before it exists. 0, or an errno.
    [[nodiscard]] virtual int all_started(job&) { return 0; }
    // Called by weft_net_finalize before the ports go, on the calling thread,
    // once no thread waits on a port: ends the transport's traffic (mpi: with
    // every other rank, collectively).
    virtual void stop(job&) {}
    // Its name, as WEFT_NET spells it.
    virtual const char* name() const = 0;
    // Delivers a message from the calling thread's node to port `to` on
    // another node; returns as weft_net_send does (blocking the calling
    // thread while the destination's buffer is full, if the transport can
    // tell; 0 once the message is in that buffer).
    [[nodiscard]] virtual int send(const weft_port_id_t& to, msg_header h, const void* buf, std::size_t len) = 0;
    // Liveness, for a thread that waits outside the transport for a message
    // from another node (an RPC reply, a barrier's release: peer_wait.hpp):
    // when to look at `node` first (absolute CLOCK_MONOTONIC ns), or 0 if the
    // transport cannot tell a dead node (inproc: every node is this process).
    virtual std::int64_t first_look(std::uint32_t /*node*/) const { return 0; }
    // The look, at that time: 0 and when to look next in *next_ns (not 0 for a
    // node whose first_look was not), or the error of a node declared dead
    // (mpi: EHOSTDOWN), which every send to it returns from then on.
    [[nodiscard]] virtual int look(std::uint32_t /*node*/, std::int64_t* next_ns) {
        *next_ns = 0;
        return 0;
    }
    // Port `to` of this process dropped a message of thread `sender` (its
    // sender token) of `node`, a node of another process: tell that thread
    // (its waiting receive returns ECONNABORTED, port.cpp note_loss). Called
    // with no port locked.
    virtual void report_loss(std::uint32_t /*node*/, std::uint64_t /*sender*/, const weft_port_id_t& /*to*/) {}
};

struct transport_def;

struct transport_config {
    const transport_def* def = nullptr;  // the registered transport WEFT_NET names
    std::uint32_t nodes = 0;             // the configured nodes (weft_net_config_t.nodes), 0: not set
    std::int64_t alpha_ns = 0;           // inproc: injected delay per message to another node
    std::int64_t beta_ns_per_byte = 0;
};

// A transport is one file in src/net/ that defines a `transport_def` and
// registers it with WEFT_REGISTER (core/registry.hpp); WEFT_NET (and
// weft_net_config_t.transport) names it. mpi.cpp is built only with MPI, so
// a build without MPI has no mpi to name.
struct transport_def {
    static constexpr plug_kind kind{"transport", "src/net/transport.hpp"};
    // As WEFT_NET spells it: the one spelling of the name. transport::name()
    // (and a protocol transport's link::name()) return it, taken from
    // transport_config::def by make.
    const char* name = nullptr;
    const char* description = nullptr;
    // Called by weft_net_init on the calling thread, outside every lock:
    // makes the transport for cfg into *out. 0, or EINVAL (a message on
    // stderr says why: mpi could not start), or ENOMEM.
    int (*make)(const transport_config& cfg, std::unique_ptr<transport>* out) = nullptr;
};

// What a definition gets wrong against this contract (core/registry.hpp).
inline const char* contract_violation(const transport_def& def) {
    return def.make == nullptr ? "make is required" : nullptr;
}

// A link of the caller's own for the next weft_net_init (fuzz/net_frames.cpp
// plays a peer rank through one): that job's transport is the protocol over
// it, named `name` (a static string), with the peer timeout off, whatever
// WEFT_NET says; that init takes it, once. Nothing else sets it, so a program
// never meets it.
class link;
void use_link_once(std::unique_ptr<link> l, const char* name);
// weft_net_init's first look: true and *rc (0, or ENOMEM) if a link waits
// from use_link_once (it is taken into *out).
bool take_link_once(std::unique_ptr<transport>* out, int* rc);

// The faults the next WEFT_NET=faulty job injects (faulty.cpp): a test sets
// them before weft_net_init; a program run with WEFT_NET=faulty gets the
// defaults (docs/env.md).
struct faulty_plan {
    std::uint64_t seed = 1;         // of the delays
    std::int64_t delay_min_ns = 0;  // each frame's and bulk's delay: uniform in [min, max]
    std::int64_t delay_max_ns = 20'000;
    int dies = -1;  // a rank that dies after taking dies_after (>= 1) frames; -1: none
    std::uint64_t dies_after = 0;
    // Not a fault: how long the protocol holds a long message's header for a
    // receiver (tun::net_receiver_wait_ns), which a test raises so that a
    // receiver it starts later certainly comes in time.
    std::int64_t receiver_wait_ns = tun::net_receiver_wait_ns;
};
void set_faulty_plan(const faulty_plan& p);
// Faults of the running faulty job's rank (0, or EINVAL: no faulty job, or
// no such rank): it dies now (it takes nothing more, and nothing it sent
// and nobody took arrives); it stops answering (nothing to or from it moves);
// it answers again (everything held moves, in order).
[[nodiscard]] int faulty_kill(int rank);
// What the running (or last) faulty job's link saw of the protocol's data
// frames: how many, and the most in flight (posted, not yet taken by the
// receiver) from one rank to one other, in frames and in window bytes (a
// frame's charge: its length, at most the window). The protocol's credit
// bounds both by its window. How many the receivers' protocols took. And how
// its bulks were received: straight into a waiting receiver's buffer
// (try_bulk_recv), or into a staging buffer.
struct faulty_counts {
    std::uint64_t data_frames = 0;
    std::uint64_t data_taken = 0;
    std::uint64_t max_in_flight_msgs = 0;
    std::uint64_t max_in_flight_bytes = 0;
    std::uint64_t bulks_direct = 0;
    std::uint64_t bulks_staged = 0;
};
faulty_counts faulty_observed();
[[nodiscard]] int faulty_stall(int rank);
[[nodiscard]] int faulty_resume(int rank);

}  // namespace weft::detail::net
