// Class: requirement. Kernel threads that are not weft workers ("external",
// weft.h) use the API: they block on a futex instead of a worker, and wake
// weft threads through the runtime's inject queue. Every test here mixes
// std::thread with weft threads, hence the Concurrency suite name (TSan run).
//
// These programs rely on a kernel thread outside weft to wake weft threads, and
// run under the default deadlock detector (WEFT_DEADLOCK=abort): it must not
// take a slow kernel thread on a loaded machine for a deadlock
// (deadlock_outside_test.cpp checks that in child processes).
#include <atomic>
#include <cerrno>
#include <thread>
#include <vector>

#include "support/weft_test.hpp"

namespace {

using namespace std::chrono_literals;

class ExternalConcurrency : public wt::runtime_fixture {
protected:
    void SetUp() override {
        env_ = new wt::scoped_env("WEFT_DEADLOCK", nullptr);
        wt::runtime_fixture::SetUp();
    }
    void TearDown() override {
        wt::runtime_fixture::TearDown();
        delete env_;
    }
    wt::scoped_env* env_ = nullptr;
};
INSTANTIATE_TEST_SUITE_P(Workers, ExternalConcurrency, ::testing::ValuesIn(wt::rt_params_all()), wt::rt_param_name);

TEST_P(ExternalConcurrency, external_post_wakes_weft_waiters) {
    weft_sem_t s;
    weft_sem_init(&s, 0);
    std::atomic<int> woken{0};
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < 10; ++i)
        ts.push_back(wt::go([&] {
            weft_sem_wait(&s);
            woken.fetch_add(1);
        }));
    std::thread poster([&] {
        for (int i = 0; i < 10; ++i) weft_sem_post(&s);
    });
    for (auto t : ts) wt::join(t);
    poster.join();
    EXPECT_EQ(woken.load(), 10);
}

TEST_P(ExternalConcurrency, main_waits_for_external_post) {
    weft_sem_t s;
    weft_sem_init(&s, 0);
    std::thread poster([&] {
        std::this_thread::sleep_for(20ms);
        weft_sem_post(&s);
    });
    EXPECT_EQ(weft_sem_wait(&s), 0);
    poster.join();
}

TEST_P(ExternalConcurrency, external_waits_for_weft_post) {
    weft_sem_t s;
    weft_sem_init(&s, 0);
    int rc = -1;
    std::thread waiter([&] { rc = weft_sem_wait(&s); });
    weft_thread_t t = wt::go([&] {
        weft_sleep_ns(10'000'000);
        weft_sem_post(&s);
    });
    wt::join(t);
    waiter.join();
    EXPECT_EQ(rc, 0);
}

TEST_P(ExternalConcurrency, external_timedwait_times_out) {
    weft_sem_t s;
    weft_sem_init(&s, 0);
    int rc = -1;
    std::int64_t waited = 0;
    std::thread([&] {
        std::int64_t t0 = wt::now_ns();
        timespec ts = wt::realtime_in(30ms);
        rc = weft_sem_timedwait(&s, &ts);
        waited = wt::now_ns() - t0;
    }).join();
    EXPECT_EQ(rc, ETIMEDOUT);
    EXPECT_GE(waited, 25'000'000);
}

TEST_P(ExternalConcurrency, mutex_shared_between_external_and_weft_threads) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    long counter = 0;
    const int iters = 2000;
    std::vector<std::thread> ext;
    for (int i = 0; i < 2; ++i)
        ext.emplace_back([&] {
            for (int k = 0; k < iters; ++k) {
                weft_mutex_lock(&m);
                ++counter;
                weft_mutex_unlock(&m);
            }
        });
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < 4; ++i)
        ts.push_back(wt::go([&] {
            for (int k = 0; k < iters; ++k) {
                weft_mutex_lock(&m);
                ++counter;
                if (k % 64 == 0) weft_thread_yield();
                weft_mutex_unlock(&m);
            }
        }));
    for (auto t : ts) wt::join(t);
    for (auto& t : ext) t.join();
    EXPECT_EQ(counter, 6L * iters);
}

TEST_P(ExternalConcurrency, external_blocks_on_mutex_held_by_weft_thread) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    ASSERT_EQ(weft_mutex_lock(&m), 0);
    std::atomic<int> got{0};
    std::thread ext([&] {
        weft_mutex_lock(&m);
        got = 1;
        weft_mutex_unlock(&m);
    });
    weft_sleep_ns(20'000'000);
    EXPECT_EQ(got.load(), 0);
    ASSERT_EQ(weft_mutex_unlock(&m), 0);
    ext.join();
    EXPECT_EQ(got.load(), 1);
}

TEST_P(ExternalConcurrency, external_errorcheck_mutex_owner_identity) {
    weft_mutexattr_t a;
    weft_mutexattr_init(&a);
    weft_mutexattr_settype(&a, WEFT_MUTEX_ERRORCHECK);
    weft_mutex_t m;
    weft_mutex_init(&m, &a);
    int relock = -1, other_unlock = -1;
    std::thread([&] {
        weft_mutex_lock(&m);
        relock = weft_mutex_lock(&m);
    }).join();
    // The mutex is still owned by the (gone) external thread: not by us.
    other_unlock = weft_mutex_unlock(&m);
    EXPECT_EQ(relock, EDEADLK);
    EXPECT_EQ(other_unlock, EPERM);
}

TEST_P(ExternalConcurrency, external_creates_and_joins_weft_threads) {
    std::vector<long> results(20, 0);
    wt::kthread ext([&] {
        std::vector<weft_thread_t> ts;
        for (int i = 0; i < 20; ++i)
            ts.push_back(wt::go([&results, i] {
                weft_thread_yield();
                results[i] = i * i;
            }));
        for (auto t : ts) wt::join(t);
    });
    ext.join();
    for (int i = 0; i < 20; ++i) EXPECT_EQ(results[i], i * i);
    weft_stats_t s;
    ASSERT_EQ(weft_stats_get(&s), 0);
    EXPECT_EQ(s.threads_created, 20u);
    EXPECT_EQ(s.threads_live, 1u);
}

TEST_P(ExternalConcurrency, external_joins_thread_created_by_main) {
    weft_sem_t s;
    weft_sem_init(&s, 0);
    weft_thread_t t = wt::go([&]() -> void* {
        weft_sem_wait(&s);
        return reinterpret_cast<void*>(99);
    });
    void* r = nullptr;
    int rc = -1;
    wt::kthread ext([&] { rc = weft_thread_join(t, &r); });
    weft_sleep_ns(5'000'000);
    weft_sem_post(&s);
    ext.join();
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(r), 99u);
}

TEST_P(ExternalConcurrency, external_waits_on_condition_signaled_by_weft) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    weft_cond_t c = WEFT_COND_INITIALIZER;
    bool ready = false;
    std::thread ext([&] {
        weft_mutex_lock(&m);
        while (!ready) weft_cond_wait(&c, &m);
        weft_mutex_unlock(&m);
    });
    weft_thread_t t = wt::go([&] {
        weft_sleep_ns(10'000'000);
        weft_mutex_lock(&m);
        ready = true;
        weft_cond_broadcast(&c);
        weft_mutex_unlock(&m);
    });
    wt::join(t);
    ext.join();
    EXPECT_TRUE(ready);
}

TEST_P(ExternalConcurrency, external_takes_part_in_a_barrier) {
    weft_barrier_t b;
    weft_barrier_init(&b, 4);
    std::atomic<int> serial{0};
    auto body = [&] {
        for (int r = 0; r < 20; ++r)
            if (weft_barrier_wait(&b) == WEFT_BARRIER_SERIAL_THREAD) serial.fetch_add(1);
    };
    std::thread ext(body);
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < 2; ++i) ts.push_back(wt::go(body));
    body();
    for (auto t : ts) wt::join(t);
    ext.join();
    EXPECT_EQ(serial.load(), 20);
}

TEST_P(ExternalConcurrency, external_rwlock_reader_and_weft_writer) {
    weft_rwlock_t rw = WEFT_RWLOCK_INITIALIZER;
    long a = 0, b = 0;
    std::atomic<int> torn{0};
    std::thread reader([&] {
        for (int k = 0; k < 500; ++k) {
            weft_rwlock_rdlock(&rw);
            if (a != b) torn.fetch_add(1);
            weft_rwlock_unlock(&rw);
        }
    });
    weft_thread_t w = wt::go([&] {
        for (int k = 0; k < 500; ++k) {
            weft_rwlock_wrlock(&rw);
            ++a;
            weft_thread_yield();
            ++b;
            weft_rwlock_unlock(&rw);
        }
    });
    wt::join(w);
    reader.join();
    EXPECT_EQ(torn.load(), 0);
}

TEST_P(ExternalConcurrency, external_yield_and_self) {
    int yield_rc = -1, worker = 0;
    weft_thread_t self = reinterpret_cast<weft_thread_t>(1);
    std::thread([&] {
        yield_rc = weft_thread_yield();
        worker = weft_worker_id();
        self = weft_thread_self();
    }).join();
    EXPECT_EQ(yield_rc, 0);
    EXPECT_EQ(worker, -1);
    EXPECT_EQ(self, WEFT_THREAD_NULL);
}

TEST_P(ExternalConcurrency, many_external_posters_many_weft_waiters) {
    weft_sem_t s;
    weft_sem_init(&s, 0);
    const int per = 300, posters = 3, waiters = 30;
    std::atomic<int> got{0};
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < waiters; ++i)
        ts.push_back(wt::go([&] {
            for (int k = 0; k < per * posters / waiters; ++k) {
                weft_sem_wait(&s);
                got.fetch_add(1);
            }
        }));
    std::vector<std::thread> ext;
    for (int i = 0; i < posters; ++i)
        ext.emplace_back([&] {
            for (int k = 0; k < per; ++k) weft_sem_post(&s);
        });
    for (auto t : ts) wt::join(t);
    for (auto& t : ext) t.join();
    EXPECT_EQ(got.load(), per * posters);
}

}  // namespace
