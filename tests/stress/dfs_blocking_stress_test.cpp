// dfs with several workers (stress, run under TSan too): blocking primitives
// keep working while blocked threads keep their place in the order, joins of
// deep fork trees, quota preemptions and dummy threads in the middle of all
// that, and threads created and woken by kernel threads outside weft.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "support/weft_test.hpp"
#include "weft/weft.h"

namespace {

template <class F>
void with_dfs(int workers, F body) {
    setenv("WEFT_QUOTA", "16K", 1);  // small: many quota preemptions and dummies
    weft_config_t cfg{};
    cfg.workers = workers;
    cfg.sched = "dfs";
    ASSERT_EQ(weft_init(&cfg), 0);
    body();
    ASSERT_EQ(weft_finalize(), 0);
    unsetenv("WEFT_QUOTA");
}

class DfsConcurrency : public ::testing::TestWithParam<int> {};

// fib by fork/join, each node allocating (and freeing) a little.
long fib(long n);
void* fib_thread(void* p) {
    auto* n = static_cast<long*>(p);
    *n = fib(*n);
    return nullptr;
}
long fib(long n) {
    if (n < 2) return n;
    // Two blocks of 10000 bytes against a 16K quota: every node is preempted
    // once, at its second allocation.
    void* scratch = weft_malloc(10000);
    void* more = weft_malloc(10000);
    std::memset(scratch, 0, 512);
    weft_free(more);
    long a = n - 1;
    weft_thread_t t;
    EXPECT_EQ(weft_thread_create(&t, nullptr, &fib_thread, &a), 0);
    long b = fib(n - 2);
    EXPECT_EQ(weft_thread_join(t, nullptr), 0);
    weft_free(scratch);
    return a + b;
}

TEST_P(DfsConcurrency, fork_join_tree_with_allocations) {
    with_dfs(GetParam(), [] {
        // One round under TSan (10x slower): fib(18) alone is some 4,000 threads,
        // each preempted by its quota once.
        const int rounds = wt::tsan ? 1 : 3;
        for (int round = 0; round < rounds; ++round) EXPECT_EQ(fib(18), 2584);
        weft_stats_t s;
        ASSERT_EQ(weft_stats_get(&s), 0);
        EXPECT_GT(s.quota_preemptions, 0u);
        EXPECT_EQ(s.heap_bytes, 0u);
        EXPECT_EQ(s.threads_live, 1u);
    });
}

struct mutex_ctx {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    long counter = 0;
    int iters = 0;
};
void* mutex_body(void* p) {
    auto* c = static_cast<mutex_ctx*>(p);
    for (int i = 0; i < c->iters; ++i) {
        EXPECT_EQ(weft_mutex_lock(&c->m), 0);
        long v = c->counter;
        if (i % 16 == 0) {
            // An allocation inside the critical section: under a 16K quota a
            // thread is preempted here now and then, holding the mutex, and
            // the others must block on it, keep their places, and be woken.
            void* x = weft_malloc(6000);
            weft_thread_yield();
            weft_free(x);
        }
        c->counter = v + 1;
        EXPECT_EQ(weft_mutex_unlock(&c->m), 0);
    }
    return nullptr;
}

TEST_P(DfsConcurrency, mutex_counter) {
    with_dfs(GetParam(), [] {
        mutex_ctx c;
        c.iters = 2000;
        std::vector<weft_thread_t> t(16);
        for (auto& th : t) ASSERT_EQ(weft_thread_create(&th, nullptr, &mutex_body, &c), 0);
        for (auto& th : t) ASSERT_EQ(weft_thread_join(th, nullptr), 0);
        EXPECT_EQ(c.counter, 16 * 2000);
    });
}

// A bounded buffer: producers and consumers block on two condition variables.
struct buffer {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    weft_cond_t not_full = WEFT_COND_INITIALIZER;
    weft_cond_t not_empty = WEFT_COND_INITIALIZER;
    long items[8];
    int head = 0, count = 0;
    std::atomic<long> consumed_sum{0};
};
constexpr int per_producer = 3000;
void* producer(void* p) {
    auto* b = static_cast<buffer*>(p);
    for (long i = 1; i <= per_producer; ++i) {
        weft_mutex_lock(&b->m);
        while (b->count == 8) weft_cond_wait(&b->not_full, &b->m);
        b->items[(b->head + b->count++) % 8] = i;
        weft_cond_signal(&b->not_empty);
        weft_mutex_unlock(&b->m);
    }
    return nullptr;
}
void* consumer(void* p) {
    auto* b = static_cast<buffer*>(p);
    for (int i = 0; i < per_producer; ++i) {
        weft_mutex_lock(&b->m);
        while (b->count == 0) weft_cond_wait(&b->not_empty, &b->m);
        long v = b->items[b->head];
        b->head = (b->head + 1) % 8;
        --b->count;
        weft_cond_signal(&b->not_full);
        weft_mutex_unlock(&b->m);
        b->consumed_sum.fetch_add(v, std::memory_order_relaxed);
        if (i % 64 == 0) weft_free(weft_malloc(20000));  // a large allocation: dummies
    }
    return nullptr;
}

TEST_P(DfsConcurrency, condition_variable_bounded_buffer) {
    with_dfs(GetParam(), [] {
        buffer b;
        std::vector<weft_thread_t> t;
        for (int i = 0; i < 4; ++i) {
            weft_thread_t th;
            ASSERT_EQ(weft_thread_create(&th, nullptr, i % 2 ? &producer : &consumer, &b), 0);
            t.push_back(th);
        }
        for (int i = 0; i < 4; ++i) {
            weft_thread_t th;
            ASSERT_EQ(weft_thread_create(&th, nullptr, i % 2 ? &consumer : &producer, &b), 0);
            t.push_back(th);
        }
        for (auto& th : t) ASSERT_EQ(weft_thread_join(th, nullptr), 0);
        EXPECT_EQ(b.consumed_sum.load(), 4L * per_producer * (per_producer + 1) / 2);
        weft_stats_t s;
        ASSERT_EQ(weft_stats_get(&s), 0);
        EXPECT_GT(s.dummy_threads, 0u);
    });
}

// Threads blocked on a barrier in large numbers, woken in one go: each must go
// back to its place (a heap insertion), none may be lost.
struct barrier_ctx {
    weft_barrier_t bar;
    std::atomic<int> after{0};
};
void* barrier_body(void* p) {
    auto* c = static_cast<barrier_ctx*>(p);
    for (int r = 0; r < 5; ++r) {
        weft_barrier_wait(&c->bar);
        c->after.fetch_add(1, std::memory_order_relaxed);
    }
    return nullptr;
}

TEST_P(DfsConcurrency, many_threads_blocked_on_a_barrier) {
    with_dfs(GetParam(), [] {
        barrier_ctx c;
        const int n = 500;
        ASSERT_EQ(weft_barrier_init(&c.bar, n), 0);
        std::vector<weft_thread_t> t(n);
        for (auto& th : t) ASSERT_EQ(weft_thread_create(&th, nullptr, &barrier_body, &c), 0);
        for (auto& th : t) ASSERT_EQ(weft_thread_join(th, nullptr), 0);
        EXPECT_EQ(c.after.load(), 5 * n);
        ASSERT_EQ(weft_barrier_destroy(&c.bar), 0);
    });
}

// Kernel threads outside weft create weft threads (which dfs places at the end
// of its order when it first sees them) and post a semaphore weft threads wait
// on (their wake-ups reach the workers through the core's inject queue).
struct external_ctx {
    weft_sem_t sem;
    std::atomic<int> ran{0};
};
void* external_child(void* p) {
    auto* c = static_cast<external_ctx*>(p);
    void* x = weft_malloc(40000);  // forks dummies from a thread dfs has not placed yet
    weft_free(x);
    weft_thread_t t;
    EXPECT_EQ(weft_thread_create(&t, nullptr, [](void* q) -> void* {
        static_cast<external_ctx*>(q)->ran.fetch_add(1);
        return nullptr;
    }, c), 0);
    EXPECT_EQ(weft_thread_join(t, nullptr), 0);
    c->ran.fetch_add(1);
    return nullptr;
}
void* sem_waiter(void* p) {
    weft_sem_wait(&static_cast<external_ctx*>(p)->sem);
    return nullptr;
}

TEST_P(DfsConcurrency, threads_created_and_woken_by_kernel_threads) {
    with_dfs(GetParam(), [] {
        external_ctx c;
        ASSERT_EQ(weft_sem_init(&c.sem, 0), 0);
        std::vector<weft_thread_t> waiters(20);
        for (auto& th : waiters) ASSERT_EQ(weft_thread_create(&th, nullptr, &sem_waiter, &c), 0);
        std::vector<weft_thread_t> made(40);
        std::vector<std::thread> ks;
        for (int k = 0; k < 2; ++k)
            ks.emplace_back([&, k] {
                for (int i = 0; i < 20; ++i) {
                    EXPECT_EQ(weft_thread_create(&made[k * 20 + i], nullptr, &external_child, &c), 0);
                    EXPECT_EQ(weft_sem_post(&c.sem), 0);
                }
            });
        for (auto& k : ks) k.join();
        for (auto& th : made) ASSERT_EQ(weft_thread_join(th, nullptr), 0);
        for (auto& th : waiters) ASSERT_EQ(weft_thread_join(th, nullptr), 0);
        EXPECT_EQ(c.ran.load(), 80);
        ASSERT_EQ(weft_sem_destroy(&c.sem), 0);
    });
}

INSTANTIATE_TEST_SUITE_P(workers, DfsConcurrency, ::testing::Values(2, 4),
                         [](const ::testing::TestParamInfo<int>& i) { return std::to_string(i.param); });

}  // namespace
