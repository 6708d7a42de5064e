// The ping-pong of pingpong.hpp between weft threads on two nodes: rank 0's
// thread sends `bytes` to node 1's port with weft_net_send and waits in
// weft_net_recv on its own port for them to come back; node 1's thread echoes.
// Each node runs one worker; each registers its port with the naming service
// as "pingpong/<node>" and looks up the other's (the job's own services hold
// the first ports of every node, so a port's ID is not known in advance). A
// round times `iters` round trips after a tenth as
// many unrecorded ones, as the raw MPI child does, and records the half round
// trip.
#include <cstdio>
#include <vector>

#include "harness.hpp"
#include "pingpong.hpp"
#include "weft/rpc.h"
#include "weft/rpc.hpp"
#include "weft/weft.h"

namespace weft::bench::pingpong {

namespace {

struct side {
    weft_port_id_t mine;
    weft_port_id_t peer;
    unsigned char* buf;
    std::size_t cap;
};

void round_trips(bool first, side const& s, std::size_t bytes, long n) {
    for (long i = 0; i < n; ++i) {
        if (first) {
            check(weft_net_send(s.peer, 0, s.buf, bytes), "weft_net_send");
            check(weft_net_recv(s.mine, s.buf, s.cap, nullptr, WEFT_NET_FOREVER), "weft_net_recv");
        } else {
            check(weft_net_recv(s.mine, s.buf, s.cap, nullptr, WEFT_NET_FOREVER), "weft_net_recv");
            check(weft_net_send(s.peer, 0, s.buf, bytes), "weft_net_send");
        }
    }
}

std::size_t largest_of(std::vector<std::size_t> const& sizes) {
    std::size_t largest = 1;
    for (std::size_t b : sizes) largest = b > largest ? b : largest;
    return largest;
}

// Both sides' rounds; `report` gets (size index, round, half round trip ns) on the first side.
template <class Report>
void rounds_of(bool first, side const& s, std::vector<std::size_t> const& sizes, int rounds, long iters,
               Report report) {
    for (int round = 0; round < rounds; ++round)
        for (std::size_t i = 0; i < sizes.size(); ++i) {
            long const n = iters_for(sizes[i], iters);
            round_trips(first, s, sizes[i], n / 10 + 1);  // warm-up; also lines the two sides up
            std::uint64_t const t0 = now_ns();
            round_trips(first, s, sizes[i], n);
            if (first) report(i, round, double(now_ns() - t0) / (2.0 * double(n)));
        }
}

// Registers this node's port and finds the other node's (the lookup waits
// until it is registered), then lines the two sides up: each has received
// from the other.
void handshake(side& s, int node) {
    char name[32];
    std::snprintf(name, sizeof name, "pingpong/%d", node);
    check(weft_net_name_register(name, s.mine), "weft_net_name_register");
    std::snprintf(name, sizeof name, "pingpong/%d", 1 - node);
    check(weft_net_name_lookup(name, &s.peer, WEFT_NET_FOREVER), "weft_net_name_lookup");
    check(weft_net_send(s.peer, 0, nullptr, 0), "weft_net_send");
    check(weft_net_recv(s.mine, s.buf, s.cap, nullptr, WEFT_NET_FOREVER), "weft_net_recv");
}

void start(char const* transport, int nodes) {
    weft_config_t cfg{};
    cfg.workers = 1;
    cfg.adapt = "off";
    check(weft_init(&cfg), "weft_init");
    weft_net_config_t ncfg{};
    ncfg.transport = transport;
    ncfg.nodes = nodes;
    check(weft_net_init(&ncfg), "weft_net_init");
}

void stop() {
    check(weft_net_finalize(), "weft_net_finalize");
    check(weft_finalize(), "weft_finalize");
}

struct echo_arg {
    side s;
    std::vector<std::size_t> const* sizes;
    int rounds;
    long iters;
};

void* echo_main(void* a) {
    auto* e = static_cast<echo_arg*>(a);
    check(weft_net_port_create(&e->s.mine, 4, e->s.cap), "weft_net_port_create");
    handshake(e->s, 1);
    rounds_of(false, e->s, *e->sizes, e->rounds, e->iters, [](std::size_t, int, double) {});
    check(weft_net_port_destroy(e->s.mine), "weft_net_port_destroy");
    return nullptr;
}

// The RPC round trip's service: a call that does nothing, so the row is what
// the RPC layer and the transport cost.
struct null_service {
    void null() {}
};

}  // namespace
}  // namespace weft::bench::pingpong

template <>
struct weft::rpc::interface<weft::bench::pingpong::null_service>
    : weft::rpc::functions<&weft::bench::pingpong::null_service::null> {};

namespace weft::bench::pingpong {

int rpc_child(int rounds, long iters) {
    start("mpi", 0);
    int const rank = weft_net_self_node();
    if (weft_net_num_nodes() != 2) die("weft-bench msg --mpi-child --child-transport mpi-rpc: %d nodes, not 2",
                                       weft_net_num_nodes());
    if (rank == 1) {
        // The server: one thread on node 1, found by name; it serves until
        // both nodes have passed the barrier that ends the caller's rounds.
        null_service svc;
        weft::rpc::server<null_service> srv(svc, 1);
        check(weft_net_name_register("rpcbench/server", srv.port()), "weft_net_name_register");
        check(weft_net_barrier(), "weft_net_barrier");
    } else {
        weft_port_id_t port{};
        check(weft_net_name_lookup("rpcbench/server", &port, WEFT_NET_FOREVER), "weft_net_name_lookup");
        std::printf("rpcsched %s\n", weft_sched_name());
        for (long i = 0; i < iters / 10 + 1; ++i) weft::rpc::call(port, &null_service::null);  // warm-up
        for (int round = 0; round < rounds; ++round) {
            std::uint64_t const t0 = now_ns();
            for (long i = 0; i < iters; ++i) weft::rpc::call(port, &null_service::null);
            std::printf("rpc %d %.6g\n", round, double(now_ns() - t0) / double(iters));
        }
        std::fflush(stdout);
        check(weft_net_barrier(), "weft_net_barrier");
    }
    stop();
    return 0;
}

int weft_child(std::vector<std::size_t> const& sizes, int rounds, long iters) {
    start("mpi", 0);
    int const rank = weft_net_self_node();
    if (weft_net_num_nodes() != 2) die("weft-bench msg --mpi-child --child-transport mpi: %d nodes, not 2",
                                       weft_net_num_nodes());
    std::size_t const cap = largest_of(sizes);
    std::vector<unsigned char> buf(cap, static_cast<unsigned char>(rank + 1));
    side s{{}, {}, buf.data(), cap};
    check(weft_net_port_create(&s.mine, 4, cap), "weft_net_port_create");
    handshake(s, rank);
    rounds_of(rank == 0, s, sizes, rounds, iters,
              [&](std::size_t i, int round, double ns) { std::printf("pingpong %zu %d %.6g\n", sizes[i], round, ns); });
    std::fflush(stdout);
    // The last round trip is done on both sides before either destroys its port.
    check(weft_net_port_destroy(s.mine), "weft_net_port_destroy");
    stop();
    return 0;
}

std::vector<point> weft_inproc(std::vector<std::size_t> const& sizes, int rounds, long iters) {
    start("inproc", 2);
    std::size_t const cap = largest_of(sizes);
    std::vector<unsigned char> b0(cap, 1), b1(cap, 2);
    side s0{{}, {}, b0.data(), cap};
    check(weft_net_port_create(&s0.mine, 4, cap), "weft_net_port_create");
    echo_arg e{side{{}, {}, b1.data(), cap}, &sizes, rounds, iters};
    weft_thread_t t;
    check(weft_net_spawn(&t, 1, nullptr, &echo_main, &e), "weft_net_spawn");
    std::vector<point> points(sizes.size());
    for (std::size_t i = 0; i < sizes.size(); ++i) points[i].bytes = sizes[i];
    handshake(s0, 0);
    rounds_of(true, s0, sizes, rounds, iters,
              [&](std::size_t i, int, double ns) { points[i].half_rtt_ns.push_back(ns); });
    check(weft_thread_join(t, nullptr), "weft_thread_join");
    check(weft_net_port_destroy(s0.mine), "weft_net_port_destroy");
    stop();
    return points;
}

}  // namespace weft::bench::pingpong
