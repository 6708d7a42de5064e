// weft::detail::net — a receive whose message can only come from other nodes
// that are named: an RPC caller's reply (from the server's node), a barrier's
// release (from node 0) or arrivals (from the nodes not yet arrived). Besides
// the caller's own timeout (ETIMEDOUT) it ends when the transport declares
// one of those nodes dead, with the transport's error (mpi: EHOSTDOWN;
// docs/design/mpi.md, "A rank that dies"), so that a caller that waits
// without limit for a dead node does not wait for ever. Under inproc, and for
// the caller's own node, it is weft_net_recv.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "weft/weft.h"

namespace weft::detail::net {

// weft_net_recv(port, buf, cap, st, timeout_ns), that also ends with the
// transport's error once a node of `from` is declared dead.
[[nodiscard]] int recv_from(std::span<const std::uint32_t> from, weft_port_id_t port, void* buf, std::size_t cap,
                            weft_net_status_t* st, std::int64_t timeout_ns);

}  // namespace weft::detail::net
