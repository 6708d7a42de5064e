// Class: requirement, negative. The C++ message-passing API (weft/net.hpp):
// RAII job and port, typed send/recv of values and spans, optional results for
// try_recv/recv_for, and the errors of a message that does not fit T.
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <span>

#include "support/weft_test.hpp"
#include "weft/net.hpp"

namespace {

using namespace std::chrono_literals;

class NetCxx : public wt::single_runtime_fixture {};

struct point {
    double x, y;
};

TEST_F(NetCxx, typed_values_spans_and_optionals) {
    weft::net::job job(2);
    EXPECT_EQ(weft::net::num_nodes(), 2);
    weft::net::port inbox(8, 1024);
    weft::net::send(inbox.id(), 1, point{1.5, -2.0});
    weft::net::status st{};
    point p = weft::net::recv<point>(inbox.id(), &st);
    EXPECT_EQ(p.x, 1.5);
    EXPECT_EQ(p.y, -2.0);
    EXPECT_EQ(st.tag, 1);

    std::array<std::int32_t, 5> out{1, 2, 3, 4, 5};
    weft::net::send(inbox.id(), 2, std::span<const std::int32_t>(out));
    std::array<std::int32_t, 8> in{};
    EXPECT_EQ(weft::net::recv(inbox.id(), std::span<std::int32_t>(in)), 5u);
    EXPECT_EQ(in[4], 5);

    EXPECT_FALSE(weft::net::try_recv<int>(inbox.id()).has_value());
    EXPECT_FALSE(weft::net::recv_for<int>(inbox.id(), 1ms).has_value());
    weft::net::send(inbox.id(), 0, 7);
    EXPECT_EQ(weft::net::try_recv<int>(inbox.id()).value_or(-1), 7);
}

TEST_F(NetCxx, wrong_sizes_and_destroyed_ports_throw) {
    weft::net::job job(1);
    weft::net::port inbox(8, 1024);
    weft::net::send(inbox.id(), 0, std::int64_t{1});
    try {
        (void)weft::net::recv<std::int32_t>(inbox.id());
        ADD_FAILURE() << "a longer message must not fit";
    } catch (const weft::error& e) {
        EXPECT_EQ(e.code().value(), EMSGSIZE);
    }
    EXPECT_EQ(weft::net::recv<std::int64_t>(inbox.id()), 1) << "left queued by the failed receive";
    weft::net::send(inbox.id(), 0, std::int16_t{2});
    try {
        (void)weft::net::recv<std::int32_t>(inbox.id());
        ADD_FAILURE() << "a shorter message is not a T";
    } catch (const weft::error& e) {
        EXPECT_EQ(e.code().value(), EBADMSG);
    }
    weft::net::port_id old{};
    {
        weft::net::port gone(1, 16);
        old = gone.id();
        weft::net::port moved(std::move(gone));
        EXPECT_TRUE(moved.id() == old);
    }
    try {
        weft::net::send(old, 0, 1);
        ADD_FAILURE() << "the port was destroyed with its owner";
    } catch (const weft::error& e) {
        EXPECT_EQ(e.code().value(), ENOENT);
    }
}

TEST_F(NetCxx, spawn_on_a_node_and_the_transport_name) {
    EXPECT_TRUE(weft::net::transport().empty()) << "no job";
    weft::net::job job(3);
    EXPECT_EQ(weft::net::transport(), "inproc");
    weft::net::port inbox(4, 64);
    int seen_node = -1;
    weft::net::node_thread t = weft::net::spawn(
        2,
        [&](int v) {
            seen_node = weft::net::self_node();
            weft::net::send(inbox.id(), 5, v);
        },
        41);
    t.join();
    EXPECT_FALSE(t.joinable());
    EXPECT_EQ(seen_node, 2);
    weft::net::status st{};
    EXPECT_EQ(weft::net::recv<int>(inbox.id(), &st), 41);
    EXPECT_EQ(st.source, 2u) << "the message is the node's";
    // What the thread throws reaches join.
    auto thrower = weft::net::spawn(1, [] { throw weft::error(EDOM, "in the thread"); });
    try {
        thrower.join();
        ADD_FAILURE() << "join must rethrow";
    } catch (const weft::error& e) {
        EXPECT_EQ(e.code().value(), EDOM);
    }
    try {
        (void)weft::net::spawn(3, [] {});
        ADD_FAILURE() << "node 3 of 3 does not exist";
    } catch (const weft::error& e) {
        EXPECT_EQ(e.code().value(), EINVAL);
    }
    // Destroying a joinable one joins it.
    int ran = 0;
    { auto quiet = weft::net::spawn(1, [&] { ran = 1; }); }
    EXPECT_EQ(ran, 1);
}

}  // namespace
