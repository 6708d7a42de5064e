// Class: requirement, negative. Message passing (include/weft/weft.h, "Message
// passing"): nodes, ports, send/recv/try_recv/recv_any, back-pressure,
// timeouts, destroy with waiters, errors, injected latency.
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "support/net_test.hpp"
#include "support/weft_test.hpp"

namespace {

// One worker, fifo: the order of the threads is program order, so a test can
// tell that a thread has blocked by yielding until it must have run.
class Net : public wt::net_fixture {
protected:
    static weft_port_id_t port(size_t msgs = 16, size_t bytes = 4096) {
        weft_port_id_t p{};
        EXPECT_EQ(weft_net_port_create(&p, msgs, bytes), 0);
        return p;
    }
};

template <class F>
weft_thread_t spawn_on(int node, F f) {
    auto* p = new F(std::move(f));
    weft_thread_t t = WEFT_THREAD_NULL;
    int rc = weft_net_spawn(&t, node, nullptr,
                            [](void* a) -> void* {
                                auto* fp = static_cast<F*>(a);
                                (*fp)();
                                delete fp;
                                return nullptr;
                            },
                            p);
    EXPECT_EQ(rc, 0);
    return t;
}

TEST_F(Net, send_then_recv_carries_tag_length_and_bytes) {
    start(1);
    weft_port_id_t p = port();
    EXPECT_EQ(p.node, 0u);
    const char text[] = "hello";
    ASSERT_EQ(weft_net_send(p, 7, text, sizeof text), 0);
    char buf[16] = {};
    weft_net_status_t st{};
    ASSERT_EQ(weft_net_recv(p, buf, sizeof buf, &st, WEFT_NET_FOREVER), 0);
    EXPECT_STREQ(buf, "hello");
    EXPECT_EQ(st.tag, 7);
    EXPECT_EQ(st.len, sizeof text);
    EXPECT_EQ(st.source, 0u);
    EXPECT_EQ(st.sent_ns, 0) << "a same-node message carries no times";
    EXPECT_EQ(st.port.index, p.index);
    ASSERT_EQ(weft_net_send(p, 8, nullptr, 0), 0) << "an empty message";
    ASSERT_EQ(weft_net_recv(p, nullptr, 0, &st, WEFT_NET_FOREVER), 0);
    EXPECT_EQ(st.tag, 8);
    EXPECT_EQ(st.len, 0u);
    EXPECT_EQ(weft_net_port_destroy(p), 0);
}

TEST_F(Net, blocked_receiver_gets_message_from_another_node) {
    start(2);
    weft_port_id_t p = port();
    int got = 0;
    weft_net_status_t st{};
    weft_thread_t r = wt::go([&] { EXPECT_EQ(weft_net_recv(p, &got, sizeof got, &st, WEFT_NET_FOREVER), 0); });
    let_others_run();  // r blocks on the empty port
    weft_thread_t s = spawn_on(1, [&] {
        EXPECT_EQ(weft_net_self_node(), 1);
        int v = 99;
        EXPECT_EQ(weft_net_send(p, 3, &v, sizeof v), 0);
    });
    wt::join(s);
    wt::join(r);
    EXPECT_EQ(got, 99);
    EXPECT_EQ(st.source, 1u);
    EXPECT_EQ(st.tag, 3);
    EXPECT_GT(st.sent_ns, 0) << "a message from another node carries its send time";
}

TEST_F(Net, fifo_per_sender_and_port) {
    start(2);
    weft_port_id_t p = port(3, 4096);  // small: the senders block in turns
    constexpr int kSenders = 3, kEach = 200;
    std::vector<weft_thread_t> ts;
    for (int s = 0; s < kSenders; ++s)
        ts.push_back(spawn_on(s % 2, [p, s] {
            for (int i = 0; i < kEach; ++i) {
                int msg[2] = {s, i};
                ASSERT_EQ(weft_net_send(p, s, msg, sizeof msg), 0);
            }
        }));
    int next[kSenders] = {};
    for (int k = 0; k < kSenders * kEach; ++k) {
        int msg[2];
        weft_net_status_t st{};
        ASSERT_EQ(weft_net_recv(p, msg, sizeof msg, &st, WEFT_NET_FOREVER), 0);
        ASSERT_EQ(st.tag, msg[0]);
        ASSERT_EQ(msg[1], next[msg[0]]) << "sender " << msg[0] << " out of order";
        ++next[msg[0]];
    }
    for (weft_thread_t t : ts) wt::join(t);
    for (int s = 0; s < kSenders; ++s) EXPECT_EQ(next[s], kEach);
}

TEST_F(Net, back_pressure_blocks_sender_until_receiver_drains) {
    start(1);
    weft_port_id_t p = port(2, 4096);
    std::atomic<int> sent{0};
    weft_thread_t s = wt::go([&] {
        for (int i = 0; i < 5; ++i) {
            ASSERT_EQ(weft_net_send(p, 0, &i, sizeof i), 0);
            sent.fetch_add(1);
        }
    });
    let_others_run();
    EXPECT_EQ(sent.load(), 2) << "the third send must wait for room";
    // Bounded: only the two buffered messages are there (no yield in between,
    // so the woken sender cannot add one).
    int v = -1;
    EXPECT_EQ(weft_net_try_recv(p, &v, sizeof v, nullptr), 0);
    EXPECT_EQ(v, 0);
    EXPECT_EQ(weft_net_try_recv(p, &v, sizeof v, nullptr), 0);
    EXPECT_EQ(v, 1);
    EXPECT_EQ(weft_net_try_recv(p, &v, sizeof v, nullptr), EAGAIN);
    let_others_run();
    EXPECT_EQ(sent.load(), 4) << "the sender proceeds as room appears";
    for (int want = 2; want < 5; ++want) {
        ASSERT_EQ(weft_net_recv(p, &v, sizeof v, nullptr, WEFT_NET_FOREVER), 0);
        EXPECT_EQ(v, want);
    }
    wt::join(s);
    EXPECT_EQ(sent.load(), 5);
}

TEST_F(Net, byte_capacity_bounds_too) {
    start(1);
    weft_port_id_t p = port(100, 10);
    char big[11] = {};
    EXPECT_EQ(weft_net_send(p, 0, big, sizeof big), EMSGSIZE) << "longer than the port can ever buffer";
    EXPECT_EQ(weft_net_send(p, 0, big, 6), 0);
    std::atomic<bool> done{false};
    weft_thread_t s = wt::go([&] {
        EXPECT_EQ(weft_net_send(p, 0, big, 6), 0);
        done = true;
    });
    let_others_run();
    EXPECT_FALSE(done.load()) << "6 + 6 bytes exceed the 10-byte buffer";
    ASSERT_EQ(weft_net_recv(p, big, sizeof big, nullptr, WEFT_NET_FOREVER), 0);
    wt::join(s);
    EXPECT_TRUE(done.load());
}

TEST_F(Net, timeouts_and_try_recv) {
    start(1);
    weft_port_id_t p = port();
    int v = 0;
    EXPECT_EQ(weft_net_try_recv(p, &v, sizeof v, nullptr), EAGAIN);
    EXPECT_EQ(weft_net_recv(p, &v, sizeof v, nullptr, 0), ETIMEDOUT);
    std::int64_t t0 = wt::now_ns();
    EXPECT_EQ(weft_net_recv(p, &v, sizeof v, nullptr, 2'000'000), ETIMEDOUT);
    EXPECT_GE(wt::now_ns() - t0, 2'000'000) << "not before the timeout";
    weft_port_id_t q = port();
    weft_port_id_t both[2] = {p, q};
    weft_net_status_t st{};
    EXPECT_EQ(weft_net_recv_any(both, 2, &v, sizeof v, &st, 1'000'000), ETIMEDOUT);
    // A timed-out waiter left nothing behind: a later message goes to a later receive.
    int w = 5;
    ASSERT_EQ(weft_net_send(q, 0, &w, sizeof w), 0);
    ASSERT_EQ(weft_net_recv(q, &v, sizeof v, nullptr, 1'000'000'000), 0);
    EXPECT_EQ(v, 5);
}

TEST_F(Net, recv_any_takes_from_whichever_port_has_a_message) {
    start(2);
    weft_port_id_t ps[3] = {port(), port(), port()};
    int v = 11;
    ASSERT_EQ(weft_net_send(ps[1], 1, &v, sizeof v), 0);
    weft_net_status_t st{};
    int got = 0;
    ASSERT_EQ(weft_net_recv_any(ps, 3, &got, sizeof got, &st, WEFT_NET_FOREVER), 0);
    EXPECT_EQ(got, 11);
    EXPECT_EQ(st.port.index, ps[1].index);
    // Blocked on all three, woken by a send to the last from another node.
    weft_thread_t r = wt::go([&] { EXPECT_EQ(weft_net_recv_any(ps, 3, &got, sizeof got, &st, WEFT_NET_FOREVER), 0); });
    let_others_run();
    weft_thread_t s = spawn_on(1, [&] {
        int x = 22;
        EXPECT_EQ(weft_net_send(ps[2], 2, &x, sizeof x), 0);
    });
    wt::join(s);
    wt::join(r);
    EXPECT_EQ(got, 22);
    EXPECT_EQ(st.port.index, ps[2].index);
    EXPECT_EQ(st.tag, 2);
    // Each port again, one after another: the waiter's links were taken back.
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(weft_net_send(ps[i], i, &i, sizeof i), 0);
        ASSERT_EQ(weft_net_recv_any(ps, 3, &got, sizeof got, &st, WEFT_NET_FOREVER), 0);
        EXPECT_EQ(got, i);
    }
}

TEST_F(Net, destroy_wakes_blocked_receivers_and_senders_with_epipe) {
    start(1);
    weft_port_id_t in = port();
    weft_port_id_t other = port();
    weft_port_id_t full = port(1, 64);
    int v = 0;
    ASSERT_EQ(weft_net_send(full, 0, &v, sizeof v), 0);
    int r1 = -1, r2 = -1, r3 = -1;
    weft_net_status_t st{};
    weft_thread_t a = wt::go([&] { r1 = weft_net_recv(in, &v, sizeof v, nullptr, WEFT_NET_FOREVER); });
    weft_thread_t b = wt::go([&] {
        weft_port_id_t two[2] = {other, in};
        int x;
        r2 = weft_net_recv_any(two, 2, &x, sizeof x, &st, WEFT_NET_FOREVER);
    });
    weft_thread_t c = wt::go([&] { r3 = weft_net_send(full, 0, &v, sizeof v); });
    let_others_run();
    EXPECT_EQ(r1, -1);
    EXPECT_EQ(r3, -1) << "blocked on the full port";
    ASSERT_EQ(weft_net_port_destroy(in), 0);
    ASSERT_EQ(weft_net_port_destroy(full), 0);
    wt::join(a);
    wt::join(b);
    wt::join(c);
    EXPECT_EQ(r1, EPIPE);
    EXPECT_EQ(r2, EPIPE);
    EXPECT_EQ(st.port.index, in.index) << "recv_any names the destroyed port";
    EXPECT_EQ(r3, EPIPE);
    // The other port is untouched.
    ASSERT_EQ(weft_net_send(other, 0, &v, sizeof v), 0);
    EXPECT_EQ(weft_net_try_recv(other, &v, sizeof v, nullptr), 0);
}

TEST_F(Net, errors_for_bad_ports) {
    weft_port_id_t none{};
    int v = 0;
    EXPECT_EQ(weft_net_send(none, 0, &v, sizeof v), ENOTCONN) << "no job";
    EXPECT_EQ(weft_net_self_node(), -1);
    start(2);
    EXPECT_EQ(weft_net_init(nullptr), EBUSY);
    weft_port_id_t p = port();
    weft_port_id_t bad_node = p;
    bad_node.node = 2;
    weft_port_id_t bad_index = p;
    bad_index.index = 4000;
    weft_port_id_t huge_index = p;
    huge_index.index = 0xffffffffu;
    EXPECT_EQ(weft_net_send(bad_node, 0, &v, sizeof v), ENOENT);
    EXPECT_EQ(weft_net_send(bad_index, 0, &v, sizeof v), ENOENT);
    EXPECT_EQ(weft_net_send(huge_index, 0, &v, sizeof v), ENOENT);
    EXPECT_EQ(weft_net_recv(bad_index, &v, sizeof v, nullptr, 0), ENOENT);
    EXPECT_EQ(weft_net_send(p, 0, nullptr, 4), EINVAL);
    EXPECT_EQ(weft_net_port_create(&p, 0, 10), EINVAL);
    // A port of node 1: node 0 may send to it, not receive from or destroy it.
    weft_port_id_t q{};
    wt::join(spawn_on(1, [&] { EXPECT_EQ(weft_net_port_create(&q, 4, 64), 0); }));
    EXPECT_EQ(q.node, 1u);
    EXPECT_EQ(weft_net_send(q, 0, &v, sizeof v), 0);
    EXPECT_EQ(weft_net_recv(q, &v, sizeof v, nullptr, 0), EPERM);
    EXPECT_EQ(weft_net_port_destroy(q), EPERM);
    wt::join(spawn_on(1, [&] { EXPECT_EQ(weft_net_port_destroy(q), 0); }));
    // The message sent to q was dropped with it: this thread's next receive says so.
    weft_net_status_t st{};
    EXPECT_EQ(weft_net_try_recv(p, &v, sizeof v, &st), ECONNABORTED);
    EXPECT_EQ(st.port.index, q.index);
    EXPECT_EQ(weft_net_try_recv(p, &v, sizeof v, &st), EAGAIN) << "a loss is reported once";
    // Destroyed, and its slot reused: the old ID stays invalid.
    ASSERT_EQ(weft_net_port_destroy(p), 0);
    EXPECT_EQ(weft_net_send(p, 0, &v, sizeof v), ENOENT);
    EXPECT_EQ(weft_net_port_destroy(p), ENOENT);
    weft_port_id_t reused = port();
    EXPECT_EQ(reused.index, p.index);
    EXPECT_NE(reused.gen, p.gen);
    EXPECT_EQ(weft_net_send(p, 0, &v, sizeof v), ENOENT);
    EXPECT_EQ(weft_net_try_recv(reused, &v, sizeof v, nullptr), EAGAIN) << "nothing reached the new port";
}

TEST_F(Net, small_buffer_is_emsgsize_and_leaves_the_message) {
    start(1);
    weft_port_id_t p = port();
    char text[40] = "a message longer than eight bytes";
    ASSERT_EQ(weft_net_send(p, 4, text, sizeof text), 0);
    char small[8];
    weft_net_status_t st{};
    EXPECT_EQ(weft_net_recv(p, small, sizeof small, &st, WEFT_NET_FOREVER), EMSGSIZE);
    EXPECT_EQ(st.len, sizeof text);
    EXPECT_EQ(weft_net_try_recv(p, small, sizeof small, &st), EMSGSIZE);
    char big[64];
    ASSERT_EQ(weft_net_recv(p, big, sizeof big, &st, 0), 0);
    EXPECT_STREQ(big, text);
    // A receiver blocked with a small buffer: the message is queued, not handed over.
    weft_thread_t r =
        wt::go([&] { EXPECT_EQ(weft_net_recv(p, small, sizeof small, &st, WEFT_NET_FOREVER), EMSGSIZE); });
    let_others_run();
    ASSERT_EQ(weft_net_send(p, 4, text, sizeof text), 0);
    wt::join(r);
    EXPECT_EQ(weft_net_try_recv(p, big, sizeof big, &st), 0);
    EXPECT_EQ(st.len, sizeof text);
}

TEST_F(Net, nodes_of_threads) {
    start(3);
    EXPECT_EQ(weft_net_num_nodes(), 3);
    EXPECT_EQ(weft_net_self_node(), 0) << "the caller of weft_net_init";
    int child_node = -1, grandchild_node = -1;
    wt::join(spawn_on(2, [&] {
        child_node = weft_net_self_node();
        wt::join(wt::go([&] { grandchild_node = weft_net_self_node(); }));
    }));
    EXPECT_EQ(child_node, 2);
    EXPECT_EQ(grandchild_node, 2) << "a thread's node is inherited by the threads it creates";
    weft_thread_t t;
    EXPECT_EQ(weft_net_spawn(&t, 3, nullptr, [](void*) -> void* { return nullptr; }, nullptr), EINVAL);
}

TEST_F(Net, finalize_refuses_while_a_thread_waits) {
    start(1);
    weft_port_id_t p = port();
    int v = 0;
    weft_thread_t r = wt::go([&] { EXPECT_EQ(weft_net_recv(p, &v, sizeof v, nullptr, WEFT_NET_FOREVER), 0); });
    let_others_run();
    EXPECT_EQ(weft_net_finalize(), EBUSY);
    ASSERT_EQ(weft_net_send(p, 0, &v, sizeof v), 0);
    wt::join(r);
}

TEST_F(Net, injected_latency_delays_messages_to_other_nodes) {
    constexpr std::int64_t alpha = 3'000'000, beta = 1000;  // 3 ms + 1 us per byte
    start(2, alpha, beta);
    weft_port_id_t p = port();
    char payload[100] = {};
    std::vector<weft_net_status_t> sts(3);
    std::vector<std::int64_t> received_at(3);
    weft_thread_t s = spawn_on(1, [&] {
        for (int i = 0; i < 3; ++i) ASSERT_EQ(weft_net_send(p, i, payload, sizeof payload), 0);
    });
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(weft_net_recv(p, payload, sizeof payload, &sts[i], WEFT_NET_FOREVER), 0);
        received_at[i] = wt::now_ns();
    }
    wt::join(s);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(sts[i].tag, i) << "in order";
        EXPECT_EQ(sts[i].ready_ns - sts[i].sent_ns, alpha + beta * std::int64_t(sizeof payload));
        EXPECT_GE(received_at[i], sts[i].ready_ns) << "received before its delay";
    }
    // A same-node message is not delayed.
    int v = 1;
    ASSERT_EQ(weft_net_send(p, 0, &v, sizeof v), 0);
    EXPECT_EQ(weft_net_try_recv(p, &v, sizeof v, nullptr), 0);
}

TEST_F(Net, delayed_message_is_not_receivable_before_its_time) {
    start(2, 10'000'000'000, 0);  // 10 s: far longer than this test
    weft_port_id_t p = port();
    wt::join(spawn_on(1, [&] {
        int v = 1;
        EXPECT_EQ(weft_net_send(p, 0, &v, sizeof v), 0);
    }));
    int v = 0;
    EXPECT_EQ(weft_net_try_recv(p, &v, sizeof v, nullptr), EAGAIN);
    EXPECT_EQ(weft_net_recv(p, &v, sizeof v, nullptr, 1'000'000), ETIMEDOUT);
    EXPECT_EQ(weft_net_port_destroy(p), 0) << "drops the message in flight";
}

TEST_F(Net, environment_is_validated) {
    {
        wt::scoped_env e("WEFT_NET", "carrier-pigeon");
        EXPECT_EQ(weft_net_init(nullptr), EINVAL);
    }
    for (const char* bad : {"5", "5,", ",5", "1,2,3", "-1,2", "1, 2", "99999999999,0", "0,2000000"}) {
        wt::scoped_env e("WEFT_NET_LATENCY", bad);
        EXPECT_EQ(weft_net_init(nullptr), EINVAL) << bad;
    }
    {
        wt::scoped_env e("WEFT_NET", "INPROC");
        wt::scoped_env l("WEFT_NET_LATENCY", "1000,2");
        ASSERT_EQ(weft_net_init(nullptr), 0);
        EXPECT_EQ(weft_net_finalize(), 0);
    }
    {
        wt::scoped_env e("WEFT_NET", "Faulty");  // the protocol over the fault-injecting link, any case
        ASSERT_EQ(weft_net_init(nullptr), 0);
        EXPECT_STREQ(weft_net_transport(), "faulty");
        EXPECT_EQ(weft_net_finalize(), 0);
    }
    {
        wt::scoped_env e("WEFT_NET", "faulty,seed=3");
        EXPECT_EQ(weft_net_init(nullptr), EINVAL);
    }
    weft_net_config_t c{};
    c.nodes = 1025;
    EXPECT_EQ(weft_net_init(&c), EINVAL);
    c.nodes = 1;
    c.latency_alpha_ns = -1;
    EXPECT_EQ(weft_net_init(&c), EINVAL);
}

TEST_F(Net, close_refuses_new_messages_and_lets_receivers_drain) {
    start(2);
    weft_port_id_t p = port(1, 64);
    int v = 1;
    ASSERT_EQ(weft_net_send(p, 0, &v, sizeof v), 0);
    // A sender blocked on the full port, and a waiting receiver on another.
    int send_rc = -1, recv_rc = -1;
    weft_port_id_t q = port();
    auto sender = [&] {
        int w = 2;
        send_rc = weft_net_send(p, 0, &w, sizeof w);
    };
    auto receiver = [&] {
        int w = 0;
        recv_rc = weft_net_recv(q, &w, sizeof w, nullptr, WEFT_NET_FOREVER);
    };
    weft_thread_t ts = spawn_on(1, sender);
    weft_thread_t tr = spawn_on(0, receiver);
    let_others_run();
    EXPECT_EQ(weft_net_port_close(p), 0);
    EXPECT_EQ(weft_net_port_close(q), 0);
    ASSERT_EQ(weft_thread_join(ts, nullptr), 0);
    ASSERT_EQ(weft_thread_join(tr, nullptr), 0);
    EXPECT_EQ(send_rc, EPIPE) << "a blocked sender fails";
    EXPECT_EQ(recv_rc, EPIPE) << "a receiver of an empty closed port stops waiting";
    EXPECT_EQ(weft_net_send(p, 0, &v, sizeof v), EPIPE) << "a new send fails";
    EXPECT_EQ(weft_net_port_close(p), 0) << "closing twice does nothing";
    int got = 0;
    EXPECT_EQ(weft_net_recv(p, &got, sizeof got, nullptr, WEFT_NET_FOREVER), 0) << "what was buffered is received";
    EXPECT_EQ(got, 1);
    EXPECT_EQ(weft_net_recv(p, &got, sizeof got, nullptr, WEFT_NET_FOREVER), EPIPE);
    weft_port_id_t both[2] = {q, p};
    weft_net_status_t st{};
    EXPECT_EQ(weft_net_recv_any(both, 2, &got, sizeof got, &st, WEFT_NET_FOREVER), EPIPE);
    weft_port_id_t other{};
    ASSERT_EQ(weft_thread_join(spawn_on(1, [&] { EXPECT_EQ(weft_net_port_close(p), EPERM); }), nullptr), 0);
    EXPECT_EQ(weft_net_port_destroy(p), 0);
    EXPECT_EQ(weft_net_port_close(p), ENOENT);
    EXPECT_EQ(weft_net_port_destroy(q), 0);
    EXPECT_EQ(weft_net_port_create(&other, 1, 8), 0);
    EXPECT_EQ(weft_net_send(other, 0, &v, sizeof v), 0) << "a reused slot is open again";
    EXPECT_EQ(weft_net_port_destroy(other), 0);
}

}  // namespace
