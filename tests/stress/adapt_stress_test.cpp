// The active worker count changing underneath running programs (core/active.hpp):
// a kernel thread outside weft drops and takes back workers every few tens of
// microseconds while weft threads fork, join, block on a mutex and yield, and while filament regions (pool sets with placed
// pools, parallel loops, fork/join) run. Every result must be exact and every
// thread must end, under each scheduler; TSan runs this file (label
// concurrency).
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "support/fil_fib.hpp"
#include "support/weft_test.hpp"
#include "weft/filament.hpp"
#include "weft/weft.hpp"

namespace {

struct tree_state {
    weft::mutex m;
    long leaves = 0;
};

// A binary tree of weft threads; each leaf adds to a counter under a mutex
// (contended: leaves block on it), some levels yield.
void tree(tree_state* s, int depth) {
    if (depth == 0) {
        std::lock_guard<weft::mutex> g(s->m);
        ++s->leaves;
        return;
    }
    weft::thread a([s, depth] { tree(s, depth - 1); });
    if (depth % 3 == 0) (void)weft_thread_yield();
    tree(s, depth - 1);
    a.join();
}

// Flips the active count at random between 1 and the bound until stopped.
class flipper {
public:
    explicit flipper(int workers)
        : t_([this, workers] {
              std::mt19937 rng(12345);
              while (!stop_.load()) {
                  (void)weft_adapt_set_active(1 + static_cast<int>(rng() % static_cast<unsigned>(workers)));
                  flips_.fetch_add(1);
                  std::this_thread::sleep_for(std::chrono::microseconds(20 + rng() % 200));
              }
          }) {}
    ~flipper() {
        stop_.store(true);
        t_.join();
    }
    long flips() const { return flips_.load(); }

private:
    std::atomic<bool> stop_{false};
    std::atomic<long> flips_{0};
    std::thread t_;
};

class AdaptConcurrency : public ::testing::TestWithParam<const char*> {
protected:
    void SetUp() override {
        weft_config_t c = wt::config(4, GetParam());
        c.adapt = "off";  // the count changes only by the flipper
        ASSERT_EQ(weft_init(&c), 0);
    }
    void TearDown() override { ASSERT_EQ(weft_finalize(), 0); }
    wt::watchdog dog_{wt::default_test_limit(), "AdaptConcurrency"};
};

TEST_P(AdaptConcurrency, threads_blocking_and_yielding_lose_nothing) {
    const int rounds = static_cast<int>(wt::scaled(40, 3));
    flipper f(4);
    for (int r = 0; r < rounds; ++r) {
        tree_state s;
        tree(&s, 9);
        ASSERT_EQ(s.leaves, 512) << "round " << r;
    }
    weft_stats_t st;
    ASSERT_EQ(weft_stats_get(&st), 0);
    EXPECT_EQ(st.threads_live, 1u);  // only main
}

TEST_P(AdaptConcurrency, filament_regions_lose_no_filament) {
    const int rounds = static_cast<int>(wt::scaled(30, 2));
    flipper f(4);
    for (int r = 0; r < rounds; ++r) {
        // Placed pools (one per worker: help only when the owner sits out).
        int sweeps = 0;
        std::vector<int> cnt(256, 0);
        weft::pool_set ps([&](int i, int) { ++cnt[i]; },
                          [&] { return ++sweeps == 40 ? weft::next::done : weft::next::continue_; });
        auto pools = ps.add_pools();
        for (int i = 0; i < 256; ++i) pools[static_cast<std::size_t>(i) % pools.size()].add(i);
        weft::run(ps);
        for (int v : cnt) ASSERT_EQ(v, 40) << "round " << r;
        // A parallel loop and a fork/join region.
        std::vector<int> hits(3000, 0);
        weft::parallel_for(0, 3000, [&](int i) { ++hits[i]; });
        for (int h : hits) ASSERT_EQ(h, 1);
        ASSERT_EQ(weft::fork_join([] { return wt::fib_join(16); }), wt::fib_serial(16));
    }
}

TEST_P(AdaptConcurrency, regions_from_several_threads_at_once) {
    const int rounds = static_cast<int>(wt::scaled(10, 2));
    flipper f(4);
    std::atomic<int> bad{0};
    std::vector<weft::thread> ts;
    for (int t = 0; t < 3; ++t)
        ts.emplace_back([&] {
            for (int r = 0; r < rounds; ++r) {
                if (weft::fork_join([] { return wt::fib_join(15); }) != wt::fib_serial(15)) bad.fetch_add(1);
                long sum = weft::parallel_reduce(weft::range<long>{0, 4000}, 0L,
                                                 [](long i, long& acc) { acc += i; }, std::plus<>{});
                if (sum != 4000L * 3999 / 2) bad.fetch_add(1);
            }
        });
    for (auto& t : ts) t.join();
    EXPECT_EQ(bad.load(), 0);
}

// The controllers themselves, reading every 10 ms while the programs run: the
// asat probe's test threads go through the same workers as the program's.
class AdaptLiveConcurrency : public ::testing::TestWithParam<const char*> {
protected:
    wt::watchdog dog_{wt::default_test_limit(), "AdaptLiveConcurrency"};
};

TEST_P(AdaptLiveConcurrency, programs_run_exactly_while_the_controller_reads) {
    wt::scoped_env interval("WEFT_ADAPT_INTERVAL", "10");
    weft_config_t c = wt::config(4, "ws");
    c.adapt = GetParam();
    ASSERT_EQ(weft_init(&c), 0);
    weft_stats_t st{};
    int rounds = 0;
    do {
        tree_state s;
        tree(&s, 8);
        ASSERT_EQ(s.leaves, 256);
        std::vector<int> hits(2000, 0);
        weft::parallel_for(0, 2000, [&](int i) { ++hits[i]; });
        for (int h : hits) ASSERT_EQ(h, 1);
        ASSERT_EQ(weft::fork_join([] { return wt::fib_join(15); }), wt::fib_serial(15));
        ASSERT_EQ(weft_stats_get(&st), 0);
        ++rounds;
    } while (st.adapt_readings < 5 || rounds < 3);
    ASSERT_EQ(weft_finalize(), 0);
}

INSTANTIATE_TEST_SUITE_P(All, AdaptLiveConcurrency, ::testing::Values("asat", "schedstat"),
                         [](const auto& info) { return std::string(info.param); });

INSTANTIATE_TEST_SUITE_P(All, AdaptConcurrency, ::testing::Values("fifo", "lifo", "dfs", "ws"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
