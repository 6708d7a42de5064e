// Fork/join filaments: results equal to the serial computation at 1, 2 and 4
// workers; pruning; load balancing; exceptions; the C API (seed 004 §2.3, §3.2).
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/fil_fib.hpp"
#include "support/weft_test.hpp"
#include "weft/filament.hpp"

namespace {

using wt::fib_serial;

long fib(int n) { return wt::fib_join(n); }

class FilForkJoin : public ::testing::TestWithParam<int> {
protected:
    void SetUp() override {
        weft_config_t cfg{};
        cfg.workers = GetParam();
        ASSERT_EQ(weft_init(&cfg), 0);
        weft_fil_stats_reset();
    }
    void TearDown() override { ASSERT_EQ(weft_finalize(), 0); }
};

TEST_P(FilForkJoin, fib_equals_serial) {
    for (int n : {0, 1, 2, 10, 20, 25}) EXPECT_EQ(weft::fork_join([&] { return fib(n); }), fib_serial(n)) << n;
    // weft::join outside any region starts one.
    EXPECT_EQ(fib(22), fib_serial(22));
}

TEST_P(FilForkJoin, no_pruning_every_fork_is_real) {
    weft::fj_options o;
    o.pruning = false;
    EXPECT_EQ(weft::fork_join(o, [] { return fib(18); }), fib_serial(18));
    weft_fil_stats_t s = weft::filament_stats();
    EXPECT_EQ(s.forks_pruned, 0u);
    EXPECT_GT(s.forks, 1000u);
}

TEST_P(FilForkJoin, exception_reaches_caller) {
    auto thrower = [](int n, auto& self) -> long {
        if (n == 7) throw std::runtime_error("seven");
        if (n < 2) return n;
        auto [a, b] = weft::join([&] { return self(n - 1, self); }, [&] { return self(n - 2, self); });
        return a + b;
    };
    EXPECT_THROW(weft::fork_join([&] { return thrower(20, thrower); }), std::runtime_error);
    // The runtime is still usable.
    EXPECT_EQ(weft::fork_join([] { return fib(15); }), fib_serial(15));
}

INSTANTIATE_TEST_SUITE_P(workers, FilForkJoin, ::testing::Values(1, 2, 4),
                         wt::worker_count_name{});

}  // namespace

namespace {

// A deliberately unbalanced tree: the left spine is long, each right child is
// a leaf with a little work. Whoever starts it, the other worker must end up
// executing filaments: pruning gives way to real forks when it is idle.
std::atomic<long> g_leaf_work{0};
long spin_leaf(int k) {
    volatile long x = 0;
    for (int i = 0; i < 2000 + k; ++i) x = x + i;
    g_leaf_work.fetch_add(1, std::memory_order_relaxed);
    return 1;
}
long lopsided(int depth) {
    if (depth == 0) return spin_leaf(0);
    auto [a, b] = weft::join([=] { return lopsided(depth - 1); },
                             [=] {
                                 // A bushy right side: work worth stealing.
                                 long s = 0;
                                 for (int k = 0; k < 8; ++k) s += spin_leaf(k);
                                 return s;
                             });
    return a + b;
}

TEST(FilForkJoinBalance, unbalanced_tree_runs_on_both_workers) {
    weft_config_t cfg{};
    cfg.workers = 2;
    ASSERT_EQ(weft_init(&cfg), 0);
    ASSERT_EQ(weft_fil_stats_reset(), 0);
    long total = 0;
    for (int round = 0; round < 20; ++round) total += weft::fork_join([] { return lopsided(400); });
    EXPECT_EQ(total, 20L * (400 * 8 + 1));
    weft_fil_stats_t w0 = weft::filament_stats(0), w1 = weft::filament_stats(1);
    // Each worker ran filaments taken from a list (not only pruned calls of
    // its own): sent down the tree or stolen.
    EXPECT_GT(w0.filaments_run, 0u);
    EXPECT_GT(w1.filaments_run, 0u);
    EXPECT_GT(w0.steals + w1.steals + w0.tree_sends + w1.tree_sends, 0u);
    // Forks were pruned when both were busy, and made when one was idle.
    weft_fil_stats_t all = weft::filament_stats();
    EXPECT_GT(all.forks_pruned, 0u);
    EXPECT_GT(all.forks, 20u);
    ASSERT_EQ(weft_finalize(), 0);
}

TEST(FilForkJoinBalance, tree_only_region_completes) {
    weft_config_t cfg{};
    cfg.workers = 4;
    ASSERT_EQ(weft_init(&cfg), 0);
    weft::fj_options o;
    o.receiver_initiated = false;
    EXPECT_EQ(weft::fork_join(o, [] { return fib(24); }), fib_serial(24));
    EXPECT_EQ(weft::fork_join(o, [] { return lopsided(50); }), 50L * 8 + 1);
    ASSERT_EQ(weft_finalize(), 0);
}

TEST(FilForkJoinBalance, join_from_external_thread) {
    weft_config_t cfg{};
    cfg.workers = 2;
    ASSERT_EQ(weft_init(&cfg), 0);
    long r = 0;
    std::thread t([&] { r = weft::fork_join([] { return fib(20); }); });
    t.join();
    EXPECT_EQ(r, fib_serial(20));
    ASSERT_EQ(weft_finalize(), 0);
}

TEST(FilForkJoinBalance, void_branches_and_nested_parallel_for) {
    weft_config_t cfg{};
    cfg.workers = 2;
    ASSERT_EQ(weft_init(&cfg), 0);
    std::vector<int> v(10000, 0);
    weft::fork_join([&] {
        auto [x, y] = weft::join([&] { weft::parallel_for(0, 5000, [&](int i) { v[i] = 1; }); },
                                 [&] { weft::parallel_for(5000, 10000, [&](int i) { v[i] = 2; }); });
        (void)x;
        (void)y;
    });
    for (int i = 0; i < 10000; ++i) ASSERT_EQ(v[i], i < 5000 ? 1 : 2);
    ASSERT_EQ(weft_finalize(), 0);
}

}  // namespace
