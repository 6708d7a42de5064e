// Class: requirement, negative. A receive on a port while a transport's
// progress hook is set (src/core/progress.hpp, poll_before_wait; src/net/port.cpp,
// recv_one): the receiving thread polls the hook itself, linked as a receiver,
// and what the hook puts into the port meanwhile is handed to it; a port
// destroyed or closed under it, a message too long for its buffer and a
// deadline end the poll with the error a blocked receiver gets. The hook here
// stands in for a network transport: it puts messages with port_try_put, as
// the mpi transport's progress step does.
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <vector>

#include "base/primitives.hpp"
#include "core/progress.hpp"
#include "net/port.hpp"
#include "support/net_test.hpp"

namespace {

using namespace weft::detail;

// What the stand-in transport does on a poll; one at a time (the core runs the
// hook on one worker at a time only if it try-locks: this one takes a spinlock).
struct fake_wire {
    weft_port_id_t port{};
    weft_thread_t receiver = WEFT_THREAD_NULL;
    int deliver_on = 0;        // the receiver's poll that acts (1-based); 0: never
    enum class act { put, destroy, close } what = act::put;
    std::size_t len = 8;
    std::atomic<int> receiver_polls{0};
    std::atomic<int> other_polls{0};
    std::atomic<int> rc{-1};   // what the action returned
    // After the put, the port's queue as a zero-byte try_recv sees it:
    // EMSGSIZE if the message was queued, EAGAIN if it was handed over.
    std::atomic<int> queue_after_put{-1};
};

bool poll_fake(void* ctx, bool) {
    auto* w = static_cast<fake_wire*>(ctx);
    if (weft_thread_self() != w->receiver) {
        w->other_polls.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    int n = w->receiver_polls.fetch_add(1, std::memory_order_relaxed) + 1;
    if (n != w->deliver_on) return false;
    switch (w->what) {
    case fake_wire::act::put: {
        std::vector<unsigned char> bytes(w->len);
        for (std::size_t i = 0; i < w->len; ++i) bytes[i] = static_cast<unsigned char>(i * 7 + 1);
        net::msg_header h;
        h.tag = 42;
        h.source = 1;
        w->rc = net::port_try_put(*net::current_job(), w->port, h, bytes.data(), bytes.size());
        weft_net_status_t st{};
        w->queue_after_put = weft_net_try_recv(w->port, nullptr, 0, &st);  // takes nothing: cap 0
        break;
    }
    case fake_wire::act::destroy: w->rc = weft_net_port_destroy(w->port); break;
    case fake_wire::act::close: w->rc = weft_net_port_close(w->port); break;
    }
    return true;
}

class NetPolling : public wt::net_fixture {
protected:
    void SetUp() override {
        net_fixture::SetUp();
        start(2);
    }
    void TearDown() override {
        if (hooked_) clear_progress_hook();
        net_fixture::TearDown();
    }
    // Receives once on a port of node 0 from a thread polling `wire`; returns
    // recv's result and fills st and buf.
    int receive(fake_wire& wire, std::size_t cap, std::vector<unsigned char>& buf, weft_net_status_t& st,
                std::int64_t timeout_ns = WEFT_NET_FOREVER, std::size_t port_bytes = 1024) {
        wt::run_on(0, [&] { EXPECT_EQ(weft_net_port_create(&wire.port, 4, port_bytes), 0); });
        EXPECT_TRUE(set_progress_hook(&poll_fake, &wire));
        hooked_ = true;
        buf.assign(cap, 0);
        int rc = -1;
        auto body = [&] { rc = weft_net_recv(wire.port, buf.data(), cap, &st, timeout_ns); };
        // The receiver's handle is the wire's before it polls: spawned, it
        // first runs when this thread joins it (one worker, fifo).
        wire.receiver = wt::spawn_on(0, &body);
        EXPECT_EQ(weft_thread_join(wire.receiver, nullptr), 0);
        clear_progress_hook();
        hooked_ = false;
        return rc;
    }
    bool hooked_ = false;
};

TEST_F(NetPolling, a_message_put_while_the_receiver_polls_is_handed_to_it) {
    fake_wire wire;
    wire.deliver_on = 3;
    std::vector<unsigned char> buf;
    weft_net_status_t st{};
    ASSERT_EQ(receive(wire, 64, buf, st), 0);
    EXPECT_EQ(wire.rc.load(), 0);
    EXPECT_GE(wire.receiver_polls.load(), 3) << "the receiving thread polled the hook itself";
    EXPECT_EQ(st.tag, 42);
    EXPECT_EQ(st.len, 8u);
    for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(buf[i], static_cast<unsigned char>(i * 7 + 1)) << i;
    EXPECT_EQ(wire.queue_after_put.load(), EAGAIN) << "handed straight into the polling receiver, never queued";
    wt::run_on(0, [&] { EXPECT_EQ(weft_net_port_destroy(wire.port), 0); });
}

TEST_F(NetPolling, a_message_too_long_for_the_polling_receiver_is_queued_and_reported) {
    fake_wire wire;
    wire.deliver_on = 2;
    wire.len = 100;
    std::vector<unsigned char> buf;
    weft_net_status_t st{};
    EXPECT_EQ(receive(wire, 16, buf, st), EMSGSIZE);
    EXPECT_EQ(wire.rc.load(), 0);
    EXPECT_EQ(wire.queue_after_put.load(), EMSGSIZE) << "too long for the receiver's buffer: queued";
    EXPECT_EQ(st.len, 100u) << "the status names the message's length";
    wt::run_on(0, [&] {
        std::vector<unsigned char> big(100);
        weft_net_status_t s2{};
        EXPECT_EQ(weft_net_try_recv(wire.port, big.data(), big.size(), &s2), 0) << "the message stayed queued";
        EXPECT_EQ(s2.len, 100u);
        EXPECT_EQ(big[99], static_cast<unsigned char>(99 * 7 + 1));
        EXPECT_EQ(weft_net_port_destroy(wire.port), 0);
    });
}

TEST_F(NetPolling, a_port_destroyed_under_the_polling_receiver_fails_it_with_epipe) {
    fake_wire wire;
    wire.deliver_on = 2;
    wire.what = fake_wire::act::destroy;
    std::vector<unsigned char> buf;
    weft_net_status_t st{};
    EXPECT_EQ(receive(wire, 16, buf, st), EPIPE);
    EXPECT_EQ(wire.rc.load(), 0);
}

TEST_F(NetPolling, a_port_closed_under_the_polling_receiver_fails_it_with_epipe) {
    fake_wire wire;
    wire.deliver_on = 2;
    wire.what = fake_wire::act::close;
    std::vector<unsigned char> buf;
    weft_net_status_t st{};
    EXPECT_EQ(receive(wire, 16, buf, st), EPIPE);
    EXPECT_EQ(wire.rc.load(), 0);
    wt::run_on(0, [&] { EXPECT_EQ(weft_net_port_destroy(wire.port), 0); });
}

TEST_F(NetPolling, a_timed_receive_with_nothing_coming_times_out) {
    fake_wire wire;  // delivers nothing
    std::vector<unsigned char> buf;
    weft_net_status_t st{};
    EXPECT_EQ(receive(wire, 16, buf, st, 2'000'000), ETIMEDOUT);
    EXPECT_GE(wire.receiver_polls.load(), 1);
    wt::run_on(0, [&] { EXPECT_EQ(weft_net_port_destroy(wire.port), 0); });
}

// Several workers: receivers poll while the hook, run by whichever worker gets
// it, puts a stream of messages into their ports; every message arrives once,
// in order.
class NetPollingConcurrency : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(All, NetPollingConcurrency, ::testing::ValuesIn(wt::rt_params({2, 4})), wt::rt_param_name);

struct stream_wire {
    static constexpr int kPorts = 3;
    weft_port_id_t ports[kPorts]{};
    std::int64_t per_port = 0;
    std::uint32_t lock = 0;                  // one poll at a time puts
    std::int64_t next[kPorts] = {};          // under lock
    std::atomic<bool> open{false};
};

bool poll_stream(void* ctx, bool) {
    auto* w = static_cast<stream_wire*>(ctx);
    if (!w->open.load(std::memory_order_acquire)) return false;
    spinlock_ref l(w->lock);
    l.lock();
    bool did = false;
    for (int p = 0; p < stream_wire::kPorts; ++p) {
        if (w->next[p] == w->per_port) continue;
        std::int64_t v = w->next[p];
        net::msg_header h;
        h.tag = p;
        if (net::port_try_put(*net::current_job(), w->ports[p], h, &v, sizeof v) == 0) {
            ++w->next[p];
            did = true;
        }
    }
    l.unlock();
    return did;
}

TEST_P(NetPollingConcurrency, streams_put_by_any_worker_reach_polling_receivers_in_order) {
    weft_net_config_t c{};
    c.nodes = 1;
    ASSERT_EQ(weft_net_init(&c), 0);
    stream_wire w;
    w.per_port = wt::scaled(3000, 100);
    for (auto& p : w.ports) ASSERT_EQ(weft_net_port_create(&p, 2, 64), 0);
    ASSERT_TRUE(set_progress_hook(&poll_stream, &w));
    std::atomic<int> errors{0};
    std::vector<weft_thread_t> ts;
    std::vector<std::function<void()>> bodies;
    bodies.reserve(stream_wire::kPorts);
    for (int p = 0; p < stream_wire::kPorts; ++p) {
        bodies.emplace_back([&w, &errors, p] {
            for (std::int64_t i = 0; i < w.per_port; ++i) {
                std::int64_t v = -1;
                weft_net_status_t st{};
                int rc = weft_net_recv(w.ports[p], &v, sizeof v, &st, WEFT_NET_FOREVER);
                if (rc != 0 || v != i || st.tag != p) errors.fetch_add(1);
            }
        });
        ts.push_back(wt::spawn_on(0, &bodies.back()));
    }
    w.open.store(true, std::memory_order_release);
    for (weft_thread_t t : ts) EXPECT_EQ(weft_thread_join(t, nullptr), 0);
    clear_progress_hook();
    EXPECT_EQ(errors.load(), 0);
    for (int p = 0; p < stream_wire::kPorts; ++p) EXPECT_EQ(w.next[p], w.per_port);
    for (auto& p : w.ports) EXPECT_EQ(weft_net_port_destroy(p), 0);
    EXPECT_EQ(weft_net_finalize(), 0);
}

}  // namespace
