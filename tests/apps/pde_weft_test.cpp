// The PDE solver's versions on weft's ports (apps/pde/pde_weft.hpp): every
// version's result equals the serial program's bit for bit, on the inproc
// transport with 2 nodes (2 x 1 blocks) and 4 nodes (2 x 2), with and without
// injected latency, on 1 and 2 workers (everything on one worker: a thread
// blocked on a halo must not hold it), on grids whose blocks and strips are of
// unequal sizes. Requirement tests; the negative ones check that a grid too
// small to cut, or a run without a job, is refused before any port exists.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "apps/pde/pde.hpp"
#include "apps/pde/pde_weft.hpp"
#include "support/weft_test.hpp"
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

}  // namespace
