// weft::detail::net — recv_from: a receive in slices between the transport's
// looks at the nodes it waits for (peer_wait.hpp).
#include "net/peer_wait.hpp"

#include <cerrno>

#include "core/wait.hpp"
#include "net/port.hpp"

namespace weft::detail::net {

int recv_from(std::span<const std::uint32_t> from, weft_port_id_t port, void* buf, std::size_t cap,
              weft_net_status_t* st, std::int64_t timeout_ns) {
    job* j = current_job();
    if (j == nullptr || timeout_ns == 0) return weft_net_recv(port, buf, cap, st, timeout_ns);
    // The next look: the earliest of the nodes' (0: the transport cannot tell).
    std::int64_t look_ns = 0;
    for (std::uint32_t n : from) {
        std::int64_t t = j->tp->first_look(n);
        if (t != 0 && (look_ns == 0 || t < look_ns)) look_ns = t;
    }
    if (look_ns == 0) return weft_net_recv(port, buf, cap, st, timeout_ns);
    const std::int64_t deadline = timeout_ns > 0 ? monotonic_ns() + timeout_ns : 0;
    for (;;) {
        const bool caller_s = deadline != 0 && deadline <= look_ns;  // the caller's timeout comes first
        std::int64_t left = (caller_s ? deadline : look_ns) - monotonic_ns();
        int rc = weft_net_recv(port, buf, cap, st, left > 0 ? left : 0);
        if (rc != ETIMEDOUT || caller_s) return rc;
        look_ns = 0;
        for (std::uint32_t n : from) {
            std::int64_t next = 0;
            if (int d = j->tp->look(n, &next); d != 0) return d;
            if (next != 0 && (look_ns == 0 || next < look_ns)) look_ns = next;
        }
    }
}

}  // namespace weft::detail::net
