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
//   - an MPI transport adds a second implementation: send ships the header
//     and the bytes to the destination rank, whose side calls port_put.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "net/message.hpp"
#include "weft/weft.h"

namespace weft::detail::net {

class transport {
public:
    virtual ~transport() = default;
    // Its name, as WEFT_NET spells it.
    virtual const char* name() const = 0;
    // Delivers a message from the calling thread's node to port `to` on
    // another node; returns as weft_net_send does (blocking the calling
    // thread while the destination's buffer is full, if the transport can
    // tell; 0 once the message is in that buffer).
    [[nodiscard]] virtual int send(const weft_port_id_t& to, msg_header h, const void* buf, std::size_t len) = 0;
};

struct transport_config {
    std::string name;               // a name transport_names() lists
    std::int64_t alpha_ns = 0;      // inproc: injected delay per message to another node
    std::int64_t beta_ns_per_byte = 0;
};

// The transports this build has, for messages: "inproc".
const char* transport_names();
// The transport cfg.name names, or null if there is none by that name.
std::unique_ptr<transport> make_transport(const transport_config& cfg);

}  // namespace weft::detail::net
