// Class: requirement. The adaptive worker count (src/adapt, core/active.hpp):
// weft_adapt_get / weft_adapt_set_active, what a dropped worker still runs,
// and the controller's decisions on readings injected by a scripted probe
// (ASAT's bad count, "dipping a toe in the water", the take-back after it).
// The env rows of WEFT_ADAPT, WEFT_ADAPT_INTERVAL and WEFT_BUDGET are in
// env_test.cpp; changes of the count under load in
// tests/stress/adapt_stress_test.cpp; the budget in adapt_budget_test.cpp.
#include <sched.h>

#include <atomic>
#include <cerrno>
#include <string>
#include <vector>

#include "adapt/budget.hpp"
#include "adapt/controller.hpp"
#include "core/dispatch.hpp"
#include "core/runtime.hpp"
#include "support/fil_fib.hpp"
#include "support/scripted_probe.hpp"
#include "support/weft_test.hpp"
#include "weft/filament.hpp"
#include "weft/weft.hpp"

namespace {

namespace ad = weft::detail::adapt;

weft_config_t adapt_off(int workers, const char* sched = nullptr) {
    weft_config_t c = wt::config(workers, sched);
    c.adapt = "off";
    return c;
}

// Waits (yielding) until every dropped worker has gone to sleep: from then on
// nothing wakes it but a pinned thread or weft_adapt_set_active.
void wait_until_dormant(int dropped) {
    while (weft::detail::g_rt->dormant.load() != dropped) {
        (void)weft_thread_yield();
        sched_yield();
    }
}

class AdaptApi : public ::testing::Test {
protected:
    void TearDown() override {
        if (weft_is_initialized() != 0) {
            ASSERT_EQ(weft_finalize(), 0);
        }
    }
    wt::watchdog dog_{wt::default_test_limit(), "AdaptApi"};
};

TEST_F(AdaptApi, info_gives_the_mode_the_bound_and_the_active_count) {
    weft_config_t c = adapt_off(4);
    ASSERT_EQ(weft_init(&c), 0);
    weft_adapt_info_t info;
    ASSERT_EQ(weft_adapt_get(&info), 0);
    EXPECT_STREQ(info.mode, "off");
    EXPECT_EQ(info.workers, 4);
    EXPECT_EQ(info.active_workers, 4);
    EXPECT_EQ(info.interval_ms, 0);
    EXPECT_EQ(info.budget_share, 0);
    EXPECT_EQ(weft_adapt_get(nullptr), EINVAL);
}

TEST_F(AdaptApi, set_active_checks_its_range_and_counts_in_the_statistics) {
    weft_config_t c = adapt_off(4);
    ASSERT_EQ(weft_init(&c), 0);
    EXPECT_EQ(weft_adapt_set_active(0), EINVAL);
    EXPECT_EQ(weft_adapt_set_active(5), EINVAL);
    EXPECT_EQ(weft_adapt_set_active(-1), EINVAL);
    ASSERT_EQ(weft_adapt_set_active(2), 0);
    weft_stats_t s;
    ASSERT_EQ(weft_stats_get(&s), 0);
    EXPECT_EQ(s.workers, 4);
    EXPECT_EQ(s.active_workers, 2);
    EXPECT_EQ(s.workers_dropped, 2u);
    ASSERT_EQ(weft_adapt_set_active(3), 0);
    ASSERT_EQ(weft_stats_get(&s), 0);
    EXPECT_EQ(s.active_workers, 3);
    EXPECT_EQ(s.workers_added, 1u);
    ASSERT_EQ(weft_stats_reset(), 0);
    ASSERT_EQ(weft_stats_get(&s), 0);
    EXPECT_EQ(s.active_workers, 3);  // a state, not a counter
    EXPECT_EQ(s.workers_dropped, 0u);
}

TEST_F(AdaptApi, not_initialised_is_einval) {
    weft_adapt_info_t info;
    EXPECT_EQ(weft_adapt_get(&info), EINVAL);
    EXPECT_EQ(weft_adapt_set_active(1), EINVAL);
}

TEST_F(AdaptApi, a_bad_config_field_names_the_field_and_the_valid_values) {
    weft_config_t c = wt::config(2);
    c.adapt = "sometimes";
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(weft_init(&c), EINVAL);
    EXPECT_EQ(::testing::internal::GetCapturedStderr(),
              "weft: weft_config_t.adapt='sometimes' is invalid: expected one of asat, schedstat, off\n");
}

TEST_F(AdaptApi, the_probe_modes_start_a_controller) {
    for (const char* mode : {"asat", "SchedStat"}) {
        weft_config_t c = wt::config(2);
        c.adapt = mode;
        ASSERT_EQ(weft_init(&c), 0) << mode;
        weft_adapt_info_t info;
        ASSERT_EQ(weft_adapt_get(&info), 0);
        // schedstat needs the kernel's per-thread schedstat, which the machines
        // weft is tested on have (docs/design/adapt.md).
        EXPECT_EQ(std::string(info.mode), mode[0] == 'a' ? "asat" : "schedstat");
        EXPECT_GT(info.interval_ms, 0);
        ASSERT_EQ(weft_finalize(), 0);
    }
}

// --- What a dropped worker runs -------------------------------------------------------

class AdaptDropped : public ::testing::TestWithParam<const char*> {
protected:
    void TearDown() override {
        if (weft_is_initialized() != 0) {
            ASSERT_EQ(weft_finalize(), 0);
        }
    }
    wt::watchdog dog_{wt::default_test_limit(), "AdaptDropped"};
};

TEST_P(AdaptDropped, threads_run_only_on_the_active_workers_and_all_of_them_finish) {
    weft_config_t c = adapt_off(4, GetParam());
    ASSERT_EQ(weft_init(&c), 0);
    ASSERT_EQ(weft_adapt_set_active(1), 0);
    wait_until_dormant(3);
    constexpr int n = 200;
    std::vector<int> where(n, -2);
    std::vector<weft::thread> ts;
    for (int i = 0; i < n; ++i)
        ts.emplace_back([&where, i] {
            (void)weft_thread_yield();
            where[i] = weft_worker_id();
        });
    for (auto& t : ts) t.join();
    for (int i = 0; i < n; ++i) EXPECT_EQ(where[i], 0) << "thread " << i;
    // Filaments too: every participant of a dropped worker sits the sweeps out.
    std::vector<int> hits(1000, 0);
    std::atomic<int> off_worker_0{0};
    weft::parallel_for(0, 1000, [&](int i) {
        ++hits[i];
        if (weft_worker_id() != 0) off_worker_0.fetch_add(1);
    });
    for (int h : hits) EXPECT_EQ(h, 1);
    EXPECT_EQ(off_worker_0.load(), 0);
    EXPECT_EQ(weft::fork_join([] { return wt::fib_join(18); }), wt::fib_serial(18));
    // Taken back, they run threads again and the results stay exact.
    ASSERT_EQ(weft_adapt_set_active(4), 0);
    EXPECT_EQ(weft::fork_join([] { return wt::fib_join(20); }), wt::fib_serial(20));
}

TEST_P(AdaptDropped, regions_launch_no_server_for_a_dropped_worker_until_it_is_taken_back) {
    weft_config_t c = adapt_off(3, GetParam());
    ASSERT_EQ(weft_init(&c), 0);
    ASSERT_EQ(weft_adapt_set_active(1), 0);
    wait_until_dormant(2);
    weft_stats_t s;
    // A pool set run entirely with both other workers dropped: no server is
    // launched for them (they stay asleep), and every pool runs on worker 0.
    for (int round = 0; round < 5; ++round) {
        ASSERT_EQ(weft_stats_reset(), 0);
        int sweeps = 0;
        std::vector<int> cnt(30, 0);
        weft::pool_set ps([&](int i, int) { ++cnt[i]; },
                          [&] { return ++sweeps == 5 ? weft::next::done : weft::next::continue_; });
        auto pools = ps.add_pools();
        for (int i = 0; i < 30; ++i) pools[static_cast<std::size_t>(i) % pools.size()].add(i);
        weft::run(ps);
        for (int v : cnt) ASSERT_EQ(v, 5);
        ASSERT_EQ(weft_stats_get(&s), 0);
        EXPECT_EQ(s.threads_created, 0u) << "round " << round;
    }
    // Taken back between two sweeps (by the after function, the serial point
    // where ASAT changes the count): their servers are launched then, and the
    // region goes on with them.
    ASSERT_EQ(weft_stats_reset(), 0);
    int sweeps = 0;
    std::vector<int> cnt(30, 0);
    weft::pool_set ps([&](int i, int) { ++cnt[i]; },
                      [&] {
                          if (++sweeps == 3) {
                              EXPECT_EQ(weft_adapt_set_active(3), 0);
                          }
                          return sweeps == 50 ? weft::next::done : weft::next::continue_;
                      });
    auto pools = ps.add_pools();
    for (int i = 0; i < 30; ++i) pools[static_cast<std::size_t>(i) % pools.size()].add(i);
    weft::run(ps);
    for (int v : cnt) ASSERT_EQ(v, 50);
    ASSERT_EQ(weft_stats_get(&s), 0);
    EXPECT_EQ(s.threads_created, 2u);
}

TEST_P(AdaptDropped, a_region_started_on_a_dropped_worker_runs_from_an_active_one) {
    // ASAT's program: a serial part, then a parallel loop. If the worker that
    // runs the serial part has been dropped, the loop's caller moves to an
    // active worker when it starts the loop, instead of keeping the dropped
    // worker busy as a participant that sits every sweep out.
    weft_config_t c = adapt_off(2, GetParam());
    ASSERT_EQ(weft_init(&c), 0);
    int after = -2, off_worker_0 = 0;
    weft::thread t([&] {
        // Onto worker 1 (the core's own way of moving a thread), then unpinned.
        weft::detail::worker* w = weft::detail::current_worker();
        w->current->pinned_worker = 1;
        w = weft::detail::migrate(w);
        w->current->pinned_worker = -1;
        ASSERT_EQ(weft_worker_id(), 1);
        ASSERT_EQ(weft_adapt_set_active(1), 0);  // this very worker is dropped
        std::vector<int> hits(500, 0);
        std::atomic<int> off{0};
        weft::parallel_for(0, 500, [&](int i) {
            ++hits[i];
            if (weft_worker_id() != 0) off.fetch_add(1);
        });
        after = weft_worker_id();
        off_worker_0 = off.load();
        for (int h : hits) EXPECT_EQ(h, 1);
    });
    t.join();
    EXPECT_EQ(after, 0);
    EXPECT_EQ(off_worker_0, 0);
}

INSTANTIATE_TEST_SUITE_P(All, AdaptDropped, ::testing::Values("fifo", "lifo", "dfs", "ws"),
                         [](const auto& info) { return std::string(info.param); });

// --- The controller's decisions ---------------------------------------------------------

using wt::scripted_probe;
constexpr ad::reading bad = wt::bad_reading;
constexpr ad::reading good = wt::good_reading;

class AdaptController : public AdaptApi {
protected:
    void start(int workers) {
        weft_config_t c = adapt_off(workers);
        ASSERT_EQ(weft_init(&c), 0);
        auto p = std::make_unique<scripted_probe>();
        probe_ = p.get();
        ad::params prm;
        prm.interval_ms = 100;
        prm.bad_readings = 2;
        prm.good_readings = 3;
        ctl_ = std::make_unique<ad::controller>(weft::detail::g_rt, std::move(p), prm, nullptr);
    }
    void TearDown() override {
        ctl_.reset();
        AdaptApi::TearDown();
    }
    int active() const { return weft::detail::g_rt->active.load(); }
    void step_with(ad::reading r) {
        probe_->readings.push_back(r);
        ctl_->step();
    }
    scripted_probe* probe_ = nullptr;
    std::unique_ptr<ad::controller> ctl_;
};

TEST_F(AdaptController, drops_one_worker_after_the_bad_count) {
    start(4);
    step_with(bad);
    EXPECT_EQ(active(), 4);  // one bad reading is not enough
    step_with(bad);
    EXPECT_EQ(active(), 3);
    step_with(good);  // a good reading resets the count
    step_with(bad);
    EXPECT_EQ(active(), 3);
    step_with(bad);
    EXPECT_EQ(active(), 2);
    for (int i = 0; i < 6; ++i) step_with(bad);
    EXPECT_EQ(active(), 1);  // never below one
    EXPECT_TRUE(probe_->toe_asked.empty());
}

TEST_F(AdaptController, dips_a_toe_adds_exactly_one_and_one_bad_reading_takes_it_back) {
    start(4);
    step_with(bad);
    step_with(bad);
    ASSERT_EQ(active(), 3);
    probe_->toe_answers = {true};
    step_with(good);
    step_with(good);
    EXPECT_TRUE(probe_->toe_asked.empty());
    step_with(good);  // the third good reading in a row: the toe test, with one more worker
    ASSERT_EQ(probe_->toe_asked, std::vector<int>{4});
    EXPECT_EQ(active(), 4);
    step_with(bad);  // right after the addition, one bad reading is enough
    EXPECT_EQ(active(), 3);
    // A toe test that fails adds nothing.
    probe_->toe_answers = {false};
    for (int i = 0; i < 3; ++i) step_with(good);
    EXPECT_EQ(probe_->toe_asked, (std::vector<int>{4, 4}));
    EXPECT_EQ(active(), 3);
    // At the bound, no toe test at all.
    ASSERT_EQ(weft_adapt_set_active(4), 0);
    for (int i = 0; i < 6; ++i) step_with(good);
    EXPECT_EQ(probe_->toe_asked.size(), 2u);
    weft_stats_t s;
    ASSERT_EQ(weft_stats_get(&s), 0);
    EXPECT_EQ(s.adapt_readings, 15u);
}

TEST_F(AdaptController, nothing_is_lost_while_injected_readings_drop_and_add_workers) {
    start(4);
    // The program starts with workers already dropped (two bad readings each).
    for (int i = 0; i < 4; ++i) step_with(bad);
    ASSERT_EQ(active(), 2);
    std::atomic<bool> done{false};
    long fib_result = 0;
    int sweeps = 0;
    std::vector<int> cnt(400, 0);
    weft::thread work([&] {
        for (int k = 0; k < 10; ++k) fib_result += weft::fork_join([] { return wt::fib_join(17); });
        weft::pool_set ps([&](int i, int) { ++cnt[i]; },
                          [&] { return ++sweeps == 200 ? weft::next::done : weft::next::continue_; });
        auto pools = ps.add_pools();
        for (int i = 0; i < 400; ++i) pools[static_cast<std::size_t>(i) % pools.size()].add(i);
        weft::run(ps);
        done.store(true);
    });
    // Two bad readings drop a worker; three good ones and a toe test add one.
    int k = 0;
    while (!done.load() || k < 12) {  // at least one cycle: three drops, then additions
        probe_->toe_answers.push_back(true);
        step_with((k / 6) % 2 == 0 ? bad : good);
        ++k;
        (void)weft_thread_yield();
    }
    work.join();
    EXPECT_EQ(fib_result, 10 * wt::fib_serial(17));
    for (int v : cnt) ASSERT_EQ(v, 200);
    // The readings did move the count: a run where nothing was dropped
    // would prove nothing about losing nothing.
    weft_stats_t s;
    ASSERT_EQ(weft_stats_get(&s), 0);
    EXPECT_GT(s.workers_dropped, 0u);
    EXPECT_GT(s.workers_added, 0u);
}

}  // namespace
