// Class: requirement, the protocol's guarantees under faults only a link
// between address spaces has, injected by the faulty transport in this
// process (docs/design/net.md, "The transport seam"): every node here, weft's
// wire protocol over a link that delays frames, lets frames of different
// senders overtake each other, and makes ranks die or stall. Under every
// scheduler, at 1 and 2 workers. (inproc has no wire: every node is this
// process, none dies alone, and a sender waits on the port itself.) The
// guarantees every transport makes, through the public API, are in
// net_transport_test.cpp.
//   - credit never exceeded (what the link saw in flight) while a receiver
//     stops answering;
//   - EHOSTDOWN instead of a hang when a peer dies;
//   - a long send abandoned on a dead peer leaves the caller's buffer free to
//     reuse when weft_net_send returns;
//   - a long message into a receiver already waiting, or one that comes
//     after its header was taken, is received straight into its buffer,
//     without a staging buffer.
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "core/tunables.hpp"
#include "net/transport.hpp"
#include "support/net_suite.hpp"
#include "support/net_test.hpp"

namespace {

namespace net = weft::detail::net;
namespace tun = weft::detail::tun;

// The peer timeout of the runs that kill or stall a peer, ms: the least
// WEFT_NET_PEER_TIMEOUT takes, so that the death is declared within the
// test's time. The other runs have none (net_transport_fixture).
constexpr const char* kPeerTimeoutMs = "100";

class NetProtocolFaultsConcurrent : public wt::net_transport_fixture {
protected:
    // start() for a test in which a peer dies or stalls: deaths are declared
    // after kPeerTimeoutMs.
    void start_with_deaths(const net::faulty_plan& plan = net::faulty_plan{}) {
        ::setenv("WEFT_NET_PEER_TIMEOUT", kPeerTimeoutMs, 1);
        start(plan);
    }
    void start(const net::faulty_plan& plan = net::faulty_plan{}) {
        net::set_faulty_plan(plan);
        wt::net_transport_fixture::start();
    }
    void TearDown() override {
        wt::net_transport_fixture::TearDown();
        net::set_faulty_plan(net::faulty_plan{});
    }
};

// The longest message of these tests: above the copy limit (64 KiB), so sent
// from the caller's buffer.
constexpr std::size_t kMaxSize = 70000;
using wt::byte_of;

// Senders keep sending to a receiver that has stopped answering: each waits
// once its credit is spent, so that what is in flight to the receiver never
// exceeds its window, however long it is away; when it answers again every
// message arrives, in order.
constexpr int kFlood = 3 * int(tun::net_window_msgs);  // per sender: three windows

struct flood_sender {
    weft_port_id_t to{};
    int thread = 0;
    std::atomic<int> sent{0};
    int rc = 0;
    void operator()() {
        for (int seq = 0; seq < kFlood && rc == 0; ++seq) {
            rc = weft_net_send(to, thread * 1000 + seq, &seq, sizeof seq);
            sent.store(seq + 1);
        }
    }
};

TEST_P(NetProtocolFaultsConcurrent, credit_bounds_what_is_in_flight_to_a_receiver_that_stops_answering) {
    start();  // no peer timeout: the stall is not a death, however long the machine takes
    weft_port_id_t port{};
    ASSERT_EQ(weft_net_port_create(&port, std::size_t(2 * kFlood), 64), 0);  // room for all: only credit stops them
    {
        // Node 1 learns the port first (its probe would wait for the stalled node).
        int v = 0;
        wt::run_on(1, [&] { EXPECT_EQ(weft_net_send(port, 9999, &v, sizeof v), 0); });
        ASSERT_EQ(weft_net_recv(port, &v, sizeof v, nullptr, WEFT_NET_FOREVER), 0);
    }
    ASSERT_EQ(net::faulty_stall(0), 0);
    flood_sender s[2];
    weft_thread_t ts[2];
    for (int i = 0; i < 2; ++i) {
        s[i].to = port;
        s[i].thread = i;
        ts[i] = wt::spawn_on(1, &s[i]);
    }
    // Until both senders have spent their window (shared: one window from
    // node 1 to node 0; the first message's credit is still owed, since
    // credit comes back half a window at a time) and wait: more than a window
    // sent would be the bug.
    while (s[0].sent.load() + s[1].sent.load() < int(tun::net_window_msgs) - 1) weft_thread_yield();
    for (int i = 0; i < 1000; ++i) weft_thread_yield();
    net::faulty_counts c = net::faulty_observed();
    EXPECT_LE(c.max_in_flight_msgs, tun::net_window_msgs) << "credit exceeded while the receiver was away";
    EXPECT_LE(s[0].sent.load() + s[1].sent.load(), int(tun::net_window_msgs))
        << "sends returned beyond the window while the receiver was away";
    ASSERT_EQ(net::faulty_resume(0), 0);
    int next[2] = {0, 0};
    for (int k = 0; k < 2 * kFlood; ++k) {
        weft_net_status_t st{};
        int v = -1;
        ASSERT_EQ(weft_net_recv(port, &v, sizeof v, &st, WEFT_NET_FOREVER), 0);
        int thread = st.tag / 1000, seq = st.tag % 1000;
        ASSERT_TRUE(thread == 0 || thread == 1) << "tag " << st.tag;
        ASSERT_EQ(seq, next[thread]) << "sender " << thread;
        ASSERT_EQ(v, seq);
        next[thread] = seq + 1;
    }
    for (weft_thread_t t : ts) ASSERT_EQ(weft_thread_join(t, nullptr), 0);
    EXPECT_EQ(s[0].rc, 0);
    EXPECT_EQ(s[1].rc, 0);
    EXPECT_LE(net::faulty_observed().max_in_flight_msgs, tun::net_window_msgs);
    EXPECT_EQ(weft_net_port_destroy(port), 0);
}

TEST_P(NetProtocolFaultsConcurrent, a_dead_peer_fails_sends_with_ehostdown_instead_of_a_hang) {
    start_with_deaths();
    weft_port_id_t far{};
    int rc = -1;
    wt::run_on(2, [&] { EXPECT_EQ(weft_net_port_create(&far, 4, 64), 0); });
    ASSERT_EQ(net::faulty_kill(2), 0);
    wt::run_on(0, [&] {
        int v = 1;
        // Unknown to node 0: the probe is never answered; then every later send fails at once.
        rc = weft_net_send(far, 0, &v, sizeof v);
        EXPECT_EQ(weft_net_send(far, 0, &v, sizeof v), EHOSTDOWN) << "a peer declared dead stays dead";
    });
    EXPECT_EQ(rc, EHOSTDOWN);
}

TEST_P(NetProtocolFaultsConcurrent, a_sender_waiting_for_credit_gets_ehostdown_when_the_peer_dies) {
    net::faulty_plan plan;
    plan.dies = 1;
    plan.dies_after = 20;  // node 1 dies after taking 20 frames: mid-stream
    start_with_deaths(plan);
    weft_port_id_t port{};
    wt::run_on(1, [&] { EXPECT_EQ(weft_net_port_create(&port, 1, 64), 0); });  // nobody receives from it
    int rc = 0, sent = 0;
    wt::run_on(0, [&] {
        int v = 0;
        for (; sent < 10'000 && rc == 0; ++sent) rc = weft_net_send(port, 0, &v, sizeof v);
    });
    EXPECT_EQ(rc, EHOSTDOWN) << "after " << sent << " sends";
}

// Step 4's case: a long message (above the copy limit: sent from the
// caller's buffer) to a peer that stops answering. The send returns
// EHOSTDOWN once the peer is declared dead; the caller then overwrites and
// frees its buffer. When the peer answers again, what it receives must not
// be read from that buffer.
TEST_P(NetProtocolFaultsConcurrent, a_long_send_abandoned_on_a_dead_peer_leaves_the_buffer_to_its_caller) {
    start_with_deaths();
    constexpr std::size_t kLong = 256 * 1024;
    weft_port_id_t port{};
    wt::run_on(2, [&] { EXPECT_EQ(weft_net_port_create(&port, 4, kLong), 0); });
    int rc = -1;
    wt::run_on(0, [&] {
        int v = 0;
        ASSERT_EQ(weft_net_send(port, 0, &v, sizeof v), 0);  // the port is known: the long send goes at once
        ASSERT_EQ(net::faulty_stall(2), 0);
        auto* buf = static_cast<unsigned char*>(std::malloc(kLong));
        ASSERT_NE(buf, nullptr);
        std::memset(buf, 0xab, kLong);
        rc = weft_net_send(port, 1, buf, kLong);
        std::memset(buf, 0xcd, kLong);  // the caller's again
        std::free(buf);
    });
    EXPECT_EQ(rc, EHOSTDOWN);
    ASSERT_EQ(net::faulty_resume(2), 0);  // node 2 takes what was held: never the freed buffer
    unsigned char first[sizeof(int)];
    wt::run_on(2, [&] {
        std::vector<unsigned char> in(kLong);
        weft_net_status_t st{};
        EXPECT_EQ(weft_net_recv(port, first, sizeof first, &st, WEFT_NET_FOREVER), 0);
        int r = weft_net_recv(port, in.data(), in.size(), &st, 2'000'000'000LL);
        if (r == 0) {
            std::size_t bad = kLong;
            for (std::size_t i = 0; i < kLong && bad == kLong; ++i)
                if (in[i] != 0xab) bad = i;
            EXPECT_EQ(bad, kLong) << "the abandoned message was read from the caller's buffer after its send "
                                     "returned: byte "
                                  << bad;
        }
        EXPECT_EQ(weft_net_port_destroy(port), 0);
    });
}

// A port of node 0 (up to kMaxSize bytes) that node 1 has sent to, so that
// node 1 knows it: a test's long messages then go with no probe before them.
void make_known_port(weft_port_id_t* port) {
    ASSERT_EQ(weft_net_port_create(port, 4, kMaxSize), 0);
    int v = 0;
    wt::run_on(1, [&] { EXPECT_EQ(weft_net_send(*port, 0, &v, sizeof v), 0); });
    ASSERT_EQ(weft_net_recv(*port, &v, sizeof v, nullptr, WEFT_NET_FOREVER), 0);
}

// A long message whose receiver already waits on its port goes straight into
// that receiver's buffer (the link's try_bulk_recv: no staging buffer); one
// nobody waits for goes through a staging buffer. No delays, so that a bulk is
// in the link as soon as its header. With one worker the receiving thread is
// waiting before the sender runs (it runs until it blocks); with more only
// the messages are checked.
TEST_P(NetProtocolFaultsConcurrent, a_long_message_goes_straight_into_a_waiting_receivers_buffer) {
    net::faulty_plan plan;
    plan.delay_max_ns = 0;
    start(plan);
    weft_port_id_t port{};
    ASSERT_NO_FATAL_FAILURE(make_known_port(&port));
    const net::faulty_counts before = net::faulty_observed();
    auto send_from_1 = [&](std::size_t len) {
        wt::run_on(1, [&] {
            std::vector<unsigned char> out(len);
            for (std::size_t i = 0; i < len; ++i) out[i] = byte_of(1, 0, int(len), i);
            EXPECT_EQ(weft_net_send(port, int(len), out.data(), len), 0);
        });
    };
    auto check = [&](const std::vector<unsigned char>& in, const weft_net_status_t& st, std::size_t len) {
        EXPECT_EQ(st.len, len);
        EXPECT_EQ(st.tag, int(len));
        std::size_t bad = len;
        for (std::size_t i = 0; i < len && bad == len; ++i)
            if (in[i] != byte_of(1, 0, int(len), i)) bad = i;
        EXPECT_EQ(bad, len) << "byte " << bad << " of a " << len << "-byte message differs";
    };
    for (std::size_t len : {std::size_t(5000), std::size_t(70000)}) {  // a bulk from a copy, from the caller's buffer
        std::vector<unsigned char> in(kMaxSize, 0);
        weft_net_status_t st{};
        int rc = -1;
        auto receive = [&] { rc = weft_net_recv(port, in.data(), in.size(), &st, WEFT_NET_FOREVER); };
        weft_thread_t t = wt::spawn_on(0, &receive);
        for (int i = 0; i < 8; ++i) weft_thread_yield();
        send_from_1(len);
        ASSERT_EQ(weft_thread_join(t, nullptr), 0);
        ASSERT_EQ(rc, 0);
        check(in, st, len);
    }
    send_from_1(70000);
    std::vector<unsigned char> in(kMaxSize, 0);
    weft_net_status_t st{};
    ASSERT_EQ(weft_net_recv(port, in.data(), in.size(), &st, WEFT_NET_FOREVER), 0);
    check(in, st, 70000);
    const net::faulty_counts c = net::faulty_observed();
    std::uint64_t direct = c.bulks_direct - before.bulks_direct, staged = c.bulks_staged - before.bulks_staged;
    EXPECT_EQ(direct + staged, 3u);
    if (GetParam().rt.workers == 1) {
        EXPECT_EQ(direct, 2u) << "a long message into a waiting receiver was staged, not received into its buffer";
        EXPECT_EQ(staged, 1u) << "a long message nobody waited for was not staged";
    }
    EXPECT_EQ(weft_net_port_destroy(port), 0);
}

// A long message whose header is taken while nobody waits on its port, and
// whose receiver comes only after (a ping-pong's reply, taken by the step that
// completes the receiver's own send), is held for that receiver and received
// straight into its buffer, not staged. The plan's receiver wait is raised so
// that the receiver certainly comes in time; the receiver starts only once the
// link has handed the header to the protocol.
TEST_P(NetProtocolFaultsConcurrent, a_long_message_whose_receiver_comes_after_its_header_is_held_for_it) {
    net::faulty_plan plan;
    plan.delay_max_ns = 0;
    plan.receiver_wait_ns = std::int64_t(3600) * 1'000'000'000;  // an hour: until the receiver comes
    start(plan);
    weft_port_id_t port{};
    ASSERT_NO_FATAL_FAILURE(make_known_port(&port));
    const net::faulty_counts before = net::faulty_observed();
    for (std::size_t len : {std::size_t(5000), std::size_t(70000)}) {  // a bulk from a copy, from the caller's buffer
        std::vector<unsigned char> out(len);
        for (std::size_t i = 0; i < len; ++i) out[i] = byte_of(1, 0, int(len), i);
        const std::uint64_t taken = net::faulty_observed().data_taken;
        int sent = -1;
        auto send = [&] { sent = weft_net_send(port, int(len), out.data(), len); };
        weft_thread_t t = wt::spawn_on(1, &send);
        while (net::faulty_observed().data_taken == taken) weft_thread_yield();
        std::vector<unsigned char> in(kMaxSize, 0);
        weft_net_status_t st{};
        ASSERT_EQ(weft_net_recv(port, in.data(), in.size(), &st, WEFT_NET_FOREVER), 0);
        ASSERT_EQ(weft_thread_join(t, nullptr), 0);
        EXPECT_EQ(sent, 0);
        EXPECT_EQ(st.len, len);
        EXPECT_EQ(st.tag, int(len));
        std::size_t bad = len;
        for (std::size_t i = 0; i < len && bad == len; ++i)
            if (in[i] != out[i]) bad = i;
        EXPECT_EQ(bad, len) << "byte " << bad << " of a " << len << "-byte message differs";
    }
    const net::faulty_counts c = net::faulty_observed();
    EXPECT_EQ(c.bulks_staged - before.bulks_staged, 0u)
        << "a long message whose receiver came after its header was staged, not held for the receiver";
    EXPECT_EQ(c.bulks_direct - before.bulks_direct, 2u);
    EXPECT_EQ(weft_net_port_destroy(port), 0);
}

INSTANTIATE_TEST_SUITE_P(Transports, NetProtocolFaultsConcurrent, ::testing::ValuesIn(wt::transport_params({"faulty"})),
                         wt::transport_param_name);

}  // namespace
