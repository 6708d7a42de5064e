// Every application of apps/ (the Filaments paper's suite): each version's output equals
// the serial version's on the application's test size, at 1, 2 and 4 workers
// (4 is oversubscribed on this 2-CPU machine). The peers (OpenMP, oneTBB) are
// checked too when they were built.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "apps/app.hpp"
#include "apps/coarse.hpp"
#include "support/weft_test.hpp"
#include "weft/weft.h"

namespace {

using weft::apps::version;

struct app_case {
    std::string name;
    int workers;
};

std::vector<app_case> all_cases() {
    std::vector<app_case> v;
    for (const weft::apps::app& a : weft::apps::all_apps())
        for (int w : {1, 2, 4}) v.push_back({a.name, w});
    return v;
}

class AppVersions : public ::testing::TestWithParam<app_case> {};

TEST_P(AppVersions, every_version_equals_serial) {
    const weft::apps::app* a = weft::apps::find_app(GetParam().name);
    ASSERT_NE(a, nullptr);
    const int w = GetParam().workers;
    wt::watchdog dog(wt::default_test_limit(), std::string("apps ") + a->name);
    auto reference = weft::apps::make_instance(*a, a->test_size);
    reference->reset();
    reference->run(version::serial, 1);

    weft_config_t cfg = wt::config(w);
    cfg.measure = 1;  // pruned forks count as filaments run (fib on 1 worker has no others)
    ASSERT_EQ(weft_init(&cfg), 0);
    auto inst = weft::apps::make_instance(*a, a->test_size);
    for (version v : weft::apps::versions_of(*a)) {
        ASSERT_EQ(weft_fil_stats_reset(), 0);
        for (int round = 0; round < 2; ++round) {  // a second run starts from reset inputs too
            inst->reset();
            inst->run(v, w);
            EXPECT_EQ(inst->compare(*reference), "")
                << a->name << " " << weft::apps::version_name(v) << " on " << w << " workers, run " << round;
        }
        // The filaments version runs filaments (regions of the runtime); the
        // others do not touch them.
        weft_fil_stats_t st{};
        ASSERT_EQ(weft_fil_stats_get(&st), 0);
        if (v == version::filaments) {
            EXPECT_GE(st.regions, 2u) << a->name;
            EXPECT_GT(st.filaments_run, 0u) << a->name;
        } else {
            EXPECT_EQ(st.regions, 0u) << a->name << " " << weft::apps::version_name(v);
        }
    }
    ASSERT_EQ(weft_finalize(), 0);
}

INSTANTIATE_TEST_SUITE_P(apps, AppVersions, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<app_case>& i) {
                             return i.param.name + "_w" + std::to_string(i.param.workers);
                         });

// The coarse versions' barrier: every phase's completion runs once, on the
// last thread to arrive, after every thread's work of the phase and before
// any thread's work of the next (4 threads: oversubscribed here, so the
// yield and the blocking wait are taken too). `published` is plain memory
// written by the completion and read by every thread after the barrier: a
// wrong order shows as a wrong value, and under TSan as a race.
TEST(SweepBarrier, concurrent_phases_see_each_others_work) {
    constexpr int threads = 4, phases = 2000;
    std::vector<std::atomic<long>> done(threads);  // phases each thread has finished
    long completions = 0, published = 0;
    std::atomic<long> bad{0};
    weft::apps::sweep_barrier sync(threads, [&]() noexcept {
        ++completions;
        for (const std::atomic<long>& d : done)
            if (d.load(std::memory_order_relaxed) != completions) bad.fetch_add(1);  // a thread's work missing
        published = completions;
    });
    weft::apps::on_kernel_threads(threads, [&](int t) {
        for (long k = 1; k <= phases; ++k) {
            // Now and then one thread arrives 1 ms late: the others yield for
            // 0.2 ms and then block, so the blocking wait is taken too.
            if (t == 0 && k % 100 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            done[static_cast<std::size_t>(t)].store(k, std::memory_order_relaxed);
            sync.arrive_and_wait();
            if (published != k) bad.fetch_add(1);  // released before the completion
        }
    });
    EXPECT_EQ(completions, phases);
    EXPECT_EQ(bad.load(), 0);
}

TEST(AppRegistry, names_are_unique_and_sizes_sane) {
    const auto& apps = weft::apps::all_apps();
    ASSERT_FALSE(apps.empty());
    for (std::size_t i = 0; i < apps.size(); ++i) {
        EXPECT_GT(apps[i].test_size, 0) << apps[i].name;
        EXPECT_GE(apps[i].demo_size, apps[i].test_size) << apps[i].name;
        EXPECT_GE(apps[i].bench_size, apps[i].demo_size) << apps[i].name;
        if (i != 0) {
            EXPECT_LT(std::string(apps[i - 1].name), std::string(apps[i].name));
        }
    }
    EXPECT_EQ(weft::apps::find_app("no-such-app"), nullptr);
}

}  // namespace

namespace {

// A peer version this build does not have is an error naming the application
// and the version, not a silent no-op.
TEST(AppRegistry, missing_peer_is_a_clear_error) {
    const weft::apps::app* a = weft::apps::find_app("mandelbrot");  // no peers
    ASSERT_NE(a, nullptr);
    auto inst = weft::apps::make_instance(*a, a->test_size);
    inst->reset();
    try {
        inst->run(version::omp, 1);
        FAIL() << "expected std::logic_error";
    } catch (const std::logic_error& e) {
        EXPECT_TRUE(wt::contains(e.what(), "mandelbrot")) << e.what();
        EXPECT_TRUE(wt::contains(e.what(), "omp")) << e.what();
    }
}

}  // namespace
