// rpc_sum: a service on node 1 that keeps a running total, found by name and
// called from every node with weft::rpc::call (docs/design/rpc.md).
//
//   $ ./rpc_sum
//   node 0 added 1: total 1
//   ...
//   total over 3 nodes: 6
//   remote error: ... the function threw: negative amount -5
#include <cstdio>
#include <stdexcept>
#include <string>

#include "weft/rpc.hpp"

// The service: plain C++, no stub code.
struct accumulator {
    long add(long amount) {
        if (amount < 0) throw std::invalid_argument("negative amount " + std::to_string(amount));
        return total += amount;
    }
    long get() const { return total; }
    long total = 0;
};

// Its remotely callable functions; the templates generate the stubs.
template <>
struct weft::rpc::interface<accumulator> : weft::rpc::functions<&accumulator::add, &accumulator::get> {};

constexpr int kNodes = 3;
accumulator g_acc;
weft_sem_t g_done;

// Node 1 hosts the service (one server thread: calls run one at a time, so
// `total` needs no lock) and advertises it by name until main is done.
void* host(void*) {
    weft::rpc::server<accumulator> srv(g_acc, 1);
    weft::net::names::register_port("accumulator", srv.port());
    weft_sem_wait(&g_done);
    return nullptr;
}

// One caller per node: look the service up (waiting until it is there), add
// node + 1, then meet the other nodes' callers at the job-wide barrier.
void* caller(void*) {
    int self = weft::net::self_node();
    weft::net::port_id svc = weft::net::names::lookup("accumulator");
    long t = weft::rpc::call(svc, &accumulator::add, long(self + 1));
    std::printf("node %d added %d: total %ld\n", self, self + 1, t);
    weft::net::barrier();
    return nullptr;
}

int main() {
    weft::net::job job(kNodes);
    weft_sem_init(&g_done, 0);
    weft_thread_t h, callers[kNodes];
    weft_net_spawn(&h, 1, nullptr, host, nullptr);
    for (int n = 0; n < kNodes; ++n) weft_net_spawn(&callers[n], n, nullptr, caller, nullptr);
    for (weft_thread_t t : callers) weft_thread_join(t, nullptr);

    weft::net::port_id svc = weft::net::names::lookup("accumulator");
    std::printf("total over %d nodes: %ld\n", kNodes, weft::rpc::call(svc, &accumulator::get));
    try {
        weft::rpc::call(svc, &accumulator::add, -5L);
    } catch (const weft::rpc::remote_error& e) {
        std::printf("remote error: %s\n", e.what());
    }
    weft_sem_post(&g_done);
    weft_thread_join(h, nullptr);
    weft_sem_destroy(&g_done);
    return g_acc.total == 6 ? 0 : 1;
}
