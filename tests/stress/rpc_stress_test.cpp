// Class: stress. Many callers on every node call two RPC servers at once
// (one with several server threads, one with one), register and look up
// names, and meet at the job-wide barrier between phases, under every
// scheduler: every call returns its own exact result, and every lookup finds
// the port registered for its name.
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "support/net_test.hpp"
#include "support/weft_test.hpp"
#include "weft/rpc.hpp"

namespace {

struct counter {
    // Called concurrently by the server's threads.
    std::int64_t add(std::int64_t a, std::int64_t b) {
        calls.fetch_add(1, std::memory_order_relaxed);
        return a + b;
    }
    std::string echo(const std::string& s) { return s; }
    std::vector<std::int32_t> twice(std::span<const std::int32_t> xs) {
        std::vector<std::int32_t> v(xs.begin(), xs.end());
        for (auto& x : v) x *= 2;
        return v;
    }
    std::atomic<std::int64_t> calls{0};
};

}  // namespace

template <>
struct weft::rpc::interface<counter> : weft::rpc::functions<&counter::add, &counter::echo, &counter::twice> {};

namespace {

class RpcConcurrency : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(All, RpcConcurrency, ::testing::ValuesIn(wt::rt_params({1, 2, 4})), wt::rt_param_name);

constexpr int kNodes = 4;
constexpr int kCallersPerNode = 3;

using wt::spawn_on;

TEST_P(RpcConcurrency, many_callers_two_servers_names_and_barrier) {
    weft_net_config_t c{};
    c.nodes = kNodes;
    ASSERT_EQ(weft_net_init(&c), 0);
    {
        counter wide, narrow;
        weft::rpc::server<counter> many(wide, 3);  // on node 0
        const std::int64_t calls = wt::scaled(1000, 20);
        std::atomic<int> errors{0};
        std::atomic<int> arrived{0};

        struct caller {
            int node, id;
            std::int64_t calls;
            weft_port_id_t wide;
            std::atomic<int>* errors;
            std::atomic<int>* arrived;
            void operator()() const {
                try {
                    // Phase 1: names. Every caller registers one and looks up another's.
                    weft::net::port mine(1, 16);
                    weft::net::names::register_port("caller" + std::to_string(id), mine.id());
                    int peer = (id + 1) % (kNodes * kCallersPerNode);
                    weft_port_id_t p = weft::net::names::lookup("caller" + std::to_string(peer));
                    if (p.node != std::uint32_t(peer / kCallersPerNode)) errors->fetch_add(1);
                    if (id % kCallersPerNode == 0) {
                        // One thread per node meets the other nodes.
                        arrived->fetch_add(1);
                        weft::net::barrier();
                        if (arrived->load() < kNodes) errors->fetch_add(1);
                    }
                    weft_port_id_t narrow_id = weft::net::names::lookup("narrow");
                    // Phase 2: calls to both servers, each checked.
                    std::vector<std::int32_t> xs(std::size_t(id % 7 + 1), id);
                    for (std::int64_t i = 0; i < calls; ++i) {
                        std::int64_t a = std::int64_t(id) << 32, b = i;
                        if (weft::rpc::call(wide, &counter::add, a, b) != a + b) errors->fetch_add(1);
                        if (i % 8 == 0) {
                            std::string s(std::size_t(i % 300), char('a' + id % 26));
                            if (weft::rpc::call(narrow_id, &counter::echo, s) != s) errors->fetch_add(1);
                            auto v = weft::rpc::call(narrow_id, &counter::twice, xs);
                            if (v.size() != xs.size() || v[0] != 2 * id) errors->fetch_add(1);
                        }
                    }
                } catch (const std::exception& e) {
                    ADD_FAILURE() << "caller " << id << ": " << e.what();
                    errors->fetch_add(1);
                }
            }
        };

        // The narrow server lives on node 3, owned by a thread there.
        // The callers find it by name (their lookups wait for it).
        weft_sem_t down;
        ASSERT_EQ(weft_sem_init(&down, 0), 0);
        auto host = [&] {
            weft::rpc::server<counter> one(narrow, 1);
            weft::net::names::register_port("narrow", one.port());
            weft_sem_wait(&down);
        };
        weft_thread_t h = spawn_on(3, &host);
        std::vector<caller> callers;
        for (int id = 0; id < kNodes * kCallersPerNode; ++id)
            callers.push_back(caller{id / kCallersPerNode, id, calls, many.port(), &errors, &arrived});
        std::vector<weft_thread_t> ts;
        for (auto& cl : callers) ts.push_back(spawn_on(cl.node, &cl));
        for (weft_thread_t t : ts) wt::join(t);
        weft_sem_post(&down);
        wt::join(h);
        // Unregistered only now: a caller may look up its peer's name after the peer is done.
        for (int id = 0; id < kNodes * kCallersPerNode; ++id)
            EXPECT_EQ(weft_net_name_unregister(("caller" + std::to_string(id)).c_str()), 0);
        EXPECT_EQ(errors.load(), 0);
        EXPECT_EQ(wide.calls.load(), calls * kNodes * kCallersPerNode);
        weft_sem_destroy(&down);
    }
    EXPECT_EQ(weft_net_finalize(), 0);
}

}  // namespace
