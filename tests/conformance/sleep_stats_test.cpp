// Class: requirement, negative. weft_sleep_ns / weft_nanosleep (sleep at least
// the time asked, block only the caller) and the statistics of weft.h
// (weft_stats_get, weft_worker_stats_get, weft_stats_reset, weft_stats_print).
// Timing assertions are lower bounds only.
#include <atomic>
#include <cerrno>
#include <string>
#include <thread>
#include <vector>

#include "support/weft_test.hpp"

namespace {

using namespace std::chrono_literals;

class Sleep : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Serial, Sleep, ::testing::ValuesIn(wt::rt_params_one_worker()), wt::rt_param_name);
INSTANTIATE_TEST_SUITE_P(Concurrent, Sleep, ::testing::ValuesIn(wt::rt_params_multi()), wt::rt_param_name);

TEST_P(Sleep, sleeps_at_least_the_time) {
    for (std::int64_t ns : {1'000LL, 100'000LL, 5'000'000LL, 30'000'000LL}) {
        std::int64_t t0 = wt::now_ns();
        ASSERT_EQ(weft_sleep_ns(static_cast<std::uint64_t>(ns)), 0);
        EXPECT_GE(wt::now_ns() - t0, ns) << "asked " << ns << " ns";
    }
}

TEST_P(Sleep, zero_returns_at_once) { EXPECT_EQ(weft_sleep_ns(0), 0); }

TEST_P(Sleep, nanosleep_sleeps_and_zeroes_rem) {
    timespec req{0, 20'000'000}, rem{5, 5};
    std::int64_t t0 = wt::now_ns();
    ASSERT_EQ(weft_nanosleep(&req, &rem), 0);
    EXPECT_GE(wt::now_ns() - t0, 20'000'000);
    EXPECT_EQ(rem.tv_sec, 0);
    EXPECT_EQ(rem.tv_nsec, 0);
    EXPECT_EQ(weft_nanosleep(&req, nullptr), 0);
}

TEST_P(Sleep, nanosleep_bad_timespec_is_einval) {
    timespec neg{0, -1}, big{0, 1'000'000'000}, negsec{-1, 0};
    EXPECT_EQ(weft_nanosleep(&neg, nullptr), EINVAL);
    EXPECT_EQ(weft_nanosleep(&big, nullptr), EINVAL);
    EXPECT_EQ(weft_nanosleep(&negsec, nullptr), EINVAL);
    EXPECT_EQ(weft_nanosleep(nullptr, nullptr), EINVAL);
}

// The sleeper's own worker runs another thread while it sleeps, on any number
// of workers: the sleeper announces the worker it sleeps on, and threads that
// yield in a loop (twice as many as workers, so some are always ready) look
// for one that runs on that worker while the announcement stands. If a sleep
// held its worker, no thread could run there between the announcement and its
// withdrawal (both made by the sleeper on that worker), and the sleeper would
// sleep again for ever: the watchdog fails the test.
TEST_P(Sleep, sleeper_blocks_only_itself) {
    std::atomic<int> asleep_on{-1};
    std::atomic<bool> seen{false};
    weft_thread_t sleeper = wt::go([&] {
        while (!seen.load()) {
            asleep_on = weft_worker_id();
            EXPECT_EQ(weft_sleep_ns(100'000), 0);
            asleep_on = -1;
        }
    });
    std::vector<weft_thread_t> lookers;
    for (int i = 0; i < 2 * workers(); ++i)
        lookers.push_back(wt::go([&] {
            while (!seen.load()) {
                if (asleep_on.load() == weft_worker_id()) seen = true;
                else weft_thread_yield();
            }
        }));
    for (auto t : lookers) wt::join(t);
    wt::join(sleeper);
}

TEST_P(Sleep, many_sleepers_each_sleep_their_time) {
    const int n = 100;
    std::vector<std::int64_t> asked(n), slept(n);
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < n; ++i) {
        asked[i] = (i % 10 + 1) * 2'000'000;  // 2..20 ms
        ts.push_back(wt::go([&, i] {
            std::int64_t t0 = wt::now_ns();
            weft_sleep_ns(static_cast<std::uint64_t>(asked[i]));
            slept[i] = wt::now_ns() - t0;
        }));
    }
    for (auto t : ts) wt::join(t);
    for (int i = 0; i < n; ++i) EXPECT_GE(slept[i], asked[i]) << "sleeper " << i;
}

TEST_P(Sleep, external_thread_sleeps_too) {
    std::int64_t slept = 0;
    int rc = -1;
    std::thread([&] {
        std::int64_t t0 = wt::now_ns();
        rc = weft_sleep_ns(10'000'000);
        slept = wt::now_ns() - t0;
    }).join();
    EXPECT_EQ(rc, 0);
    EXPECT_GE(slept, 10'000'000);
}

// --- statistics -----------------------------------------------------------------------

class Stats : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Serial, Stats, ::testing::ValuesIn(wt::rt_params_one_worker()), wt::rt_param_name);
INSTANTIATE_TEST_SUITE_P(Concurrent, Stats, ::testing::ValuesIn(wt::rt_params_multi()), wt::rt_param_name);

weft_stats_t stats() {
    weft_stats_t s{};
    EXPECT_EQ(weft_stats_get(&s), 0);
    return s;
}

TEST_P(Stats, fresh_runtime) {
    weft_stats_t s = stats();
    EXPECT_EQ(s.threads_created, 0u);
    EXPECT_EQ(s.threads_live, 1u) << "main";
    EXPECT_GE(s.max_live_threads, 1u);
    EXPECT_EQ(s.workers, workers());
}

TEST_P(Stats, threads_created_counts_every_creation) {
    const int n = 137;
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < n; ++i) ts.push_back(wt::go([] {}));
    for (auto t : ts) wt::join(t);
    // Nested creations count too.
    weft_thread_t outer = wt::go([] {
        weft_thread_t inner = wt::go([] {});
        wt::join(inner);
    });
    wt::join(outer);
    weft_stats_t s = stats();
    EXPECT_EQ(s.threads_created, std::uint64_t(n + 2));
    EXPECT_EQ(s.threads_live, 1u);
}

TEST_P(Stats, max_live_counts_blocked_threads) {
    const int n = 300;
    weft_sem_t s;
    weft_sem_init(&s, 0);
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < n; ++i) ts.push_back(wt::go([&] { weft_sem_wait(&s); }));
    weft_stats_t mid = stats();
    EXPECT_EQ(mid.threads_live, std::uint64_t(n + 1));
    for (int i = 0; i < n; ++i) weft_sem_post(&s);
    for (auto t : ts) wt::join(t);
    weft_stats_t end = stats();
    EXPECT_GE(end.max_live_threads, std::uint64_t(n + 1));
    EXPECT_EQ(end.threads_live, 1u);
}

TEST_P(Stats, context_switches_counted) {
    weft_stats_t before = stats();
    weft_thread_t t = wt::go([] {
        for (int i = 0; i < 10; ++i) weft_thread_yield();
    });
    for (int i = 0; i < 10; ++i) weft_thread_yield();
    wt::join(t);
    weft_stats_t after = stats();
    EXPECT_GT(after.context_switches, before.context_switches);
}

TEST_P(Stats, stack_bytes_mapped_and_peak) {
    std::vector<weft_thread_t> ts;
    weft_sem_t s;
    weft_sem_init(&s, 0);
    for (int i = 0; i < 50; ++i) ts.push_back(wt::go([&] { weft_sem_wait(&s); }));
    weft_stats_t mid = stats();
    EXPECT_GE(mid.stack_bytes_mapped, 50u * 64u * 1024u) << "50 live threads with 64 KiB stacks";
    EXPECT_GE(mid.stack_bytes_peak, mid.stack_bytes_mapped);
    for (int i = 0; i < 50; ++i) weft_sem_post(&s);
    for (auto t : ts) wt::join(t);
    weft_stats_t end = stats();
    EXPECT_GE(end.stack_bytes_peak, mid.stack_bytes_mapped);
}

TEST_P(Stats, timers_fired_counts_expired_waits) {
    weft_stats_t before = stats();
    weft_sem_t s;
    weft_sem_init(&s, 0);
    timespec ts = wt::realtime_in(5ms);
    EXPECT_EQ(weft_sem_timedwait(&s, &ts), ETIMEDOUT);
    weft_sleep_ns(1'000'000);
    weft_stats_t after = stats();
    EXPECT_GE(after.timers_fired, before.timers_fired + 2);
}

TEST_P(Stats, reset_clears_counters_but_keeps_live) {
    weft_sem_t s;
    weft_sem_init(&s, 0);
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < 10; ++i) ts.push_back(wt::go([&] { weft_sem_wait(&s); }));
    for (int i = 0; i < 5; ++i) weft_thread_yield();
    ASSERT_EQ(weft_stats_reset(), 0);
    weft_stats_t r = stats();
    EXPECT_EQ(r.threads_created, 0u);
    EXPECT_EQ(r.threads_live, 11u);
    EXPECT_GE(r.max_live_threads, 11u) << "the high-water mark restarts from the live count";
    EXPECT_EQ(r.timers_fired, 0u);
    for (int i = 0; i < 10; ++i) weft_sem_post(&s);
    for (auto t : ts) wt::join(t);
    wt::join(wt::go([] {}));
    EXPECT_EQ(stats().threads_created, 1u);
}

TEST_P(Stats, worker_stats_bounds_and_sums) {
    weft_worker_stats_t ws;
    EXPECT_EQ(weft_worker_stats_get(-1, &ws), EINVAL);
    EXPECT_EQ(weft_worker_stats_get(workers(), &ws), EINVAL);
    EXPECT_EQ(weft_worker_stats_get(0, nullptr), EINVAL);
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < 40; ++i)
        ts.push_back(wt::go([] {
            weft_thread_t inner = wt::go([] { weft_thread_yield(); });
            wt::join(inner);
        }));
    for (auto t : ts) wt::join(t);
    std::uint64_t created = 0, switches = 0;
    for (int w = 0; w < workers(); ++w) {
        ASSERT_EQ(weft_worker_stats_get(w, &ws), 0) << "worker " << w;
        created += ws.threads_created;
        switches += ws.context_switches;
    }
    weft_stats_t s = stats();
    EXPECT_EQ(created, s.threads_created) << "all creations happened on workers";
    EXPECT_EQ(created, 80u);
    EXPECT_EQ(switches, s.context_switches);
}

TEST_P(Stats, null_is_einval) { EXPECT_EQ(weft_stats_get(nullptr), EINVAL); }

TEST_P(Stats, print_writes_the_block) {
    wt::join(wt::go([] {}));
    ::testing::internal::CaptureStderr();
    weft_stats_print();
    std::string out = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(wt::contains(out, "weft statistics"));
    EXPECT_TRUE(wt::contains(out, "threads created"));
    EXPECT_TRUE(wt::contains(out, "most threads live"));
    EXPECT_TRUE(wt::contains(out, "context switches"));
    EXPECT_TRUE(wt::contains(out, "worker 0"));
    EXPECT_TRUE(wt::contains(out, sched()));
}

TEST(StatsNoRuntime, calls_without_runtime_are_einval) {
    ASSERT_EQ(weft_is_initialized(), 0);
    weft_stats_t s;
    weft_worker_stats_t ws;
    EXPECT_EQ(weft_stats_get(&s), EINVAL);
    EXPECT_EQ(weft_worker_stats_get(0, &ws), EINVAL);
    EXPECT_EQ(weft_stats_reset(), EINVAL);
    EXPECT_EQ(weft_is_initialized(), 0) << "statistics calls must not start the runtime";
}

}  // namespace
