// The job's own services, started by weft_net_init and stopped by
// weft_net_finalize: every node's barrier port (index 0 of each node), the
// naming service's port (node 0, index 1) and its server thread.
//
// Their IDs are known to every node without a message: a node's first ports
// are these, created in this order on a fresh table, so their index and
// generation (0) are fixed. With inproc this process creates them for every
// node; a transport whose nodes are separate processes creates, on each, the
// ports of its own node in the same order.
#include <cerrno>

#include "base/primitives.hpp"
#include "core/tunables.hpp"
#include "net/port.hpp"
#include "net/rpc.hpp"

namespace weft::detail::net {
namespace {

atomic<std::uint64_t> g_serial{0};
weft_thread_t g_names_thread = WEFT_THREAD_NULL;

}  // namespace

std::uint64_t job_serial() { return g_serial.load(memory_order_acquire); }

weft_port_id_t barrier_port(std::uint32_t node) { return weft_port_id_t{node, 0, 0, 0}; }
weft_port_id_t names_port() { return weft_port_id_t{0, 1, 0, 0}; }

int start_services(job& j) {
    // Every reply port cached by a thread belongs to an earlier job now.
    g_serial.fetch_add(1, memory_order_acq_rel);
    if (int rc = barrier_setup(j); rc != 0) return rc;
    // The nodes this process holds: all of them (inproc), or its own (mpi).
    auto here = [&](std::uint32_t n) { return j.home < 0 || std::uint32_t(j.home) == n; };
    for (std::uint32_t n = 0; n < j.nodes; ++n) {
        if (!here(n)) continue;
        weft_port_id_t id{};
        std::size_t slots = j.nodes < 4 ? 4 : j.nodes;  // node 0's takes an arrival from every node
        if (int rc = port_create(j, n, slots, slots * 16, &id); rc != 0) return rc;
    }
    if (!here(0)) return 0;
    weft_port_id_t id{};
    if (int rc = port_create(j, 0, tun::net_names_port_msgs, tun::net_names_port_bytes, &id); rc != 0) return rc;
    weft_attr_t attr;
    weft_attr_init(&attr);
    weft_attr_setname(&attr, "weft-names");  // how a deadlock report names it
    int rc = weft_net_spawn(&g_names_thread, 0, &attr, &names_server_main, nullptr);
    weft_attr_destroy(&attr);
    return rc;
}

void stop_services(job& j) {
    if (g_names_thread != WEFT_THREAD_NULL) {
        (void)port_close(j, 0, names_port());
        (void)weft_thread_join(g_names_thread, nullptr);
        g_names_thread = WEFT_THREAD_NULL;
    }
    barrier_teardown();
    release_caller();
}

}  // namespace weft::detail::net
