// The PDE solver's versions on weft's ports (apps/pde/pde_weft.hpp): every
// version's result equals the serial program's bit for bit, on the inproc
// transport with 2 nodes (2 x 1 blocks) and 4 nodes (2 x 2), with and without
// injected latency, on 1 and 2 workers (everything on one worker: a thread
// blocked on a halo must not hold it), on grids whose blocks and strips are of
// unequal sizes. run_distributed, the run of a job whose nodes find each
// other's ports through the naming service, is tested here on inproc too, by
// calling it on a thread of every node (tests/CMakeLists.txt's bench.pde_mpi
// runs it over the mpi transport). Requirement tests; the negative ones check
// that a grid too small to cut, or a run without a job, is refused before any
// port exists, and that a node whose neighbour never comes gets an error
// naming the missing port.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/pde/pde.hpp"
#include "apps/pde/pde_weft.hpp"
#include "support/net_test.hpp"
#include "support/weft_test.hpp"
#include "weft/rpc.h"
#include "weft/weft.h"

namespace {

namespace pde = weft::apps::pde;

struct pde_case {
    int nodes;
    int workers;
    bool latency;
    pde::weft_version version;
};

std::string case_name(pde_case const& c) {
    return std::string(pde::weft_version_name(c.version)) + "_n" + std::to_string(c.nodes) + "_w" +
           std::to_string(c.workers) + (c.latency ? "_latency" : "");
}

std::vector<pde_case> all_cases() {
    std::vector<pde_case> v;
    for (auto ver : {pde::weft_version::blocking1, pde::weft_version::threads2, pde::weft_version::threads4,
                     pde::weft_version::handcoded})
        for (int nodes : {2, 4})
            for (int workers : {1, 2})
                for (bool latency : {false, true}) v.push_back({nodes, workers, latency, ver});
    return v;
}

class PdeWeftConcurrency : public ::testing::TestWithParam<pde_case> {};

TEST_P(PdeWeftConcurrency, equals_serial_bit_for_bit) {
    pde_case const c = GetParam();
    wt::watchdog dog(wt::default_test_limit(), "pde " + case_name(c));
    weft_config_t cfg = wt::config(c.workers);
    ASSERT_EQ(weft_init(&cfg), 0);
    weft_net_config_t ncfg{};
    ncfg.nodes = c.nodes;
    ncfg.transport = "inproc";
    if (c.latency) {
        // A slow network: 20 us per message and 1 ns per byte.
        ncfg.latency_alpha_ns = 20000;
        ncfg.latency_beta_ns = 1;
    }
    ASSERT_EQ(weft_net_init(&ncfg), 0);
    // Odd sizes: blocks of 8 and 7 columns, 13 rows (2 nodes) or 7 and 6 rows
    // (4 nodes), cut into strips of 4 to 1 rows.
    for (auto [gnx, gny] : {std::pair<std::size_t, std::size_t>{15, 13}, {16, 16}}) {
        int const sweeps = c.latency ? 12 : 40;
        std::vector<double> const ref = pde::serial(gnx, gny, sweeps);
        for (int round = 0; round < 2; ++round) {  // a second run on the same job starts afresh too
            std::vector<double> got;
            double const secs = pde::run_inproc({gnx, gny, c.version, sweeps}, true, &got);
            EXPECT_GT(secs, 0.0);
            ASSERT_EQ(got.size(), ref.size());
            EXPECT_EQ(got, ref) << case_name(c) << " " << gnx << " x " << gny << ": max |diff| "
                                << pde::max_abs_diff(got, ref);
        }
    }
    ASSERT_EQ(weft_net_finalize(), 0);
    ASSERT_EQ(weft_finalize(), 0);
}

INSTANTIATE_TEST_SUITE_P(pde, PdeWeftConcurrency, ::testing::ValuesIn(all_cases()),
                         [](::testing::TestParamInfo<pde_case> const& i) { return case_name(i.param); });

TEST(PdeWeft, strips_cover_the_block_in_order) {
    pde::block b;
    b.nx = 5;
    b.ny = 11;
    for (int threads : {1, 2, 3, 4}) {
        std::size_t next = 0;
        for (int i = 0; i < threads; ++i) {
            pde::strip const s = pde::strip_of(b, threads, i);
            EXPECT_EQ(s.y0, next) << threads << " strips, strip " << i;
            EXPECT_GE(s.ny, 1u);
            next += s.ny;
        }
        EXPECT_EQ(next, b.ny) << threads << " strips";
    }
}

TEST(PdeWeft, versions_round_trip_their_names) {
    for (auto v : {pde::weft_version::blocking1, pde::weft_version::threads2, pde::weft_version::threads4,
                   pde::weft_version::handcoded}) {
        pde::weft_version got{};
        ASSERT_TRUE(pde::parse_weft_version(pde::weft_version_name(v), got));
        EXPECT_EQ(got, v);
    }
    pde::weft_version got{};
    EXPECT_FALSE(pde::parse_weft_version("threads3", got));
    EXPECT_EQ(pde::threads_per_node(pde::weft_version::threads4), 4);
}

// A block of 3 rows cannot be cut into 4 strips: the run is refused with the
// sizes named, before any port exists (so the job ends cleanly after it).
TEST(PdeWeft, too_few_rows_for_the_strips_is_refused) {
    wt::watchdog dog(wt::default_test_limit(), "pde refusal");
    weft_config_t cfg = wt::config(2);
    ASSERT_EQ(weft_init(&cfg), 0);
    weft_net_config_t ncfg{};
    ncfg.nodes = 2;
    ASSERT_EQ(weft_net_init(&ncfg), 0);
    try {
        (void)pde::run_inproc({16, 3, pde::weft_version::threads4, 2}, false, nullptr);
        ADD_FAILURE() << "a 3-row block was cut into 4 strips";
    } catch (std::invalid_argument const& e) {
        EXPECT_NE(std::string(e.what()).find("3 rows cannot be cut into 4 strips"), std::string::npos) << e.what();
    }
    EXPECT_EQ(weft_net_finalize(), 0);
    ASSERT_EQ(weft_finalize(), 0);
}

TEST(PdeWeft, no_job_is_refused) {
    wt::watchdog dog(wt::default_test_limit(), "pde without a job");
    weft_config_t cfg = wt::config(1);
    ASSERT_EQ(weft_init(&cfg), 0);
    EXPECT_THROW((void)pde::run_inproc({16, 16, pde::weft_version::blocking1, 2}, false, nullptr),
                 std::invalid_argument);
    ASSERT_EQ(weft_finalize(), 0);
}

// Runs body(j) on a weft thread of node j, for every node, and joins them.
void on_every_node(int nodes, std::function<void(int)> const& body) {
    struct call {
        std::function<void(int)> const* body;
        int node;
    };
    std::vector<call> calls;
    for (int j = 0; j < nodes; ++j) calls.push_back({&body, j});
    std::vector<weft_thread_t> ts(static_cast<std::size_t>(nodes));
    for (int j = 0; j < nodes; ++j)
        ASSERT_EQ(weft_net_spawn(&ts[static_cast<std::size_t>(j)], j, nullptr,
                                 [](void* a) -> void* {
                                     auto* c = static_cast<call*>(a);
                                     (*c->body)(c->node);
                                     return nullptr;
                                 },
                                 &calls[static_cast<std::size_t>(j)]),
                  0);
    for (auto t : ts) ASSERT_EQ(weft_thread_join(t, nullptr), 0);
}

// Every node runs run_distributed as a rank of an MPI job would; node 0's
// gathered result equals the serial one, for every version, over two runs
// (the second under new names), on 2 and 4 nodes; afterwards no name of the
// runs is left registered.
TEST(PdeWeftDistributedConcurrency, every_node_running_run_distributed_equals_serial) {
    wt::watchdog dog(wt::default_test_limit(), "pde run_distributed");
    weft_config_t cfg = wt::config(2);
    ASSERT_EQ(weft_init(&cfg), 0);
    for (int nodes : {2, 4}) {
        weft_net_config_t ncfg{};
        ncfg.nodes = nodes;
        ncfg.transport = "inproc";
        ASSERT_EQ(weft_net_init(&ncfg), 0);
        std::size_t const gnx = 15, gny = 13;
        int const sweeps = 20;
        std::vector<double> const ref = pde::serial(gnx, gny, sweeps);
        int run = 0;
        for (auto v : {pde::weft_version::blocking1, pde::weft_version::threads2, pde::weft_version::threads4,
                       pde::weft_version::handcoded})
            for (int round = 0; round < 2; ++round, ++run) {
                std::vector<double> got;
                std::vector<double> secs(static_cast<std::size_t>(nodes));
                on_every_node(nodes, [&](int j) {
                    secs[static_cast<std::size_t>(j)] =
                        pde::run_distributed({gnx, gny, v, sweeps}, std::to_string(run), true, j == 0 ? &got : nullptr);
                });
                EXPECT_GT(secs[0], 0.0);
                for (int j = 1; j < nodes; ++j) EXPECT_GE(secs[0], secs[static_cast<std::size_t>(j)]) << "node " << j;
                EXPECT_EQ(got, ref) << pde::weft_version_name(v) << " on " << nodes << " nodes: max |diff| "
                                    << pde::max_abs_diff(got, ref);
            }
        weft_port_id_t id{};
        EXPECT_EQ(weft_net_name_lookup("pde/0/0/0", &id, 0), ETIMEDOUT);
        EXPECT_EQ(weft_net_name_lookup("pde/0/gather", &id, 0), ETIMEDOUT);
        ASSERT_EQ(weft_net_finalize(), 0);
    }
    ASSERT_EQ(weft_finalize(), 0);
}

// Only node 0 of 2 runs: its lookup of node 1's first port times out, and the
// error names the port and the cause; node 0's own names are gone after it.
TEST(PdeWeftDistributed, a_missing_node_is_a_timeout_naming_its_port) {
    wt::watchdog dog(wt::default_test_limit(), "pde run_distributed timeout");
    weft_config_t cfg = wt::config(1);
    ASSERT_EQ(weft_init(&cfg), 0);
    weft_net_config_t ncfg{};
    ncfg.nodes = 2;
    ASSERT_EQ(weft_net_init(&ncfg), 0);
    std::string what;
    wt::run_on(0, [&] {
        try {
            (void)pde::run_distributed({16, 8, pde::weft_version::blocking1, 2}, "alone", false, nullptr,
                                       std::int64_t{50'000'000});
        } catch (std::runtime_error const& e) {
            what = e.what();
        }
    });
    EXPECT_NE(what.find("node 0 found no port named 'pde/alone/1/0'"), std::string::npos) << what;
    weft_port_id_t id{};
    EXPECT_EQ(weft_net_name_lookup("pde/alone/0/0", &id, 0), ETIMEDOUT);
    EXPECT_EQ(weft_net_name_lookup("pde/alone/gather", &id, 0), ETIMEDOUT);
    EXPECT_EQ(weft_net_finalize(), 0);
    ASSERT_EQ(weft_finalize(), 0);
}

TEST(PdeWeftDistributed, an_empty_run_name_is_refused) {
    wt::watchdog dog(wt::default_test_limit(), "pde run_distributed without a name");
    weft_config_t cfg = wt::config(1);
    ASSERT_EQ(weft_init(&cfg), 0);
    weft_net_config_t ncfg{};
    ncfg.nodes = 1;
    ASSERT_EQ(weft_net_init(&ncfg), 0);
    EXPECT_THROW((void)pde::run_distributed({16, 16, pde::weft_version::blocking1, 2}, "", false, nullptr),
                 std::invalid_argument);
    EXPECT_EQ(weft_net_finalize(), 0);
    ASSERT_EQ(weft_finalize(), 0);
}

}  // namespace
