// Class: requirement, negative. A message dropped by weft_net_port_destroy
// is reported to its sender (include/weft/weft.h, weft_net_port_destroy;
// docs/design/net.md, "Destroy and errors"): the sender's receive that waits,
// or its next one, returns ECONNABORTED naming the lost message's port, so a
// thread that sends a request once and then waits for the reply does not
// wait for ever. Under every scheduler, at 1 and 2 workers.
#include <atomic>
#include <cerrno>
#include <cstdint>

#include "support/net_test.hpp"
#include "support/weft_test.hpp"

namespace {

class NetLossConcurrent : public wt::net_job_fixture<2> {
protected:
    static weft_port_id_t port() {
        weft_port_id_t p{};
        EXPECT_EQ(weft_net_port_create(&p, 16, 4096), 0);
        return p;
    }
    static bool same(const weft_port_id_t& a, const weft_port_id_t& b) {
        return a.node == b.node && a.index == b.index && a.gen == b.gen;
    }
    // Lets the sender reach its wait where the scheduler allows it (one
    // worker: it has blocked; more: it may or may not have: both orders of
    // the wait and the destroy must give the same answer).
public:
    static void let_others_run() {
        for (int i = 0; i < 8; ++i) weft_thread_yield();
    }
};

struct sender_result {
    int rc = -1;
    weft_net_status_t st{};
};

// A sender on `node` sends one request to `to`, then waits for its reply on a
// port of its own (recv_any over two of them when `any`), for ever.
struct request_then_wait {
    weft_port_id_t to{};
    bool any = false;
    std::atomic<bool> sent{false};
    sender_result out;
    void operator()() {
        weft_port_id_t replies[2]{};
        EXPECT_EQ(weft_net_port_create(&replies[0], 4, 64), 0);
        EXPECT_EQ(weft_net_port_create(&replies[1], 4, 64), 0);
        int req = 42;
        EXPECT_EQ(weft_net_send(to, 1, &req, sizeof req), 0);
        sent.store(true);
        int reply = 0;
        out.rc = any ? weft_net_recv_any(replies, 2, &reply, sizeof reply, &out.st, WEFT_NET_FOREVER)
                     : weft_net_recv(replies[0], &reply, sizeof reply, &out.st, WEFT_NET_FOREVER);
        // Reported once: the next look finds nothing.
        EXPECT_EQ(weft_net_try_recv(replies[0], &reply, sizeof reply, nullptr), EAGAIN);
        EXPECT_EQ(weft_net_port_destroy(replies[0]), 0);
        EXPECT_EQ(weft_net_port_destroy(replies[1]), 0);
    }
};

void run_case(int sender_node, bool any, bool destroy_first) {
    weft_port_id_t server{};
    ASSERT_EQ(weft_net_port_create(&server, 16, 4096), 0);  // on node 0; nobody receives from it
    request_then_wait s;
    s.to = server;
    s.any = any;
    weft_thread_t t = wt::spawn_on(sender_node, &s);
    while (!s.sent.load()) weft_thread_yield();
    if (!destroy_first) NetLossConcurrent::let_others_run();
    ASSERT_EQ(weft_net_port_destroy(server), 0);  // drops the request
    ASSERT_EQ(weft_thread_join(t, nullptr), 0);   // a sender that is never told hangs here
    EXPECT_EQ(s.out.rc, ECONNABORTED) << "the sender's wait must say its request was dropped";
    EXPECT_TRUE(s.out.st.port.node == server.node && s.out.st.port.index == server.index &&
                s.out.st.port.gen == server.gen)
        << "st->port names the port the lost message was sent to";
}

TEST_P(NetLossConcurrent, a_sender_blocked_for_its_reply_is_told_its_request_was_dropped) {
    for (int i = 0; i < 50; ++i) run_case(0, false, false);
}

TEST_P(NetLossConcurrent, a_sender_is_told_by_its_next_wait_when_the_drop_came_first) {
    // The sender's wait may come after the destroy: it reports the loss at once.
    weft_port_id_t server = port();
    sender_result out;
    auto f = [&] {
        weft_port_id_t reply = port();
        int req = 1;
        EXPECT_EQ(weft_net_send(server, 1, &req, sizeof req), 0);
        EXPECT_EQ(weft_net_port_destroy(server), 0);  // same node: this thread drops its own request
        out.rc = weft_net_recv(reply, &req, sizeof req, &out.st, WEFT_NET_FOREVER);
        EXPECT_EQ(weft_net_recv(reply, &req, sizeof req, nullptr, 0), ETIMEDOUT) << "reported once";
        EXPECT_EQ(weft_net_port_destroy(reply), 0);
    };
    ASSERT_EQ(weft_thread_join(wt::spawn_on(0, &f), nullptr), 0);
    EXPECT_EQ(out.rc, ECONNABORTED);
    EXPECT_TRUE(same(out.st.port, server));
}

TEST_P(NetLossConcurrent, recv_any_is_told_too) {
    for (int i = 0; i < 50; ++i) run_case(0, true, false);
}

TEST_P(NetLossConcurrent, a_sender_on_another_node_is_told) {
    for (int i = 0; i < 50; ++i) run_case(1, i % 2 == 0, i % 3 == 0);
}

TEST_P(NetLossConcurrent, a_message_received_is_no_loss_and_a_waiting_reply_comes_first) {
    weft_port_id_t server = port();
    sender_result out;
    auto f = [&] {
        weft_port_id_t reply = port();
        int v = 7;
        EXPECT_EQ(weft_net_send(server, 1, &v, sizeof v), 0);
        EXPECT_EQ(weft_net_recv(server, &v, sizeof v, nullptr, WEFT_NET_FOREVER), 0);
        EXPECT_EQ(weft_net_send(server, 2, &v, sizeof v), 0);
        EXPECT_EQ(weft_net_send(reply, 3, &v, sizeof v), 0);
        EXPECT_EQ(weft_net_port_destroy(server), 0);  // drops the second message only
        // A message already there is received; the loss comes with the next wait.
        EXPECT_EQ(weft_net_recv(reply, &v, sizeof v, &out.st, WEFT_NET_FOREVER), 0);
        EXPECT_EQ(out.st.tag, 3);
        out.rc = weft_net_recv(reply, &v, sizeof v, &out.st, WEFT_NET_FOREVER);
        EXPECT_EQ(weft_net_port_destroy(reply), 0);
    };
    ASSERT_EQ(weft_thread_join(wt::spawn_on(0, &f), nullptr), 0);
    EXPECT_EQ(out.rc, ECONNABORTED);
    EXPECT_TRUE(same(out.st.port, server));
}

INSTANTIATE_TEST_SUITE_P(Schedulers, NetLossConcurrent, ::testing::ValuesIn(wt::rt_params({1, 2})),
                         wt::rt_param_name);

}  // namespace
