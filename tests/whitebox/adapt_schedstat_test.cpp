// Class: requirement. The schedstat probe (src/adapt/schedstat.hpp,
// schedstat_probe.cpp): its arithmetic as pure functions of synthetic /proc
// text and samples (what each file's fields mean, which workers count, the
// bad and room thresholds), and the live controller against a real
// competitor: CPU-bound threads pinned onto a worker's CPU make it drop a
// worker. A probe that always says "all good" fails that test (it waits out
// its bound); one that ignores the text's meaning fails the others.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "adapt/schedstat.hpp"
#include "core/outside.hpp"
#include "core/tunables.hpp"
#include "core/worker.hpp"
#include "support/weft_test.hpp"
#include "weft/weft.h"

namespace {

namespace ad = weft::detail::adapt;
namespace tun = weft::detail::tun;

cpu_set_t cpus(std::initializer_list<int> list) {
    cpu_set_t m;
    CPU_ZERO(&m);
    for (int c : list) CPU_SET(c, &m);
    return m;
}

// --- /proc/<pid>/task/<tid>/schedstat -------------------------------------------

TEST(SchedstatParse, run_delay_is_the_second_field) {
    EXPECT_EQ(ad::parse_run_delay("123456789 987654321 4242\n"), 987654321);
    EXPECT_EQ(ad::parse_run_delay("0 0 0\n"), 0);
}

TEST(SchedstatParse, run_delay_of_text_without_a_second_field_is_unknown) {
    EXPECT_EQ(ad::parse_run_delay(""), -1);
    EXPECT_EQ(ad::parse_run_delay("123456789\n"), -1);
    EXPECT_EQ(ad::parse_run_delay("on-cpu wait slices\n"), -1);
    EXPECT_EQ(ad::parse_run_delay("12 x 3\n"), -1);
}

// --- /proc/stat ---------------------------------------------------------------

// Two CPUs; the total line first, as the kernel writes it, with its fields
// set to values that would be counted as CPU 10's if it were read as a CPU line.
constexpr const char* proc_stat =
    "cpu  10 0 5 1000 20 0 3 0 0 0\n"
    "cpu0 1 0 2 300 5 0 1 0 0 0\n"
    "cpu1 9 0 3 700 15 0 2 0 0 0\n"
    "intr 12345 0 1 2\n"
    "ctxt 999\n"
    "btime 1700000000\n"
    "processes 42\n"
    "procs_running 3\n";

TEST(SchedstatParse, idle_ticks_are_idle_plus_iowait_of_the_cpus_in_the_mask) {
    EXPECT_EQ(ad::parse_idle_ticks(proc_stat, cpus({0})), 305);
    EXPECT_EQ(ad::parse_idle_ticks(proc_stat, cpus({1})), 715);
    EXPECT_EQ(ad::parse_idle_ticks(proc_stat, cpus({0, 1})), 1020);
}

TEST(SchedstatParse, the_total_line_is_not_a_cpu) {
    // "cpu  10 0 5 ..." is the sum over CPUs, not CPU 10.
    EXPECT_EQ(ad::parse_idle_ticks(proc_stat, cpus({10})), -1);
    EXPECT_EQ(ad::parse_idle_ticks(proc_stat, cpus({1, 10})), 715);
}

TEST(SchedstatParse, idle_ticks_of_no_cpu_of_the_mask_are_unknown) {
    EXPECT_EQ(ad::parse_idle_ticks(proc_stat, cpus({3})), -1);
    EXPECT_EQ(ad::parse_idle_ticks("", cpus({0})), -1);
    EXPECT_EQ(ad::parse_idle_ticks("cpu0 1 2\n", cpus({0})), -1);  // too few fields
}

// --- The reading ----------------------------------------------------------------

constexpr std::int64_t ms = 1'000'000;
constexpr std::int64_t tick = 10 * ms;  // USER_HZ = 100

// Two samples 100 ms apart; workers' run delays grow by `waited` (ns each) and
// the CPUs' idle ticks by `idle_ticks`.
struct interval {
    ad::schedstat_sample before, after;
    interval(std::vector<std::int64_t> waited, std::int64_t idle_ticks) {
        before.now_ns = 5'000 * ms;
        after.now_ns = before.now_ns + 100 * ms;
        before.idle_ticks = 1'000;
        after.idle_ticks = 1'000 + idle_ticks;
        for (std::int64_t w : waited) {
            before.run_delay_ns.push_back(w < 0 ? -1 : 7 * ms);
            after.run_delay_ns.push_back(w < 0 ? -1 : 7 * ms + w);
        }
    }
    ad::reading judge(int active) const { return ad::judge_schedstat(before, after, active, tick); }
};

TEST(SchedstatJudge, bad_when_the_active_workers_waited_half_a_cpu) {
    ASSERT_EQ(tun::adapt_wait_bad_cpus, 0.5);  // the figures below are chosen around it
    EXPECT_TRUE(interval({30 * ms, 20 * ms}, 0).judge(2).bad);   // 0.5 CPU, summed
    EXPECT_TRUE(interval({67 * ms, 0}, 0).judge(2).bad);         // one worker beside a hog
    EXPECT_FALSE(interval({30 * ms, 19 * ms}, 0).judge(2).bad);  // 0.49
    EXPECT_FALSE(interval({0, 0}, 0).judge(2).bad);
}

TEST(SchedstatJudge, only_the_active_workers_count) {
    // Worker 1 is dropped: its waiting is nobody's concern.
    EXPECT_FALSE(interval({10 * ms, 90 * ms}, 0).judge(1).bad);
    EXPECT_TRUE(interval({10 * ms, 90 * ms}, 0).judge(2).bad);
}

TEST(SchedstatJudge, an_unreadable_worker_counts_for_nothing) {
    ad::reading r = interval({-1, 60 * ms}, 0).judge(2);
    EXPECT_TRUE(r.bad);
    interval i({60 * ms, 0}, 0);
    i.after.run_delay_ns[0] = -1;  // became unreadable during the interval
    EXPECT_FALSE(i.judge(2).bad);
}

TEST(SchedstatJudge, room_when_the_cpus_were_idle_and_our_workers_did_not_wait) {
    ASSERT_EQ(tun::adapt_idle_room_cpus, 0.6);
    ASSERT_EQ(tun::adapt_wait_calm_cpus, 0.1);
    EXPECT_TRUE(interval({0, 0}, 6).judge(1).room);             // 60 ms idle in 100 ms
    EXPECT_FALSE(interval({0, 0}, 5).judge(1).room);            // 0.5 CPU idle
    EXPECT_TRUE(interval({9 * ms, 0}, 8).judge(1).room);        // waited 0.09
    EXPECT_FALSE(interval({10 * ms, 0}, 8).judge(1).room);      // waited 0.1: not calm
    EXPECT_FALSE(interval({0, 0}, 20).judge(1).bad);
}

TEST(SchedstatJudge, unknown_idle_gives_no_room) {
    interval i({0, 0}, 50);
    i.after.idle_ticks = -1;
    EXPECT_FALSE(i.judge(1).room);
}

TEST(SchedstatJudge, the_first_sample_and_an_empty_interval_judge_nothing) {
    interval first({90 * ms, 90 * ms}, 50);
    first.before.now_ns = 0;  // no sample before
    ad::reading r = first.judge(2);
    EXPECT_FALSE(r.bad);
    EXPECT_FALSE(r.room);
    interval empty({90 * ms, 90 * ms}, 50);
    empty.after.now_ns = empty.before.now_ns;
    r = empty.judge(2);
    EXPECT_FALSE(r.bad);
    EXPECT_FALSE(r.room);
}

// --- The live controller beside a competitor -------------------------------------------

// Kernel threads spinning on one CPU until destroyed.
class cpu_hogs {
public:
    cpu_hogs(int n, int cpu) {
        for (int i = 0; i < n; ++i)
            threads_.emplace_back([this, cpu] {
                cpu_set_t mine = cpus({cpu});
                (void)sched_setaffinity(0, sizeof mine, &mine);
                while (!stop_.load(std::memory_order_relaxed)) {
                }
            });
    }
    ~cpu_hogs() {
        stop_.store(true);
        for (auto& t : threads_) t.join();
    }

private:
    std::atomic<bool> stop_{false};
    std::vector<std::thread> threads_;
};

class AdaptProbeConcurrency : public ::testing::Test {
protected:
    void TearDown() override {
        stop_.store(true);
        for (weft_thread_t t : busy_) EXPECT_EQ(weft_thread_join(t, nullptr), 0);
        if (weft_is_initialized() != 0) {
            EXPECT_EQ(weft_finalize(), 0);
        }
    }
    // Weft threads that keep every worker runnable; they yield, so that the
    // thread of a dropped worker moves to an active one.
    void keep_workers_busy(int n) {
        for (int i = 0; i < n; ++i) {
            weft_thread_t t;
            ASSERT_EQ(weft_thread_create(
                          &t, nullptr,
                          [](void* p) -> void* {
                              auto* stop = static_cast<std::atomic<bool>*>(p);
                              volatile std::uint64_t sink = 0;
                              while (!stop->load(std::memory_order_relaxed)) {
                                  for (std::uint64_t k = 0; k < 100000; ++k) sink = sink + k;
                                  weft_thread_yield();
                              }
                              return nullptr;
                          },
                          &stop_),
                      0);
            busy_.push_back(t);
        }
    }
    wt::watchdog dog_{std::chrono::seconds(60), "AdaptProbeConcurrency"};
    std::atomic<bool> stop_{false};
    std::vector<weft_thread_t> busy_;
};

// requirement: two CPU-bound kernel threads of another "program" pinned onto
// the CPU that worker 1 is pinned to leave it about a third of that CPU, so it
// waits about 0.67 CPU per interval: the schedstat controller must drop a
// worker. Bounded wait (20 s, generous: the controller reads every 100 ms and
// drops after two bad readings); only the active count is checked, never a
// time. Load from the rest of the machine only adds to the waiting. A probe
// that always says "all good" leaves both workers active and fails here. The
// machine-wide core budget is off, so that no other weft process's share
// lowers the bound (that would drop a worker whatever the probe says).
TEST_F(AdaptProbeConcurrency, a_hog_pinned_onto_a_workers_cpu_makes_the_schedstat_controller_drop_a_worker) {
    wt::scoped_env no_budget("WEFT_BUDGET", "off");
    weft_config_t c = wt::config(2);
    c.adapt = "schedstat";
    ASSERT_EQ(weft_init(&c), 0);
    weft_adapt_info_t info;
    ASSERT_EQ(weft_adapt_get(&info), 0);
    ASSERT_STREQ(info.mode, "schedstat");
    ASSERT_EQ(info.active_workers, 2);

    cpu_set_t allowed;
    ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
    int cpu = 0;
    while (!CPU_ISSET(cpu, &allowed)) ++cpu;
    // Worker 1's kernel thread notes its tid when it starts, maybe after weft_init returns.
    const auto started_by = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    int tid = 0;
    while ((tid = weft::detail::worker_thread(1)) == 0 && std::chrono::steady_clock::now() < started_by) sched_yield();
    ASSERT_NE(tid, 0) << "worker 1 never noted its kernel thread";
    cpu_set_t one = cpus({cpu});
    ASSERT_EQ(sched_setaffinity(tid, sizeof one, &one), 0) << "worker 1 (tid " << tid << ")";

    cpu_hogs hogs(2, cpu);
    keep_workers_busy(2);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    int active = 2;
    while (active == 2 && std::chrono::steady_clock::now() < give_up) {
        ASSERT_EQ(weft_sleep_ns(20'000'000), 0);
        ASSERT_EQ(weft_adapt_get(&info), 0);
        active = info.active_workers;
    }
    EXPECT_EQ(active, 1) << "the controller kept both workers for 20 s beside two hogs on worker 1's CPU";
    weft_stats_t s;
    ASSERT_EQ(weft_stats_get(&s), 0);
    EXPECT_GE(s.workers_dropped, 1u);
    EXPECT_GT(s.adapt_readings, 2u);
}

}  // namespace
