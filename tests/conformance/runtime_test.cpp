// Class: requirement, negative. weft_init / weft_finalize / implicit start, the
// runtime queries, and who may stop the runtime (weft.h, "Runtime").
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

#include "support/weft_test.hpp"

namespace {

using namespace std::chrono_literals;

// Tests here manage the runtime themselves; each gets a watchdog.
class Runtime : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_EQ(weft_is_initialized(), 0); }
    void TearDown() override {
        if (weft_is_initialized() != 0) {
            EXPECT_EQ(weft_finalize(), 0);
        }
    }
    wt::watchdog dog_{wt::default_test_limit(), "Runtime test"};
};

TEST_F(Runtime, init_reports_config_and_finalize_clears_it) {
    weft_config_t cfg = wt::config(2, "lifo", 0);
    ASSERT_EQ(weft_init(&cfg), 0);
    EXPECT_EQ(weft_is_initialized(), 1);
    EXPECT_EQ(weft_num_workers(), 2);
    ASSERT_NE(weft_sched_name(), nullptr);
    EXPECT_STREQ(weft_sched_name(), "lifo");
    EXPECT_EQ(weft_worker_id(), 0);
    ASSERT_EQ(weft_finalize(), 0);
    EXPECT_EQ(weft_is_initialized(), 0);
    EXPECT_EQ(weft_num_workers(), 0);
    EXPECT_EQ(weft_sched_name(), nullptr);
}

TEST_F(Runtime, null_config_uses_defaults) {
    wt::scoped_env a("WEFT_WORKERS", nullptr), b("WEFT_SCHED", nullptr), c("WEFT_STACK_SIZE", nullptr);
    ASSERT_EQ(weft_init(nullptr), 0);
    EXPECT_STREQ(weft_sched_name(), "ws");
    cpu_set_t set;
    ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
    EXPECT_GE(weft_num_workers(), 1);
    EXPECT_LE(weft_num_workers(), CPU_COUNT(&set));
    weft_attr_t attr;
    weft_attr_init(&attr);
    size_t sz = 0;
    EXPECT_EQ(weft_attr_getstacksize(&attr, &sz), 0);
    EXPECT_EQ(sz, 64u * 1024u);
}

TEST_F(Runtime, init_twice_is_ebusy) {
    weft_config_t cfg = wt::config(1, "fifo", 0);
    ASSERT_EQ(weft_init(&cfg), 0);
    EXPECT_EQ(weft_init(&cfg), EBUSY);
    EXPECT_EQ(weft_num_workers(), 1);
}

TEST_F(Runtime, finalize_without_init_is_einval) { EXPECT_EQ(weft_finalize(), EINVAL); }

TEST_F(Runtime, finalize_from_weft_thread_is_eperm) {
    weft_config_t cfg = wt::config(2, "fifo", 0);
    ASSERT_EQ(weft_init(&cfg), 0);
    int rc = -1;
    weft_thread_t t = wt::go([&] { rc = weft_finalize(); });
    wt::join(t);
    EXPECT_EQ(rc, EPERM);
    EXPECT_EQ(weft_is_initialized(), 1);
}

TEST_F(Runtime, finalize_from_external_thread_is_eperm) {
    weft_config_t cfg = wt::config(1, "fifo", 0);
    ASSERT_EQ(weft_init(&cfg), 0);
    int rc = -1;
    std::thread([&] { rc = weft_finalize(); }).join();
    EXPECT_EQ(rc, EPERM);
    EXPECT_EQ(weft_is_initialized(), 1);
}

TEST_F(Runtime, main_is_weft_thread_one_named_main) {
    weft_config_t cfg = wt::config(1, "fifo", 0);
    ASSERT_EQ(weft_init(&cfg), 0);
    weft_thread_t self = weft_thread_self();
    ASSERT_NE(self, WEFT_THREAD_NULL);
    EXPECT_EQ(weft_thread_id(self), 1u);
    char name[WEFT_THREAD_NAME_MAX];
    ASSERT_EQ(weft_thread_getname(self, name, sizeof name), 0);
    EXPECT_STREQ(name, "main");
}

TEST_F(Runtime, implicit_start_on_first_use_makes_caller_main) {
    wt::scoped_env a("WEFT_WORKERS", "2"), b("WEFT_SCHED", "lifo");
    std::atomic<int> ran{0};
    weft_thread_t t = wt::go([&] { ran = 1; });  // first weft call: starts the runtime
    EXPECT_EQ(weft_is_initialized(), 1);
    EXPECT_EQ(weft_num_workers(), 2);
    EXPECT_STREQ(weft_sched_name(), "lifo");
    EXPECT_EQ(weft_thread_id(weft_thread_self()), 1u);
    wt::join(t);
    EXPECT_EQ(ran.load(), 1);
    EXPECT_EQ(weft_finalize(), 0);
}

TEST_F(Runtime, config_fields_override_environment) {
    wt::scoped_env a("WEFT_WORKERS", "3"), b("WEFT_SCHED", "lifo"), c("WEFT_STACK_SIZE", "1M");
    weft_config_t cfg = wt::config(2, "fifo", 128 * 1024);
    ASSERT_EQ(weft_init(&cfg), 0);
    EXPECT_EQ(weft_num_workers(), 2);
    EXPECT_STREQ(weft_sched_name(), "fifo");
    weft_attr_t attr;
    weft_attr_init(&attr);
    size_t sz = 0;
    EXPECT_EQ(weft_attr_getstacksize(&attr, &sz), 0);
    EXPECT_EQ(sz, 128u * 1024u);
}

TEST_F(Runtime, environment_applies_when_config_fields_are_zero) {
    wt::scoped_env a("WEFT_WORKERS", "3"), b("WEFT_SCHED", "lifo"), c("WEFT_STACK_SIZE", "256K");
    weft_config_t cfg = wt::config(0, nullptr, 0);
    ASSERT_EQ(weft_init(&cfg), 0);
    EXPECT_EQ(weft_num_workers(), 3);
    EXPECT_STREQ(weft_sched_name(), "lifo");
    weft_attr_t attr;
    weft_attr_init(&attr);
    size_t sz = 0;
    EXPECT_EQ(weft_attr_getstacksize(&attr, &sz), 0);
    EXPECT_EQ(sz, 256u * 1024u);
}

TEST_F(Runtime, restart_after_finalize) {
    for (int round = 0; round < 3; ++round) {
        weft_config_t cfg = wt::config(round + 1, round % 2 ? "lifo" : "fifo", 0);
        ASSERT_EQ(weft_init(&cfg), 0) << "round " << round;
        EXPECT_EQ(weft_num_workers(), round + 1);
        int v = 0;
        weft_thread_t t = wt::go([&] { v = 42; });
        wt::join(t);
        EXPECT_EQ(v, 42);
        weft_stats_t s;
        ASSERT_EQ(weft_stats_get(&s), 0);
        EXPECT_EQ(s.threads_created, 1u) << "statistics start from zero in a new runtime";
        ASSERT_EQ(weft_finalize(), 0);
    }
}

TEST_F(Runtime, finalize_waits_for_detached_threads) {
    weft_config_t cfg = wt::config(2, "fifo", 0);
    ASSERT_EQ(weft_init(&cfg), 0);
    std::atomic<int> done{0};
    weft_attr_t attr;
    weft_attr_init(&attr);
    weft_attr_setdetachstate(&attr, WEFT_CREATE_DETACHED);
    for (int i = 0; i < 20; ++i)
        wt::go(
            [&] {
                weft_sleep_ns(20'000'000);
                done.fetch_add(1);
            },
            &attr);
    ASSERT_EQ(weft_finalize(), 0);
    EXPECT_EQ(done.load(), 20);
}

TEST_F(Runtime, finalize_waits_for_unjoined_joinable_threads) {
    weft_config_t cfg = wt::config(2, "fifo", 0);
    ASSERT_EQ(weft_init(&cfg), 0);
    std::atomic<int> done{0};
    for (int i = 0; i < 5; ++i)
        wt::go([&] {
            weft_sleep_ns(10'000'000);
            done.fetch_add(1);
        });
    // Never joined: finalize still waits for them to end, and returns.
    ASSERT_EQ(weft_finalize(), 0);
    EXPECT_EQ(done.load(), 5);
}

TEST_F(Runtime, worker_id_is_minus_one_on_external_thread) {
    weft_config_t cfg = wt::config(2, "fifo", 0);
    ASSERT_EQ(weft_init(&cfg), 0);
    int id = 0;
    weft_thread_t self = reinterpret_cast<weft_thread_t>(1);
    std::thread([&] {
        id = weft_worker_id();
        self = weft_thread_self();
    }).join();
    EXPECT_EQ(id, -1);
    EXPECT_EQ(self, WEFT_THREAD_NULL);
}

TEST_F(Runtime, worker_ids_are_in_range) {
    weft_config_t cfg = wt::config(4, "fifo", 0);
    ASSERT_EQ(weft_init(&cfg), 0);
    std::atomic<int> bad{0};
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < 64; ++i)
        ts.push_back(wt::go([&] {
            for (int k = 0; k < 10; ++k) {
                int w = weft_worker_id();
                if (w < 0 || w >= 4) bad.fetch_add(1);
                weft_thread_yield();
            }
        }));
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(bad.load(), 0);
}

// weft.h: main is an ordinary weft thread until weft_finalize: it may resume on
// another worker after a blocking call, and weft_finalize brings it back to
// worker 0, "so the process ends on the kernel thread it began on".
class RuntimeConcurrency : public Runtime {};

// Makes main resume on a worker other than 0, by construction, and returns
// that worker and the kernel thread main ran on there. Main waits on a semaphore that only a thread running on worker 0
// posts; that thread then keeps worker 0 (it spins, with no scheduling point)
// until main has resumed, so another worker must run main. The other threads
// (twice as many as workers, so the run queue is never empty) yield until one
// of them finds itself on worker 0, which runs them once main waits.
struct resumed_on {
    int worker;
    pid_t tid;
};

// The calling kernel thread. Not pthread_self(): glibc declares it const, so
// the compiler may reuse a value read on another kernel thread before a switch.
pid_t kernel_tid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

resumed_on move_main_off_worker_0() {
    weft_sem_t resume;
    EXPECT_EQ(weft_sem_init(&resume, 0), 0);
    std::atomic<bool> claimed{false}, resumed{false};
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < 2 * weft_num_workers(); ++i)
        ts.push_back(wt::go([&] {
            while (!claimed.load()) {
                if (weft_worker_id() == 0 && !claimed.exchange(true)) {
                    EXPECT_EQ(weft_sem_post(&resume), 0);
                    while (!resumed.load()) {
                    }
                    return;
                }
                weft_thread_yield();
            }
        }));
    EXPECT_EQ(weft_sem_wait(&resume), 0);
    const resumed_on r{weft_worker_id(), kernel_tid()};
    resumed = true;
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(weft_sem_destroy(&resume), 0);
    return r;
}

TEST_F(RuntimeConcurrency, finalize_returns_on_the_initial_kernel_thread) {
    weft_config_t cfg = wt::config(4, "fifo");
    ASSERT_EQ(weft_init(&cfg), 0);
    const pid_t initial = kernel_tid();
    ASSERT_EQ(weft_worker_id(), 0);
    const resumed_on r = move_main_off_worker_0();
    ASSERT_NE(r.worker, 0) << "main resumed on worker 0, which another thread held";
    ASSERT_NE(r.tid, initial) << "main resumed on worker " << r.worker << " but on the initial kernel thread";
    ASSERT_EQ(weft_finalize(), 0);
    EXPECT_EQ(kernel_tid(), initial) << "weft_finalize returned on another kernel thread (main was on worker "
                                     << r.worker << ")";
}

TEST_F(RuntimeConcurrency, main_may_resume_on_any_worker_and_keeps_working) {
    weft_config_t cfg = wt::config(4, "fifo");
    ASSERT_EQ(weft_init(&cfg), 0);
    ASSERT_NE(move_main_off_worker_0().worker, 0) << "main resumed on worker 0, which another thread held";
    // On another worker, main is still thread 1 and may create and join.
    EXPECT_EQ(weft_thread_id(weft_thread_self()), 1u);
    int v = 0;
    wt::join(wt::go([&] { v = 1; }));
    EXPECT_EQ(v, 1);
}

}  // namespace
