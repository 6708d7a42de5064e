// Class: stress, resource_usage. Thread churn at scale: a million weft threads
// created and joined with at least 100,000 live at once; detached threads en
// masse that weft_finalize must wait for; bursts of spawns separated by idle
// gaps long enough for workers to park (no lost wake-up may leave work
// stranded). Sizes shrink by wt::stress_scale() under sanitizers
// (WEFT_STRESS_SCALE overrides); the release build always keeps >= 100,000
// live threads.
#include <unistd.h>

#include <atomic>
#include <vector>

#include "support/weft_test.hpp"

namespace {

class StressThreads : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Workers, StressThreads,
                         ::testing::Values(wt::rt_param{"fifo", 1}, wt::rt_param{"lifo", 2}, wt::rt_param{"fifo", 4}),
                         wt::rt_param_name);

void* add_one(void* arg) { return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(arg) + 1); }

TEST_P(StressThreads, million_created_and_joined_with_100k_live) {
    const std::int64_t live = wt::sanitized ? wt::scaled(100'000, 2'000) : 100'000;
    // Under TSan, where a thread's creation and join cost about a millisecond,
    // four times `live` instead of 2% of the million: three batches after the
    // live phase, each far more threads than the stack and handle caches hold
    // (64), so every batch still runs on memory the previous one gave back.
    const std::int64_t total = wt::tsan ? 4 * live : wt::scaled(1'000'000, 10'000);
    ASSERT_LE(live, total);

    // Phase 1: `live` threads all blocked on one semaphore at the same time.
    weft_sem_t gate;
    weft_sem_init(&gate, 0);
    std::vector<weft_thread_t> ts(static_cast<std::size_t>(live));
    auto blocked_body = [](void* arg) -> void* {
        weft_sem_wait(static_cast<weft_sem_t*>(arg));
        return reinterpret_cast<void*>(std::uintptr_t(7));
    };
    for (auto& t : ts) ASSERT_EQ(weft_thread_create(&t, nullptr, blocked_body, &gate), 0);
    weft_stats_t s;
    ASSERT_EQ(weft_stats_get(&s), 0);
    EXPECT_EQ(s.threads_live, std::uint64_t(live + 1)) << "every thread is alive at once (plus main)";
    for (std::int64_t i = 0; i < live; ++i) ASSERT_EQ(weft_sem_post(&gate), 0);
    std::uint64_t sum = 0;
    for (auto t : ts) {
        void* r = nullptr;
        ASSERT_EQ(weft_thread_join(t, &r), 0);
        sum += reinterpret_cast<std::uintptr_t>(r);
    }
    EXPECT_EQ(sum, std::uint64_t(7 * live));

    // Phase 2: the rest in batches: create a batch, join it.
    std::int64_t done = live;
    // At most `live` at a time: TSan allows ~8000 threads (fibers included).
    const std::int64_t batch = std::min<std::int64_t>(10'000, live);
    std::uint64_t expect = 0;
    sum = 0;
    while (done < total) {
        std::int64_t n = std::min(batch, total - done);
        for (std::int64_t i = 0; i < n; ++i) {
            auto arg = static_cast<std::uintptr_t>(done + i);
            ASSERT_EQ(
                weft_thread_create(&ts[static_cast<std::size_t>(i)], nullptr, &add_one, reinterpret_cast<void*>(arg)),
                0);
            expect += arg + 1;
        }
        for (std::int64_t i = 0; i < n; ++i) {
            void* r = nullptr;
            ASSERT_EQ(weft_thread_join(ts[static_cast<std::size_t>(i)], &r), 0);
            sum += reinterpret_cast<std::uintptr_t>(r);
        }
        done += n;
    }
    EXPECT_EQ(sum, expect);

    ASSERT_EQ(weft_stats_get(&s), 0);
    EXPECT_EQ(s.threads_created, std::uint64_t(total));
    EXPECT_GE(s.max_live_threads, std::uint64_t(live + 1));
    EXPECT_EQ(s.threads_live, 1u);
}

TEST_P(StressThreads, nested_spawn_tree) {
    // A binary fork tree: every thread creates and joins two children.
    struct tree {
        static void* node(void* arg) {
            auto depth = reinterpret_cast<std::uintptr_t>(arg);
            if (depth == 0) return reinterpret_cast<void*>(std::uintptr_t(1));
            weft_thread_t l, r;
            weft_thread_create(&l, nullptr, &node, reinterpret_cast<void*>(depth - 1));
            weft_thread_create(&r, nullptr, &node, reinterpret_cast<void*>(depth - 1));
            void *a = nullptr, *b = nullptr;
            weft_thread_join(l, &a);
            weft_thread_join(r, &b);
            return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(a) + reinterpret_cast<std::uintptr_t>(b));
        }
    };
    // Under TSan depth 10: 2,047 threads, blocked joins at every level.
    const std::uintptr_t depth = wt::tsan ? 10 : wt::sanitized ? 11 : 16;
    weft_thread_t root;
    ASSERT_EQ(weft_thread_create(&root, nullptr, &tree::node, reinterpret_cast<void*>(depth)), 0);
    void* leaves = nullptr;
    ASSERT_EQ(weft_thread_join(root, &leaves), 0);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(leaves), std::uintptr_t(1) << depth);
    weft_stats_t s;
    ASSERT_EQ(weft_stats_get(&s), 0);
    EXPECT_EQ(s.threads_created, (std::uint64_t(2) << depth) - 1);
}

TEST_P(StressThreads, detached_en_masse_finalize_waits) {
    const std::int64_t n = wt::scaled(200'000, 2'000);
    static std::atomic<std::int64_t> done;
    done = 0;
    weft_attr_t attr;
    weft_attr_init(&attr);
    weft_attr_setdetachstate(&attr, WEFT_CREATE_DETACHED);
    for (std::int64_t i = 0; i < n; ++i) {
        weft_thread_t t;
        ASSERT_EQ(weft_thread_create(
                      &t, &attr,
                      [](void* arg) -> void* {
                          auto k = reinterpret_cast<std::uintptr_t>(arg);
                          if (k % 3 == 0) weft_thread_yield();
                          if (k % 101 == 0) weft_sleep_ns(100'000);
                          done.fetch_add(1, std::memory_order_relaxed);
                          return nullptr;
                      },
                      reinterpret_cast<void*>(static_cast<std::uintptr_t>(i))),
                  0);
    }
    // Detached threads that themselves create detached threads.
    for (int i = 0; i < 100; ++i) {
        weft_thread_t t;
        ASSERT_EQ(weft_thread_create(
                      &t, &attr,
                      [](void*) -> void* {
                          weft_attr_t a;
                          weft_attr_init(&a);
                          weft_attr_setdetachstate(&a, WEFT_CREATE_DETACHED);
                          for (int k = 0; k < 10; ++k) {
                              weft_thread_t c;
                              weft_thread_create(
                                  &c, &a,
                                  [](void*) -> void* {
                                      done.fetch_add(1, std::memory_order_relaxed);
                                      return nullptr;
                                  },
                                  nullptr);
                          }
                          done.fetch_add(1, std::memory_order_relaxed);
                          return nullptr;
                      },
                      nullptr),
                  0);
    }
    ASSERT_EQ(weft_finalize(), 0);  // waits for every detached thread
    EXPECT_EQ(done.load(), n + 100 * 11);
}

TEST_P(StressThreads, spawn_bursts_with_idle_gaps) {
    // Between bursts every worker runs out of work and parks; the next burst
    // must wake them (or run on the creator). A lost wake-up strands a thread
    // and the join below never returns (the watchdog reports it).
    const int bursts = wt::sanitized ? 20 : 60;
    const int per_burst = 200;
    std::atomic<int> ran{0};
    std::vector<weft_thread_t> ts(per_burst);
    for (int b = 0; b < bursts; ++b) {
        for (auto& t : ts)
            t = wt::go([&] {
                if (ran.fetch_add(1, std::memory_order_relaxed) % 7 == 0) weft_thread_yield();
            });
        for (auto t : ts) wt::join(t);
        switch (b % 3) {
        case 0: weft_sleep_ns(3'000'000); break;  // main blocked on a timer: workers park
        case 1: usleep(3'000); break;             // worker 0 busy in the kernel: others park
        default: break;                           // straight into the next burst
        }
    }
    EXPECT_EQ(ran.load(), bursts * per_burst);
}

// Runs under the default deadlock detector: weft threads waiting for a kernel
// thread outside weft are never reported while it lives (docs/env.md,
// WEFT_DEADLOCK), however long it takes.
class StressExternal : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Workers, StressExternal,
                         ::testing::Values(wt::rt_param{"fifo", 1}, wt::rt_param{"lifo", 2}, wt::rt_param{"fifo", 4}),
                         wt::rt_param_name);

TEST_P(StressExternal, wakeups_from_external_thread_after_idle_gaps) {
    // Weft threads block; an external kernel thread wakes them after the
    // workers have parked. The wake-up goes through the inject queue.
    const int rounds = wt::sanitized ? 10 : 40;
    weft_sem_t s;
    weft_sem_init(&s, 0);
    std::atomic<int> woken{0};
    for (int r = 0; r < rounds; ++r) {
        std::vector<weft_thread_t> ts;
        for (int i = 0; i < 8; ++i)
            ts.push_back(wt::go([&] {
                weft_sem_wait(&s);
                woken.fetch_add(1);
            }));
        wt::kthread ext([&] {
            usleep(2'000);  // workers park meanwhile
            for (int i = 0; i < 8; ++i) weft_sem_post(&s);
        });
        for (auto t : ts) wt::join(t);
        ext.join();
    }
    EXPECT_EQ(woken.load(), rounds * 8);
}

}  // namespace
