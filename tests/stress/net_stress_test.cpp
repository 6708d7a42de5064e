// Class: stress. Many weft threads on several nodes exchange messages through
// small ports (so senders block on back-pressure and receivers block on empty
// ports, across workers) under every scheduler: every message arrives exactly
// once, in order per (sender, port), and the sums are exact.
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <vector>

#include "support/weft_test.hpp"

namespace {

class NetConcurrency : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(All, NetConcurrency, ::testing::ValuesIn(wt::rt_params({1, 2, 4})), wt::rt_param_name);

constexpr int kNodes = 4;
constexpr int kSendersPerNode = 3;
constexpr int kSenders = kNodes * kSendersPerNode;

struct msg {
    std::int32_t sender;
    std::int32_t seq;
    std::int64_t value;
};

struct shared {
    weft_port_id_t inbox[kNodes];   // one per node, tiny: back-pressure all the time
    weft_port_id_t side[kNodes];    // a second port per node, read through recv_any
    std::int64_t per_node;          // messages each sender sends to each node
    std::atomic<std::int64_t> sum{0};
    std::atomic<std::int64_t> count{0};
    std::atomic<int> order_errors{0};
    std::atomic<int> other_errors{0};
};

template <class F>
weft_thread_t spawn_on(int node, F* f) {
    weft_thread_t t = WEFT_THREAD_NULL;
    EXPECT_EQ(weft_net_spawn(&t, node, nullptr, [](void* a) -> void* { (*static_cast<F*>(a))(); return nullptr; }, f),
              0);
    return t;
}

TEST_P(NetConcurrency, all_to_all_exact_and_ordered) {
    weft_net_config_t c{};
    c.nodes = kNodes;
    ASSERT_EQ(weft_net_init(&c), 0);
    shared s;
    s.per_node = wt::scaled(300, 10);
    const std::int64_t total = s.per_node * kSenders * kNodes;

    // The ports are created by a thread of their node.
    std::vector<weft_thread_t> ts;
    auto make_ports = [&s] {
        int n = weft_net_self_node();
        EXPECT_EQ(weft_net_port_create(&s.inbox[n], 2, 64), 0);
        EXPECT_EQ(weft_net_port_create(&s.side[n], 3, 1024), 0);
    };
    for (int n = 0; n < kNodes; ++n) ts.push_back(spawn_on(n, &make_ports));
    for (weft_thread_t t : ts) wt::join(t);
    ts.clear();

    // One receiver per node: recv_any over its two ports, checking each
    // sender's sequence on each port separately.
    auto receive = [&s] {
        int n = weft_net_self_node();
        std::vector<std::int32_t> next_inbox(kSenders, 0), next_side(kSenders, 0);
        weft_port_id_t both[2] = {s.inbox[n], s.side[n]};
        for (std::int64_t k = 0; k < s.per_node * kSenders; ++k) {
            msg m{};
            weft_net_status_t st{};
            int rc = weft_net_recv_any(both, 2, &m, sizeof m, &st, WEFT_NET_FOREVER);
            if (rc != 0 || st.len != sizeof m) {
                s.other_errors.fetch_add(1);
                return;
            }
            bool via_side = st.port.index == s.side[n].index;
            std::int32_t& next = via_side ? next_side[m.sender] : next_inbox[m.sender];
            if (m.seq != next) s.order_errors.fetch_add(1);
            next = m.seq + 1;
            if (int(st.source) != m.sender / kSendersPerNode) s.other_errors.fetch_add(1);
            s.sum.fetch_add(m.value);
            s.count.fetch_add(1);
        }
    };
    // Senders: to every node in turn, alternating its two ports.
    struct sender_ctx {
        shared* s;
        int id;
        void operator()() const {
            std::int32_t seq_inbox[kNodes] = {}, seq_side[kNodes] = {};
            for (std::int64_t i = 0; i < s->per_node; ++i) {
                for (int d = 0; d < kNodes; ++d) {
                    bool side = (i + id) % 2 == 1;
                    msg m{id, side ? seq_side[d]++ : seq_inbox[d]++, std::int64_t(id) * 1000003 + i};
                    if (weft_net_send(side ? s->side[d] : s->inbox[d], id, &m, sizeof m) != 0)
                        s->other_errors.fetch_add(1);
                }
            }
        }
    };
    std::vector<sender_ctx> senders;
    senders.reserve(kSenders);
    for (int id = 0; id < kSenders; ++id) senders.push_back(sender_ctx{&s, id});
    for (int n = 0; n < kNodes; ++n) ts.push_back(spawn_on(n, &receive));
    for (int id = 0; id < kSenders; ++id) ts.push_back(spawn_on(id / kSendersPerNode, &senders[id]));
    for (weft_thread_t t : ts) wt::join(t);

    std::int64_t want = 0;
    for (int id = 0; id < kSenders; ++id)
        for (std::int64_t i = 0; i < s.per_node; ++i) want += (std::int64_t(id) * 1000003 + i) * kNodes;
    EXPECT_EQ(s.other_errors.load(), 0);
    EXPECT_EQ(s.order_errors.load(), 0);
    EXPECT_EQ(s.count.load(), total);
    EXPECT_EQ(s.sum.load(), want);
    for (int n = 0; n < kNodes; ++n) {
        int v;
        EXPECT_EQ(weft_net_try_recv(s.inbox[n], &v, sizeof v, nullptr), n == 0 ? EAGAIN : EPERM)
            << "every message was received once; node 0 reads only its own ports";
    }
    EXPECT_EQ(weft_net_finalize(), 0);
}

// Ping-pong pairs across nodes, with receivers that time out now and then:
// timed-out waits must leave no stale waiter behind that would swallow a wake.
TEST_P(NetConcurrency, pingpong_pairs_with_timeouts) {
    weft_net_config_t c{};
    c.nodes = 2;
    ASSERT_EQ(weft_net_init(&c), 0);
    constexpr int kPairs = 4;
    const int rounds = int(wt::scaled(2000, 50));
    weft_port_id_t a[kPairs], b[kPairs];
    for (int i = 0; i < kPairs; ++i) ASSERT_EQ(weft_net_port_create(&a[i], 1, 64), 0);
    std::atomic<int> errors{0};
    struct side {
        weft_port_id_t* mine;
        weft_port_id_t* peer;
        int rounds;
        bool starts;
        std::atomic<int>* errors;
        void operator()() const {
            for (int r = 0; r < rounds; ++r) {
                if (starts && weft_net_send(*peer, 0, &r, sizeof r) != 0) errors->fetch_add(1);
                int got = -1;
                int rc;
                while ((rc = weft_net_recv(*mine, &got, sizeof got, nullptr, 50'000)) == ETIMEDOUT) {
                }
                if (rc != 0 || got != r) errors->fetch_add(1);
                if (!starts && weft_net_send(*peer, 0, &r, sizeof r) != 0) errors->fetch_add(1);
            }
        }
    };
    std::vector<weft_thread_t> ts;
    std::vector<side> sides;
    sides.reserve(2 * kPairs);
    // b's ports are made on node 1 by a thread of node 1.
    auto make_b = [&b] {
        for (int i = 0; i < kPairs; ++i) EXPECT_EQ(weft_net_port_create(&b[i], 1, 64), 0);
    };
    wt::join(spawn_on(1, &make_b));
    for (int i = 0; i < kPairs; ++i) {
        sides.push_back(side{&a[i], &b[i], rounds, true, &errors});
        sides.push_back(side{&b[i], &a[i], rounds, false, &errors});
    }
    for (int i = 0; i < kPairs; ++i) {
        ts.push_back(spawn_on(0, &sides[2 * i]));
        ts.push_back(spawn_on(1, &sides[2 * i + 1]));
    }
    for (weft_thread_t t : ts) wt::join(t);
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(weft_net_finalize(), 0);
}

}  // namespace
