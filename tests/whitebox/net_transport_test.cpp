// Class: requirement, conformance of every transport. The guarantees weft's
// message passing makes between nodes (docs/design/net.md, "The transport
// seam"; include/weft/weft.h), through the public API only, so that the same
// tests run over every transport: here over inproc (every node in this
// process, no wire protocol) and faulty (every node in this process, weft's
// wire protocol over the fault-injecting link), and, compiled into
// tests/mpi/net_transport_suite.cpp and started by mpiexec, over mpi (one rank
// per node). Under every scheduler, at 1 and 2 workers.
//   - order per sender and port, for every size class (inline frames, bulks
//     from a copy, bulks from the caller's buffer), every message once;
//   - no message lost without an error reaching someone: a message sent to a
//     port destroyed meanwhile makes its sender's waiting receive return
//     ECONNABORTED, whether the message was buffered or still on the wire.
// What only a single process can check (the faulty link's counters, deaths and
// stalls it injects) is in net_protocol_faults_test.cpp.
#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tunables.hpp"
#include "net/transport.hpp"
#include "support/net_suite.hpp"

namespace {

namespace net = weft::detail::net;
namespace tun = weft::detail::tun;

class NetTransportConcurrent : public wt::net_transport_fixture {};

// Sizes on both sides of a frame's inline payload (3,968 bytes over the
// protocol) and of the copy limit (64 KiB).
constexpr std::size_t kSizes[] = {8, 3969, 0, 3968, 70000, 16, 65536, 5000, 65537, 100};
constexpr std::size_t kMaxSize = 70000;
constexpr int kSenders = 2;  // per node, on every node but 0
constexpr int kPerSender = 30;

using wt::byte_of;

struct ordered_sender {
    weft_port_id_t to{};
    int node = 0;
    int thread = 0;  // numbered across the job: (node - 1) * kSenders + k
    int rc = 0;
    void operator()() {
        std::vector<unsigned char> buf(kMaxSize);
        for (int seq = 0; seq < kPerSender && rc == 0; ++seq) {
            std::size_t len = kSizes[std::size_t(seq) % (sizeof kSizes / sizeof kSizes[0])];
            for (std::size_t i = 0; i < len; ++i) buf[i] = byte_of(node, thread, seq, i);
            rc = weft_net_send(to, thread * 1000 + seq, buf.data(), len);
        }
    }
};

// Node 0 receives what kSenders threads of every other node send to its port.
void receive_in_order(int senders) {
    weft_port_id_t port{};
    // Room for two messages: senders wait, and over the protocol the port is
    // held and resumed again and again.
    ASSERT_EQ(weft_net_port_create(&port, 2, kMaxSize), 0);
    ASSERT_EQ(weft_net_name_register("ordered", port), 0);
    std::vector<int> next(std::size_t(senders), 0);
    std::vector<unsigned char> in(kMaxSize + 1);
    for (int k = 0; k < senders * kPerSender; ++k) {
        weft_net_status_t st{};
        ASSERT_EQ(weft_net_recv(port, in.data(), in.size(), &st, WEFT_NET_FOREVER), 0);
        int thread = st.tag / 1000, seq = st.tag % 1000;
        ASSERT_TRUE(thread >= 0 && thread < senders) << "tag " << st.tag;
        ASSERT_EQ(st.source, std::uint32_t(1 + thread / kSenders)) << "tag " << st.tag;
        ASSERT_EQ(seq, next[std::size_t(thread)])
            << "sender " << thread << ": message " << seq << " came where " << next[std::size_t(thread)] << " was due";
        next[std::size_t(thread)] = seq + 1;
        std::size_t want = kSizes[std::size_t(seq) % (sizeof kSizes / sizeof kSizes[0])];
        ASSERT_EQ(st.len, want) << "sender " << thread << " message " << seq;
        std::size_t bad = want;
        for (std::size_t i = 0; i < want && bad == want; ++i)
            if (in[i] != byte_of(int(st.source), thread, seq, i)) bad = i;
        ASSERT_EQ(bad, want) << "sender " << thread << " message " << seq << ": byte " << bad << " differs";
    }
    weft_net_status_t st{};
    EXPECT_EQ(weft_net_try_recv(port, in.data(), in.size(), &st), EAGAIN) << "a message came twice";
    EXPECT_EQ(weft_net_port_destroy(port), 0);
}

void send_in_order(int node) {
    const weft_port_id_t port = wt::find_port("ordered");
    std::vector<ordered_sender> s(kSenders);
    std::vector<weft_thread_t> ts;
    for (int k = 0; k < kSenders; ++k) {
        s[std::size_t(k)].to = port;
        s[std::size_t(k)].node = node;
        s[std::size_t(k)].thread = (node - 1) * kSenders + k;
        ts.push_back(wt::spawn_on(node, &s[std::size_t(k)]));
    }
    for (weft_thread_t t : ts) ASSERT_EQ(weft_thread_join(t, nullptr), 0);
    for (const ordered_sender& x : s) EXPECT_EQ(x.rc, 0) << "sender " << x.thread;
}

TEST_P(NetTransportConcurrent, every_message_arrives_once_in_order_per_sender_and_port) {
    start();
    const int senders = (weft_net_num_nodes() - 1) * kSenders;
    run_every_node([&](int node) {
        if (node == 0) {
            receive_in_order(senders);
        } else {
            send_in_order(node);
        }
    });
    if (faulty()) {
        net::faulty_counts c = net::faulty_observed();
        EXPECT_GT(c.data_frames, 0u) << "the messages went through the link";
        EXPECT_LE(c.max_in_flight_msgs, tun::net_window_msgs) << "credit exceeded: frames in flight to one peer";
        EXPECT_LE(c.max_in_flight_bytes, tun::net_window_bytes) << "credit exceeded: bytes in flight to one peer";
    }
}

// Node 1 sends one request to a port of node 0 and waits for a reply that
// never comes; node 0, told the request was sent, destroys the port, with the
// request in it or still on its way. Node 0 hands out each round's port, and
// node 1 says it has sent, through ports found by name.
constexpr int kRounds = 40;

void destroy_servers() {
    weft_port_id_t ctl{};
    ASSERT_EQ(weft_net_port_create(&ctl, 4, 64), 0);
    ASSERT_EQ(weft_net_name_register("ctl0", ctl), 0);
    const weft_port_id_t peer = wt::find_port("ctl1");
    for (int i = 0; i < kRounds; ++i) {
        weft_port_id_t server{};
        ASSERT_EQ(weft_net_port_create(&server, 16, 64), 0);  // nobody receives from it
        ASSERT_EQ(weft_net_send(peer, i, &server, sizeof server), 0);
        weft_net_status_t st{};
        ASSERT_EQ(weft_net_recv(ctl, nullptr, 0, &st, WEFT_NET_FOREVER), 0);
        ASSERT_EQ(st.tag, i) << "node 1 says it sent round " << st.tag << "'s request";
        if (i % 2 == 1)
            for (int k = 0; k < 8; ++k) weft_thread_yield();  // the request may be in the port by now, or not
        ASSERT_EQ(weft_net_port_destroy(server), 0);
    }
    EXPECT_EQ(weft_net_port_destroy(ctl), 0);
}

void request_then_wait() {
    weft_port_id_t ctl{};
    ASSERT_EQ(weft_net_port_create(&ctl, std::size_t(kRounds), std::size_t(kRounds) * sizeof(weft_port_id_t)), 0);
    ASSERT_EQ(weft_net_name_register("ctl1", ctl), 0);
    const weft_port_id_t peer = wt::find_port("ctl0");
    for (int i = 0; i < kRounds; ++i) {
        weft_port_id_t server{};
        weft_net_status_t st{};
        ASSERT_EQ(weft_net_recv(ctl, &server, sizeof server, &st, WEFT_NET_FOREVER), 0);
        ASSERT_EQ(st.tag, i);
        weft_port_id_t reply{};
        ASSERT_EQ(weft_net_port_create(&reply, 4, 64), 0);
        int req = 42;
        ASSERT_EQ(weft_net_send(server, 1, &req, sizeof req), 0);
        ASSERT_EQ(weft_net_send(peer, i, nullptr, 0), 0);
        int answer = 0;
        // A sender that is never told waits here for ever (the watchdog ends it).
        EXPECT_EQ(weft_net_recv(reply, &answer, sizeof answer, &st, WEFT_NET_FOREVER), ECONNABORTED)
            << "round " << i << ": the sender's wait must say its request was dropped";
        EXPECT_TRUE(wt::same_port(st.port, server)) << "round " << i << ": st->port names the destroyed port";
        EXPECT_EQ(weft_net_port_destroy(reply), 0);
    }
    EXPECT_EQ(weft_net_port_destroy(ctl), 0);
}

TEST_P(NetTransportConcurrent, a_message_to_a_port_destroyed_meanwhile_reaches_its_senders_wait) {
    start();
    run_every_node([](int node) {
        if (node == 0) destroy_servers();
        if (node == 1) request_then_wait();
    });
}

// The transports of this binary: mpi when it is the program started by
// mpiexec (tests/mpi/net_transport_suite.cpp), else those that run every node
// in this process.
#ifdef WEFT_NET_SUITE_OVER_MPI
const std::vector<const char*> kTransports = {"mpi"};
#else
const std::vector<const char*> kTransports = {"inproc", "faulty"};
#endif

INSTANTIATE_TEST_SUITE_P(Transports, NetTransportConcurrent, ::testing::ValuesIn(wt::transport_params(kTransports)),
                         wt::transport_param_name);

}  // namespace
