// Class: requirement, concurrency. A full port's senders and its receiver
// never both sleep (docs/design/net.md, "The buffer and back-pressure"): every
// sender blocked on a full port is woken, in turn, once there is room, however
// the room is used meanwhile (messages queued, or handed straight to a waiting
// receiver). Many senders, each with a few messages, into a port with room for
// one or two: senders queue, a receive wakes one, and that one often finds the
// receiver already waiting and hands its message over without queueing it.
// Under every scheduler, at 1 and 2 workers. A receive that finds nothing for
// far longer than any sender needs reports the port's state (what it holds,
// who waits) instead of hanging.
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "core/wait.hpp"
#include "net/port.hpp"
#include "support/net_test.hpp"
#include "support/weft_test.hpp"

namespace {

namespace net = weft::detail::net;

// The bound a full port puts on its senders: by count or by bytes.
struct full_port_shape {
    std::size_t max_msgs;
    std::size_t max_bytes;
};

constexpr std::size_t kLen = 64;  // every message's length
constexpr int kNodes = 3;
constexpr int kSenders = 8;  // per round, spread over the nodes
constexpr int kRounds = 24;
// Messages per sender in a round: 1, 2 or 3. A sender with one message ends
// once it is in (the hang: nobody else puts one), one with more keeps
// putting while others wait.
int each_in(int round) { return 1 + round % 3; }
// Whether the receiver lets the senders run before its first receive, so
// that they fill the port and block whatever order the scheduler runs them
// in (lifo runs each new sender at once, into a receiver already waiting).
bool senders_first_in(int round) { return (round / 3) % 2 == 1; }
// How long a receive waits for the next message before the test calls it a
// hang: far beyond what any sender needs, well within the test's watchdog.
constexpr std::int64_t kStallNs = 20'000'000'000;

class NetFullPortConcurrent : public wt::net_job_fixture<kNodes> {
protected:
    void rounds(const full_port_shape& shape);
};

struct sender {
    weft_port_id_t to{};
    int id = 0;
    int each = 0;
    int sent = 0;  // sends that returned 0
    int rc = 0;
    void operator()() {
        for (int seq = 0; seq < each && rc == 0; ++seq) {
            unsigned char msg[kLen] = {};
            std::memcpy(msg, &id, sizeof id);
            std::memcpy(msg + sizeof id, &seq, sizeof seq);
            rc = weft_net_send(to, id * 1000 + seq, msg, sizeof msg);
            if (rc == 0) ++sent;
        }
    }
};

// What port `id` holds and who waits on it, read under its lock.
std::string port_state(const weft_port_id_t& id) {
    net::job* j = net::current_job();
    net::port* p = &j->tables[id.node].chunks[id.index >> net::kChunkBits].load()[id.index & (net::kChunkSlots - 1)];
    weft::detail::spinlock_ref lk(p->lock);
    lk.lock();
    std::size_t senders = 0;
    for (auto* r = static_cast<weft::detail::wait_record*>(p->tx_head); r != nullptr; r = r->next) ++senders;
    std::ostringstream os;
    os << "port {node " << id.node << ", index " << id.index << "}: " << p->count << " of " << p->max_msgs
       << " messages, " << p->bytes << " of " << p->max_bytes << " bytes buffered; " << senders
       << " senders blocked in weft_net_send, " << p->rx_waiting.load() << " receivers linked";
    lk.unlock();
    return os.str();
}

// Rounds of kSenders senders into a port of the given shape, received here.
void NetFullPortConcurrent::rounds(const full_port_shape& shape) {
    for (int round = 0; round < kRounds; ++round) {
        weft_port_id_t port{};
        ASSERT_EQ(weft_net_port_create(&port, shape.max_msgs, shape.max_bytes), 0);
        std::vector<sender> s(kSenders);
        std::vector<weft_thread_t> ts;
        for (int i = 0; i < kSenders; ++i) {
            s[std::size_t(i)].to = port;
            s[std::size_t(i)].id = i;
            s[std::size_t(i)].each = each_in(round);
            ts.push_back(wt::spawn_on(i % kNodes, &s[std::size_t(i)]));
        }
        if (senders_first_in(round))
            for (int i = 0; i < 4 * kSenders; ++i) weft_thread_yield();
        std::vector<int> next(kSenders, 0);
        std::string stall;
        for (int k = 0; k < kSenders * each_in(round); ++k) {
            unsigned char msg[kLen];
            weft_net_status_t st{};
            int rc = weft_net_recv(port, msg, sizeof msg, &st, kStallNs);
            if (rc == ETIMEDOUT) {
                stall = port_state(port);
                break;
            }
            ASSERT_EQ(rc, 0);
            int id = -1, seq = -1;
            std::memcpy(&id, msg, sizeof id);
            std::memcpy(&seq, msg + sizeof id, sizeof seq);
            ASSERT_TRUE(id >= 0 && id < kSenders) << "message " << k << " names sender " << id;
            ASSERT_EQ(st.tag, id * 1000 + seq);
            ASSERT_EQ(seq, next[std::size_t(id)]) << "sender " << id << " out of order";
            ++next[std::size_t(id)];
        }
        if (!stall.empty()) {
            std::ostringstream who;
            for (const sender& x : s) who << " " << x.sent << "/" << x.each;
            // Destroy wakes the stranded senders (EPIPE), so the test ends.
            EXPECT_EQ(weft_net_port_destroy(port), 0);
            for (weft_thread_t t : ts) EXPECT_EQ(weft_thread_join(t, nullptr), 0);
            FAIL() << "round " << round << ": the receiver found nothing for " << kStallNs / 1'000'000'000
                   << " s while senders had messages left: " << stall << "; sends returned per sender:" << who.str();
        }
        for (weft_thread_t t : ts) ASSERT_EQ(weft_thread_join(t, nullptr), 0);
        for (const sender& x : s) EXPECT_EQ(x.rc, 0) << "sender " << x.id;
        unsigned char extra[kLen];
        EXPECT_EQ(weft_net_try_recv(port, extra, sizeof extra, nullptr), EAGAIN) << "a message came twice";
        EXPECT_EQ(weft_net_port_destroy(port), 0);
    }
}

TEST_P(NetFullPortConcurrent, every_blocked_sender_gets_into_a_port_of_one_message) { rounds({1, 1 << 16}); }

TEST_P(NetFullPortConcurrent, every_blocked_sender_gets_into_a_port_of_two_messages) { rounds({2, 1 << 16}); }

TEST_P(NetFullPortConcurrent, every_blocked_sender_gets_into_a_port_of_two_messages_worth_of_bytes) {
    rounds({1000, 2 * kLen});
}

INSTANTIATE_TEST_SUITE_P(Schedulers, NetFullPortConcurrent, ::testing::ValuesIn(wt::rt_params({1, 2})),
                         wt::rt_param_name);

}  // namespace
