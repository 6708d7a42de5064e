// Filament regions under stress: many regions back to back, regions started
// from several weft threads and external threads at once (their servers share
// the workers), oversubscribed workers, nested regions. Results must equal the
// serial ones; TSan runs this file (label concurrency).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "support/fil_fib.hpp"
#include "support/weft_test.hpp"
#include "weft/filament.hpp"

namespace {

using wt::fib_serial;
long fib(int n) { return wt::fib_join(n); }

class FilRegionConcurrency : public wt::workers_fixture {};

TEST_P(FilRegionConcurrency, many_short_regions) {
    for (int k = 0; k < 300; ++k) {
        ASSERT_EQ(weft::fork_join([] { return fib(12); }), fib_serial(12));
        std::vector<int> v(257, 0);
        weft::parallel_for(0, 257, [&](int i) { v[i] = i; });
        for (int i = 0; i < 257; ++i) ASSERT_EQ(v[i], i);
    }
}

TEST_P(FilRegionConcurrency, regions_from_many_threads) {
    constexpr int nthreads = 4;
    std::atomic<int> bad{0};
    auto body = [&] {
        for (int k = 0; k < 20; ++k) {
            if (weft::fork_join([] { return fib(16); }) != fib_serial(16)) bad.fetch_add(1);
            long s = weft::parallel_reduce(weft::range<long>{0, 5000}, 0L, [](long i, long& acc) { acc += i; },
                                           std::plus<>{});
            if (s != 5000L * 4999 / 2) bad.fetch_add(1);
            int sweeps = 0;
            std::vector<int> cnt(64, 0);
            weft::pool_set ps([&](int i, int) { ++cnt[i]; },
                              [&] { return ++sweeps == 3 ? weft::next::done : weft::next::continue_; });
            auto pools = ps.add_pools();
            for (int i = 0; i < 64; ++i) pools[static_cast<std::size_t>(i) % pools.size()].add(i);
            weft::run(ps);
            for (int c : cnt)
                if (c != 3) bad.fetch_add(1);
        }
    };
    std::vector<weft::thread> ts;
    for (int t = 0; t < nthreads; ++t) ts.emplace_back(body);
    std::atomic<bool> ext_done{false};
    std::thread ext([&] {  // an external kernel thread starts regions too
        body();
        ext_done.store(true);
    });
    for (auto& t : ts) t.join();
    // Not std::thread::join at once: that would block worker 0's kernel thread,
    // which the external thread's regions need (with one worker, all of them).
    while (!ext_done.load()) weft::this_thread::sleep_for(std::chrono::milliseconds(1));
    ext.join();
    EXPECT_EQ(bad.load(), 0);
}

TEST_P(FilRegionConcurrency, nested_regions) {
    std::atomic<long> total{0};
    weft::parallel_for(0, 16, [&](int) {
        total.fetch_add(weft::fork_join([] { return fib(14); }), std::memory_order_relaxed);
        long s = weft::parallel_reduce(weft::range<int>{0, 100}, 0L, [](int i, long& a) { a += i; }, std::plus<>{});
        total.fetch_add(s, std::memory_order_relaxed);
    });
    EXPECT_EQ(total.load(), 16 * (fib_serial(14) + 4950));
}

INSTANTIATE_TEST_SUITE_P(workers, FilRegionConcurrency, ::testing::Values(1, 2, 4),
                         wt::worker_count_name{});

}  // namespace
