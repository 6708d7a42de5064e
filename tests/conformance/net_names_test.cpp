// Class: requirement, negative. The naming service (weft_net_name_*,
// weft::net::names) across nodes, and the job-wide barrier (weft_net_barrier).
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "support/net_test.hpp"
#include "support/weft_test.hpp"
#include "weft/rpc.hpp"

namespace {

class Names : public wt::net_fixture {};

using wt::run_on;
using wt::spawn_on;

bool same(const weft_port_id_t& a, const weft_port_id_t& b) { return a == b; }

TEST_F(Names, register_on_one_node_lookup_on_others) {
    start(3);
    weft_port_id_t p{};
    run_on(2, [&] {
        ASSERT_EQ(weft_net_port_create(&p, 4, 64), 0);
        ASSERT_EQ(weft_net_name_register("LocalSum1", p), 0);
    });
    for (int node = 0; node < 3; ++node) {
        run_on(node, [&] {
            weft_port_id_t q{};
            ASSERT_EQ(weft_net_name_lookup("LocalSum1", &q, 0), 0);
            EXPECT_TRUE(same(p, q));
        });
    }
    weft_port_id_t q{};
    EXPECT_EQ(weft_net_name_lookup("LocalSum2", &q, 0), ETIMEDOUT) << "0: look once";
}

TEST_F(Names, lookup_blocks_until_the_name_is_registered) {
    start(2);
    weft_port_id_t found{};
    int rc = -1;
    auto looker = [&] { rc = weft_net_name_lookup("late", &found, WEFT_NET_FOREVER); };
    weft_thread_t t = spawn_on(1, &looker);
    let_others_run();
    EXPECT_EQ(rc, -1) << "still waiting: the name does not exist yet";
    weft_port_id_t p{};
    ASSERT_EQ(weft_net_port_create(&p, 4, 64), 0);
    ASSERT_EQ(weft_net_name_register("late", p), 0);
    ASSERT_EQ(weft_thread_join(t, nullptr), 0);
    EXPECT_EQ(rc, 0);
    EXPECT_TRUE(same(found, p));
}

TEST_F(Names, lookup_times_out) {
    start(2);
    run_on(1, [] {
        weft_port_id_t q{};
        EXPECT_EQ(weft_net_name_lookup("never", &q, 2'000'000), ETIMEDOUT);
        // The thread's next call is not confused by the server's late answer.
        weft_port_id_t p{1, 0, 0, 0};
        EXPECT_EQ(weft_net_name_register("now", p), 0);
        EXPECT_EQ(weft_net_name_lookup("now", &q, 0), 0);
    });
    EXPECT_THROW(weft::net::names::lookup("never", std::chrono::milliseconds(1)), weft::error);
}

TEST_F(Names, duplicates_unknown_and_bad_names) {
    start(2);
    weft_port_id_t p{0, 7, 0, 0};
    ASSERT_EQ(weft_net_name_register("a", p), 0);
    run_on(1, [&] { EXPECT_EQ(weft_net_name_register("a", p), EEXIST); });
    EXPECT_EQ(weft_net_name_unregister("b"), ENOENT);
    EXPECT_EQ(weft_net_name_unregister("a"), 0);
    EXPECT_EQ(weft_net_name_unregister("a"), ENOENT);
    EXPECT_EQ(weft_net_name_register("a", p), 0) << "a name is free again once unregistered";
    std::string longest(WEFT_NET_NAME_MAX, 'n');
    EXPECT_EQ(weft_net_name_register(longest.c_str(), p), 0);
    std::string too_long(WEFT_NET_NAME_MAX + 1, 'n');
    EXPECT_EQ(weft_net_name_register(too_long.c_str(), p), ENAMETOOLONG);
    weft_port_id_t q{};
    EXPECT_EQ(weft_net_name_lookup(too_long.c_str(), &q, 0), ENAMETOOLONG);
    EXPECT_EQ(weft_net_name_unregister(too_long.c_str()), ENAMETOOLONG);
    EXPECT_EQ(weft_net_name_register("", p), EINVAL);
    EXPECT_EQ(weft_net_name_register(nullptr, p), EINVAL);
    EXPECT_EQ(weft_net_name_lookup("a", nullptr, 0), EINVAL);
    try {
        weft::net::names::register_port("a", p);
        ADD_FAILURE() << "no exception";
    } catch (const weft::error& e) {
        EXPECT_EQ(e.code().value(), EEXIST);
    }
}

TEST_F(Names, cxx_api_and_the_well_known_port) {
    start(2);
    weft_port_id_t np{};
    ASSERT_EQ(weft_net_names_port(&np), 0);
    EXPECT_EQ(np.node, 0u);
    EXPECT_EQ(np.index, 1u);
    weft::net::port inbox(4, 64);
    weft::net::names::register_port("inbox", inbox.id());
    run_on(1, [&] {
        auto p = weft::net::names::lookup("inbox");
        weft::net::send(p, 1, 42);
    });
    EXPECT_EQ(weft::net::recv<int>(inbox.id()), 42);
    weft::net::names::unregister("inbox");
}

TEST_F(Names, without_a_job) {
    weft_port_id_t p{};
    EXPECT_EQ(weft_net_name_register("x", p), ENOTCONN);
    EXPECT_EQ(weft_net_name_lookup("x", &p, 0), ENOTCONN);
    EXPECT_EQ(weft_net_barrier(), ENOTCONN);
}

TEST_F(Names, finalize_stops_the_naming_server_and_a_new_job_starts_fresh) {
    start(2);
    weft_port_id_t p{0, 9, 0, 0};
    ASSERT_EQ(weft_net_name_register("x", p), 0);
    ASSERT_EQ(weft_net_finalize(), 0);
    start(2);
    weft_port_id_t q{};
    EXPECT_EQ(weft_net_name_lookup("x", &q, 0), ETIMEDOUT) << "names belong to their job";
    EXPECT_EQ(weft_net_name_register("x", p), 0) << "this thread's reply port is of the new job";
}

TEST_F(Names, finalize_refuses_while_a_lookup_waits) {
    start(2);
    int rc = -1;
    auto looker = [&] {
        weft_port_id_t q{};
        rc = weft_net_name_lookup("soon", &q, WEFT_NET_FOREVER);
    };
    weft_thread_t t = spawn_on(1, &looker);
    let_others_run();
    EXPECT_EQ(weft_net_finalize(), EBUSY);
    weft_port_id_t p{0, 3, 0, 0};
    ASSERT_EQ(weft_net_name_register("soon", p), 0) << "the naming service still runs";
    ASSERT_EQ(weft_thread_join(t, nullptr), 0);
    EXPECT_EQ(rc, 0);
}

// The barrier: in each round every node's participant records its arrival;
// after the barrier it checks that all nodes arrived for that round.
TEST_F(Names, barrier_across_nodes_and_rounds) {
    constexpr int kNodes = 4;
    constexpr int kRounds = 20;
    start(kNodes);
    std::vector<int> arrived(kRounds, 0);
    std::vector<int> bad(kNodes, 0);
    std::vector<weft_thread_t> ts;
    struct body {
        std::vector<int>* arrived;
        std::vector<int>* bad;
        int node;
        void operator()() const {
            for (int r = 0; r < kRounds; ++r) {
                ++(*arrived)[r];
                // Uneven work: the nodes reach the barrier in different orders.
                for (int i = 0; i < (node * 7 + r) % 5; ++i) weft_thread_yield();
                if (weft_net_barrier() != 0) ++(*bad)[node];
                if ((*arrived)[r] != kNodes) ++(*bad)[node];
            }
        }
    };
    std::vector<body> bodies;
    for (int n = 0; n < kNodes; ++n) bodies.push_back(body{&arrived, &bad, n});
    for (int n = 0; n < kNodes; ++n) ts.push_back(spawn_on(n, &bodies[n]));
    for (weft_thread_t t : ts) ASSERT_EQ(weft_thread_join(t, nullptr), 0);
    for (int n = 0; n < kNodes; ++n) EXPECT_EQ(bad[n], 0) << "node " << n;
}

TEST_F(Names, barrier_one_participant_per_node) {
    start(2);
    int rc = -1;
    auto first = [&] { rc = weft_net_barrier(); };
    weft_thread_t t = spawn_on(1, &first);
    let_others_run();  // node 1's participant waits for node 0
    run_on(1, [] { EXPECT_EQ(weft_net_barrier(), EBUSY) << "a second thread of node 1"; });
    weft::net::barrier();  // node 0's participant releases the round
    ASSERT_EQ(weft_thread_join(t, nullptr), 0);
    EXPECT_EQ(rc, 0);
}

TEST_F(Names, barrier_of_one_node_returns) {
    start(1);
    EXPECT_EQ(weft_net_barrier(), 0);
}

}  // namespace
