// Filament statistics in the runtime's per-worker counters (src/fil/stats.hpp):
// what resets them (weft_stats_reset, weft_fil_stats_reset, a new runtime),
// where an external caller's region counts, and the per-worker shares adding
// up to the total. Counts only.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include <weft/filament.hpp>

#include "support/weft_test.hpp"
#include "weft/weft.h"

namespace {

std::vector<std::uint64_t> fields(const weft_fil_stats_t& s) {
    return {s.regions,        s.filaments_created, s.filaments_run,  s.forks,        s.forks_pruned,
            s.steals,         s.tree_sends,        s.pools_general,  s.pools_dense_1d, s.pools_dense_2d,
            s.pools_helped,   s.sweeps,            s.sleeps};
}
const std::vector<std::uint64_t> zeros(13, 0);

long fib(int k) {
    if (k < 2) return k;
    auto [a, b] = weft::join([=] { return fib(k - 1); }, [=] { return fib(k - 2); });
    return a + b;
}

// A region that counts something in most fields' neighbourhood: forks (pruning
// off, so every join forks), filaments run, a region.
void run_a_region() {
    weft::fj_options o;
    o.pruning = false;
    EXPECT_EQ(weft::fork_join(o, [] { return fib(12); }), 144);
}

class FilStats : public ::testing::Test {
protected:
    void start(int workers) {
        weft_config_t cfg = wt::config(workers);
        cfg.measure = 1;
        ASSERT_EQ(weft_init(&cfg), 0);
    }
    void TearDown() override {
        if (weft_is_initialized() != 0) {
            EXPECT_EQ(weft_finalize(), 0);
        }
    }
};

// requirement (weft.h, weft_stats_reset): one window for every figure the
// runtime prints, the filaments' included.
TEST_F(FilStats, stats_reset_clears_the_filament_counters) {
    start(2);
    run_a_region();
    weft_fil_stats_t s = weft::filament_stats();
    ASSERT_EQ(s.regions, 1u);
    ASSERT_GT(s.forks, 0u);
    ASSERT_GT(s.filaments_run, 0u);
    ASSERT_EQ(weft_stats_reset(), 0);
    EXPECT_EQ(fields(weft::filament_stats()), zeros);
    for (int w = 0; w < 2; ++w) EXPECT_EQ(fields(weft::filament_stats(w)), zeros) << "worker " << w;
    run_a_region();
    EXPECT_EQ(weft::filament_stats().regions, 1u) << "counting goes on after a reset";
}

// requirement (weft.h, weft_fil_stats_reset): the filament counters only.
TEST_F(FilStats, fil_stats_reset_keeps_the_runtime_counters) {
    start(2);
    ASSERT_EQ(weft_stats_reset(), 0);
    weft_thread_t t = wt::go([] {});
    wt::join(t);
    run_a_region();
    ASSERT_EQ(weft_fil_stats_reset(), 0);
    EXPECT_EQ(fields(weft::filament_stats()), zeros);
    weft_stats_t rs{};
    ASSERT_EQ(weft_stats_get(&rs), 0);
    EXPECT_GE(rs.threads_created, 1u) << "weft_fil_stats_reset cleared a runtime counter";
}

// requirement (weft.h, weft_fil_stats_t): counted since weft_init; nothing
// without a runtime.
TEST_F(FilStats, a_new_runtime_starts_from_zero) {
    start(2);
    run_a_region();
    ASSERT_EQ(weft::filament_stats().regions, 1u);
    ASSERT_EQ(weft_finalize(), 0);
    weft_fil_stats_t s{};
    s.regions = 99;
    EXPECT_EQ(weft_fil_stats_get(&s), 0);
    EXPECT_EQ(fields(s), zeros) << "no runtime";
    s.regions = 99;
    EXPECT_EQ(weft_fil_worker_stats_get(0, &s), 0);
    EXPECT_EQ(fields(s), zeros) << "no runtime, worker 0";
    start(2);
    EXPECT_EQ(fields(weft::filament_stats()), zeros);
}

// requirement (weft.h, weft_fil_worker_stats_get): an external kernel
// thread's region counts on worker 0, which serves its root; the workers'
// shares add up to the total.
TEST_F(FilStats, external_callers_region_counts_on_worker_0_concurrent) {
    start(2);
    std::atomic<bool> done{false};
    std::thread outside([&] {
        run_a_region();
        done.store(true);
    });
    // Main waits as a weft thread: its worker stays free to serve the region.
    while (!done.load()) (void)weft_thread_yield();
    outside.join();
    EXPECT_EQ(weft::filament_stats(0).regions, 1u);
    EXPECT_EQ(weft::filament_stats(1).regions, 0u);
    run_a_region();  // and one from main, wherever it runs now
    weft_fil_stats_t all = weft::filament_stats();
    EXPECT_EQ(all.regions, 2u);
    std::vector<std::uint64_t> sum = fields(weft::filament_stats(0));
    std::vector<std::uint64_t> f1 = fields(weft::filament_stats(1));
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += f1[i];
    EXPECT_EQ(sum, fields(all));
}

}  // namespace
