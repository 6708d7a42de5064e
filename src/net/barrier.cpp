// weft_net_barrier: the job-wide barrier, on one port per node (index 0,
// services.cpp). One thread per node takes part in a round; node 0 gathers:
//   node k != 0: send "arrived" to node 0's barrier port, then receive the
//                release on its own;
//   node 0:      receive N-1 arrivals on its port, then send every other node
//                its release.
// A node cannot arrive for round r+1 before node 0 released it from round r,
// and node 0 releases only once it has taken all of round r's arrivals, so
// node 0's port never holds arrivals of two rounds and no message needs a
// round number to be told apart. 2(N-1) messages a round, node 0's latency
// linear in N: the right shape for the tens of nodes weft's jobs have; a
// tree would cut the latency to log N at the same message count.
#include <algorithm>
#include <cerrno>
#include <memory>
#include <new>
#include <vector>

#include "base/primitives.hpp"
#include "net/peer_wait.hpp"
#include "net/port.hpp"
#include "net/rpc.hpp"

namespace weft::detail::net {
namespace {

constexpr std::int32_t kArriveTag = 0x42415252;   // "BARR"
constexpr std::int32_t kReleaseTag = 0x42524C53;  // "BRLS"

// Per node: whether a thread of it is in the barrier (EBUSY for a second).
std::unique_ptr<atomic<bool>[]> g_busy;

std::uint32_t self_node() { return std::uint32_t(weft_net_self_node()); }

// recv_from, except that a loss reported to the caller (ECONNABORTED: a
// message it sent before the barrier was dropped) does not end the barrier:
// it is kept in *lost and reported again once the barrier is done.
int recv_barrier(std::span<const std::uint32_t> from, weft_port_id_t port, std::uint64_t* token,
                 weft_net_status_t* st, weft_port_id_t* lost, bool* any_lost) {
    for (;;) {
        int rc = recv_from(from, port, token, sizeof *token, st, WEFT_NET_FOREVER);
        if (rc != ECONNABORTED) return rc;
        if (!*any_lost) *lost = st->port;
        *any_lost = true;
    }
}

// The waits end early when a node they wait for is declared dead (recv_from).
int round_trip(std::uint32_t self, std::uint32_t nodes, weft_port_id_t* lost, bool* any_lost) {
    std::uint64_t token = 0;
    weft_net_status_t st{};
    if (self != 0) {
        if (int rc = weft_net_send(barrier_port(0), kArriveTag, &token, sizeof token); rc != 0) return rc;
        const std::uint32_t gatherer = 0;
        do {
            int rc = recv_barrier(std::span(&gatherer, 1), barrier_port(self), &token, &st, lost, any_lost);
            if (rc != 0) return rc;
        } while (st.tag != kReleaseTag);  // anything else sent there is not the barrier's
        return 0;
    }
    std::vector<std::uint32_t> waited;  // the nodes not arrived yet
    for (std::uint32_t n = 1; n < nodes; ++n) waited.push_back(n);
    while (!waited.empty()) {
        if (int rc = recv_barrier(waited, barrier_port(0), &token, &st, lost, any_lost); rc != 0)
            return rc;
        auto it = std::find(waited.begin(), waited.end(), st.source);
        if (st.tag == kArriveTag && it != waited.end()) waited.erase(it);
    }
    for (std::uint32_t n = 1; n < nodes; ++n) {
        if (int rc = weft_net_send(barrier_port(n), kReleaseTag, &token, sizeof token); rc != 0) return rc;
    }
    return 0;
}

}  // namespace

int barrier_setup(job& j) {
    g_busy.reset(new (std::nothrow) atomic<bool>[j.nodes]());
    return g_busy ? 0 : ENOMEM;
}

void barrier_teardown() { g_busy.reset(); }

}  // namespace weft::detail::net

using namespace weft::detail;
using namespace weft::detail::net;

extern "C" {

WEFT_API int weft_net_barrier(void) {
    job* j = current_job();
    if (j == nullptr) return ENOTCONN;
    std::uint32_t self = self_node();
    if (j->nodes == 1) return 0;
    if (g_busy[self].exchange(true, memory_order_acquire)) return EBUSY;
    weft_port_id_t lost{};
    bool any_lost = false;
    int rc = round_trip(self, j->nodes, &lost, &any_lost);
    g_busy[self].store(false, memory_order_release);
    if (any_lost) note_loss(*j, self, sender_token(), lost);  // for the caller's next receive
    return rc;
}

}  // extern "C"
