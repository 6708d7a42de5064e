// Class: negative. The edges of the message-passing and RPC API as
// include/weft/weft.h and weft/rpc.h specify them, tried as a new user would:
// every length and size at 0, the bound, the bound + 1, SIZE_MAX / 2 and
// SIZE_MAX (refused before anything is allocated for it); ports of a node
// that does not exist; a closed, empty port; timeouts below zero; the
// transport's name.
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "support/net_test.hpp"
#include "support/weft_test.hpp"
#include "weft/rpc.h"

namespace {

class NetLimits : public wt::net_fixture {};

// The lengths a same-node and a cross-node send to a port of max_bytes 64
// must refuse with EMSGSIZE, whatever they are.
void expect_refused_lengths(const weft_port_id_t& p) {
    unsigned char buf[128] = {};
    for (std::size_t len : {std::size_t(65), std::size_t(1) << 20, std::size_t(1) << 40, SIZE_MAX / 2,
                            SIZE_MAX - 63, SIZE_MAX - 1, SIZE_MAX}) {
        EXPECT_EQ(weft_net_send(p, 0, buf, len), EMSGSIZE) << "len " << len;
    }
}

TEST_F(NetLimits, send_length_is_checked_against_the_port_before_any_allocation) {
    start(2);
    weft_port_id_t p{};
    ASSERT_EQ(weft_net_port_create(&p, 8, 64), 0);
    unsigned char buf[128] = {};
    EXPECT_EQ(weft_net_send(p, 0, buf, 0), 0) << "0 bytes";
    EXPECT_EQ(weft_net_send(p, 0, buf, 64), 0) << "max_bytes";
    expect_refused_lengths(p);
    // From another node (the inproc transport's path), with its injected delay.
    wt::run_on(1, [&] { expect_refused_lengths(p); });
    // With a receiver waiting (the hand-off path).
    int got_rc = -1;
    weft_net_status_t st{};
    EXPECT_EQ(weft_net_recv(p, buf, sizeof buf, &st, 0), 0);
    EXPECT_EQ(st.len, 0u);
    EXPECT_EQ(weft_net_recv(p, buf, sizeof buf, &st, 0), 0);
    EXPECT_EQ(st.len, 64u);
    auto receive = [&] { got_rc = weft_net_recv(p, buf, sizeof buf, &st, WEFT_NET_FOREVER); };
    weft_thread_t r = wt::spawn_on(0, &receive);
    let_others_run();
    expect_refused_lengths(p);
    unsigned char one = 7;
    ASSERT_EQ(weft_net_send(p, 3, &one, 1), 0);
    ASSERT_EQ(weft_thread_join(r, nullptr), 0);
    EXPECT_EQ(got_rc, 0);
    EXPECT_EQ(st.len, 1u) << "the receiver got the message that fits, nothing else";
    EXPECT_EQ(weft_net_try_recv(p, buf, sizeof buf, nullptr), EAGAIN) << "no refused message was buffered";
    // A receive's capacity is a bound, not an allocation.
    ASSERT_EQ(weft_net_send(p, 0, &one, 1), 0);
    EXPECT_EQ(weft_net_recv(p, buf, SIZE_MAX, &st, 0), 0);
    EXPECT_EQ(st.len, 1u);
    EXPECT_EQ(weft_net_port_destroy(p), 0);
}

TEST_F(NetLimits, port_sizes_are_bounded) {
    start(1);
    weft_port_id_t p{};
    EXPECT_EQ(weft_net_port_create(&p, 0, 64), EINVAL) << "max_msgs 0";
    EXPECT_EQ(weft_net_port_create(&p, 4, 0), EINVAL) << "max_bytes 0";
    EXPECT_EQ(weft_net_port_create(&p, 4, WEFT_NET_PORT_MAX_BYTES + 1), EINVAL);
    EXPECT_EQ(weft_net_port_create(&p, 4, SIZE_MAX / 2), EINVAL);
    EXPECT_EQ(weft_net_port_create(&p, 4, SIZE_MAX), EINVAL);
    // The largest bounds are taken (nothing is allocated for them), and a
    // send's length is still checked against them without overflow.
    ASSERT_EQ(weft_net_port_create(&p, SIZE_MAX, WEFT_NET_PORT_MAX_BYTES), 0);
    unsigned char buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    EXPECT_EQ(weft_net_send(p, 0, buf, WEFT_NET_PORT_MAX_BYTES + 1), EMSGSIZE);
    EXPECT_EQ(weft_net_send(p, 0, buf, SIZE_MAX), EMSGSIZE);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(weft_net_send(p, i, buf, sizeof buf), 0);
    for (int i = 0; i < 3; ++i) {
        unsigned char got[8] = {};
        weft_net_status_t st{};
        EXPECT_EQ(weft_net_try_recv(p, got, sizeof got, &st), 0);
        EXPECT_EQ(st.tag, i);
        EXPECT_EQ(std::memcmp(got, buf, sizeof buf), 0);
    }
    EXPECT_EQ(weft_net_port_destroy(p), 0);
}

TEST_F(NetLimits, rpc_argument_length_is_checked_before_any_allocation) {
    start(1);
    weft_port_id_t names{};
    ASSERT_EQ(weft_net_names_port(&names), 0);
    unsigned char in[16] = {};
    char out[16];
    std::size_t len = 99;
    for (std::size_t n : {WEFT_RPC_MAX_PAYLOAD + 1, SIZE_MAX / 2, SIZE_MAX}) {
        EXPECT_EQ(weft_rpc_call(names, 1, in, n, out, sizeof out, &len, 0), EINVAL) << "in_len " << n;
        EXPECT_EQ(len, 0u);
        weft_rpc_result_t res{};
        EXPECT_EQ(weft_rpc_call_typed(names, 1, 0, in, n, 0, &res), EINVAL) << "in_len " << n;
    }
}

TEST_F(NetLimits, ports_of_a_node_that_does_not_exist_are_enoent) {
    start(2);
    unsigned char buf[4] = {};
    for (std::uint32_t node : {2u, 1000u, UINT32_MAX}) {
        weft_port_id_t p{node, 0, 0, 0};
        EXPECT_EQ(weft_net_send(p, 0, buf, sizeof buf), ENOENT) << "node " << node;
        EXPECT_EQ(weft_net_recv(p, buf, sizeof buf, nullptr, WEFT_NET_FOREVER), ENOENT) << "node " << node;
        EXPECT_EQ(weft_net_try_recv(p, buf, sizeof buf, nullptr), ENOENT) << "node " << node;
        weft_net_status_t st{};
        EXPECT_EQ(weft_net_recv_any(&p, 1, buf, sizeof buf, &st, WEFT_NET_FOREVER), ENOENT) << "node " << node;
        EXPECT_EQ(st.port.node, node);
        EXPECT_EQ(weft_net_port_destroy(p), ENOENT) << "node " << node;
        EXPECT_EQ(weft_net_port_close(p), ENOENT) << "node " << node;
    }
}

TEST_F(NetLimits, try_recv_of_a_closed_port_takes_what_is_left_then_epipe) {
    start(1);
    weft_port_id_t p{};
    ASSERT_EQ(weft_net_port_create(&p, 4, 64), 0);
    int v = 5, got = 0;
    ASSERT_EQ(weft_net_send(p, 0, &v, sizeof v), 0);
    ASSERT_EQ(weft_net_port_close(p), 0);
    EXPECT_EQ(weft_net_try_recv(p, &got, sizeof got, nullptr), 0);
    EXPECT_EQ(got, 5);
    EXPECT_EQ(weft_net_try_recv(p, &got, sizeof got, nullptr), EPIPE) << "closed and empty: not EAGAIN";
    EXPECT_EQ(weft_net_recv(p, &got, sizeof got, nullptr, 0), EPIPE) << "a look with timeout 0: not ETIMEDOUT";
    EXPECT_EQ(weft_net_port_destroy(p), 0);
}

TEST_F(NetLimits, negative_timeouts_other_than_forever_are_einval) {
    start(1);
    weft_port_id_t p{};
    ASSERT_EQ(weft_net_port_create(&p, 4, 64), 0);
    int v = 1, got = 0;
    // A message is waiting: a timeout that were taken would receive it.
    ASSERT_EQ(weft_net_send(p, 0, &v, sizeof v), 0);
    weft_net_status_t st{};
    for (std::int64_t t : {std::int64_t(-2), std::int64_t(-1'000'000'000), INT64_MIN}) {
        EXPECT_EQ(weft_net_recv(p, &got, sizeof got, &st, t), EINVAL) << "timeout " << t;
        EXPECT_EQ(weft_net_recv_any(&p, 1, &got, sizeof got, &st, t), EINVAL) << "timeout " << t;
        weft_port_id_t found{};
        EXPECT_EQ(weft_net_name_lookup("nobody", &found, t), EINVAL) << "timeout " << t;
        weft_port_id_t names{};
        ASSERT_EQ(weft_net_names_port(&names), 0);
        std::size_t len = 0;
        EXPECT_EQ(weft_rpc_call(names, 1, nullptr, 0, nullptr, 0, &len, t), EINVAL) << "timeout " << t;
    }
    EXPECT_EQ(weft_net_recv(p, &got, sizeof got, &st, WEFT_NET_FOREVER), 0) << "WEFT_NET_FOREVER is taken";
    EXPECT_EQ(got, 1);
    EXPECT_EQ(weft_net_port_destroy(p), 0);
}

TEST_F(NetLimits, the_transport_is_named) {
    EXPECT_EQ(weft_net_transport(), nullptr) << "no job";
    start(2);
    ASSERT_NE(weft_net_transport(), nullptr);
    EXPECT_STREQ(weft_net_transport(), "inproc");
}

}  // namespace
