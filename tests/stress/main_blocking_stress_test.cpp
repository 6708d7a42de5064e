// Class: stress. The main weft thread (the flow that called weft_init, a weft
// thread with a heap control block and the process's own stack) blocks on
// every weft primitive in turn, repeatedly, while threads on other workers
// release it. A wake-up of main that is lost, or delivered to the wrong
// worker, hangs the test (the watchdog reports it).
#include <atomic>
#include <cerrno>
#include <vector>

#include "support/weft_test.hpp"

namespace {

using namespace std::chrono_literals;

class StressMain : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Workers, StressMain, ::testing::ValuesIn(wt::rt_params_all()), wt::rt_param_name);

TEST_P(StressMain, main_blocks_on_every_primitive) {
    const int rounds = static_cast<int>(wt::scaled(300, 10));
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    weft_cond_t c = WEFT_COND_INITIALIZER;
    weft_sem_t s;
    weft_sem_init(&s, 0);
    weft_barrier_t b;
    weft_barrier_init(&b, 2);
    weft_rwlock_t rw = WEFT_RWLOCK_INITIALIZER;
    int steps = 0;
    for (int r = 0; r < rounds; ++r) {
        // 1. mutex held by a helper
        {
            std::atomic<int> locked{0};
            weft_thread_t h = wt::go([&] {
                weft_mutex_lock(&m);
                locked = 1;
                weft_sleep_ns(20'000);
                weft_mutex_unlock(&m);
            });
            wt::yield_until([&] { return locked.load() == 1; });
            ASSERT_EQ(weft_mutex_lock(&m), 0);
            weft_mutex_unlock(&m);
            wt::join(h);
            ++steps;
        }
        // 2. timed mutex lock that succeeds
        {
            std::atomic<int> locked{0};
            weft_thread_t h = wt::go([&] {
                weft_mutex_lock(&m);
                locked = 1;
                weft_thread_yield();
                weft_mutex_unlock(&m);
            });
            wt::yield_until([&] { return locked.load() == 1; });
            timespec d = wt::realtime_in(60s);
            ASSERT_EQ(weft_mutex_timedlock(&m, &d), 0);
            weft_mutex_unlock(&m);
            wt::join(h);
            ++steps;
        }
        // 3. condition variable, untimed and timed
        for (int timed = 0; timed < 2; ++timed) {
            bool flag = false;
            weft_thread_t h = wt::go([&] {
                weft_thread_yield();
                weft_mutex_lock(&m);
                flag = true;
                weft_cond_signal(&c);
                weft_mutex_unlock(&m);
            });
            weft_mutex_lock(&m);
            while (!flag) {
                if (timed) {
                    timespec d = wt::realtime_in(60s);
                    ASSERT_EQ(weft_cond_timedwait(&c, &m, &d), 0);
                } else {
                    ASSERT_EQ(weft_cond_wait(&c, &m), 0);
                }
            }
            weft_mutex_unlock(&m);
            wt::join(h);
            ++steps;
        }
        // 4. semaphore, untimed and timed
        for (int timed = 0; timed < 2; ++timed) {
            weft_thread_t h = wt::go([&] {
                weft_thread_yield();
                weft_sem_post(&s);
            });
            if (timed) {
                timespec d = wt::realtime_in(60s);
                ASSERT_EQ(weft_sem_timedwait(&s, &d), 0);
            } else {
                ASSERT_EQ(weft_sem_wait(&s), 0);
            }
            wt::join(h);
            ++steps;
        }
        // 5. barrier
        {
            weft_thread_t h = wt::go([&] {
                weft_thread_yield();
                weft_barrier_wait(&b);
            });
            int rc = weft_barrier_wait(&b);
            ASSERT_TRUE(rc == 0 || rc == WEFT_BARRIER_SERIAL_THREAD);
            wt::join(h);
            ++steps;
        }
        // 6. rwlock: read behind a writer, write behind a reader
        for (int as_writer = 0; as_writer < 2; ++as_writer) {
            std::atomic<int> locked{0};
            weft_thread_t h = wt::go([&] {
                if (as_writer)
                    weft_rwlock_rdlock(&rw);
                else
                    weft_rwlock_wrlock(&rw);
                locked = 1;
                weft_sleep_ns(20'000);
                weft_rwlock_unlock(&rw);
            });
            wt::yield_until([&] { return locked.load() == 1; });
            ASSERT_EQ(as_writer ? weft_rwlock_wrlock(&rw) : weft_rwlock_rdlock(&rw), 0);
            weft_rwlock_unlock(&rw);
            wt::join(h);
            ++steps;
        }
        // 7. join of a thread that blocks first
        {
            weft_thread_t h = wt::go([] {
                weft_sleep_ns(10'000);
                weft_thread_yield();
            });
            wt::join(h);
            ++steps;
        }
        // 8. once whose init runs on another thread and blocks
        {
            weft_once_t once = WEFT_ONCE_INIT;
            static std::atomic<int> in_init;
            in_init = 0;
            weft_thread_t h = wt::go([&] {
                weft_once(&once, [] {
                    in_init = 1;
                    weft_sleep_ns(50'000);
                });
            });
            wt::yield_until([&] { return in_init.load() == 1; });
            ASSERT_EQ(weft_once(&once, [] { in_init = 2; }), 0);
            EXPECT_EQ(in_init.load(), 1) << "init ran twice";
            wt::join(h);
            ++steps;
        }
        // 9. sleep
        ASSERT_EQ(weft_sleep_ns(10'000), 0);
        ++steps;
    }
    EXPECT_EQ(steps, rounds * 12);
}

TEST_P(StressMain, main_ping_pong_with_many_partners) {
    const int partners = 16;
    const int rounds = static_cast<int>(wt::scaled(2000, 50));
    std::vector<weft_sem_t> ping(partners), pong(partners);
    for (int i = 0; i < partners; ++i) {
        weft_sem_init(&ping[i], 0);
        weft_sem_init(&pong[i], 0);
    }
    std::vector<weft_thread_t> ts(partners);
    for (int i = 0; i < partners; ++i)
        ts[i] = wt::go([&, i] {
            for (int r = 0; r < rounds; ++r) {
                weft_sem_wait(&ping[i]);
                weft_sem_post(&pong[i]);
            }
        });
    for (int r = 0; r < rounds; ++r) {
        for (int i = 0; i < partners; ++i) weft_sem_post(&ping[i]);
        for (int i = 0; i < partners; ++i) ASSERT_EQ(weft_sem_wait(&pong[i]), 0);
    }
    for (auto t : ts) wt::join(t);
}

}  // namespace
