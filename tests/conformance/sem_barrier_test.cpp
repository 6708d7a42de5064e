// Class: requirement, negative. weft_sem_t (value, trywait, timedwait, post
// overflow, FIFO service) and weft_barrier_t (serial thread once per round,
// reuse, EINVAL/EBUSY).
#include <atomic>
#include <cerrno>
#include <vector>

#include "support/weft_test.hpp"

namespace {

using namespace std::chrono_literals;

class Sem : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Serial, Sem, ::testing::ValuesIn(wt::rt_params_one_worker()), wt::rt_param_name);
INSTANTIATE_TEST_SUITE_P(Concurrent, Sem, ::testing::ValuesIn(wt::rt_params_multi()), wt::rt_param_name);

// Orders that are only defined on one worker (arrival order = program order).
class SemOneWorker : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Serial, SemOneWorker, ::testing::ValuesIn(wt::rt_params_one_worker()), wt::rt_param_name);

int value_of(weft_sem_t* s) {
    int v = -1;
    EXPECT_EQ(weft_sem_getvalue(s, &v), 0);
    return v;
}

TEST_P(Sem, value_post_wait_trywait) {
    weft_sem_t s;
    ASSERT_EQ(weft_sem_init(&s, 3), 0);
    EXPECT_EQ(value_of(&s), 3);
    EXPECT_EQ(weft_sem_wait(&s), 0);
    EXPECT_EQ(weft_sem_trywait(&s), 0);
    EXPECT_EQ(value_of(&s), 1);
    EXPECT_EQ(weft_sem_trywait(&s), 0);
    EXPECT_EQ(weft_sem_trywait(&s), EAGAIN);
    EXPECT_EQ(value_of(&s), 0);
    EXPECT_EQ(weft_sem_post(&s), 0);
    EXPECT_EQ(weft_sem_post(&s), 0);
    EXPECT_EQ(value_of(&s), 2);
    EXPECT_EQ(weft_sem_destroy(&s), 0);
}

TEST_P(Sem, init_above_max_is_einval) {
    weft_sem_t s;
    EXPECT_EQ(weft_sem_init(&s, WEFT_SEM_VALUE_MAX + 1u), EINVAL);
    EXPECT_EQ(weft_sem_init(&s, WEFT_SEM_VALUE_MAX), 0);
    EXPECT_EQ(value_of(&s), int(WEFT_SEM_VALUE_MAX));
}

TEST_P(Sem, post_at_max_is_eoverflow) {
    weft_sem_t s;
    ASSERT_EQ(weft_sem_init(&s, WEFT_SEM_VALUE_MAX - 1), 0);
    EXPECT_EQ(weft_sem_post(&s), 0);
    EXPECT_EQ(weft_sem_post(&s), EOVERFLOW);
    EXPECT_EQ(value_of(&s), int(WEFT_SEM_VALUE_MAX)) << "a failed post leaves the value alone";
    EXPECT_EQ(weft_sem_trywait(&s), 0);
    EXPECT_EQ(weft_sem_post(&s), 0);
}

TEST_P(Sem, wait_blocks_until_post) {
    weft_sem_t s;
    weft_sem_init(&s, 0);
    std::atomic<int> calling{0}, passed{0};
    weft_thread_t t = wt::go([&] {
        calling = 1;
        weft_sem_wait(&s);
        passed = 1;
    });
    // The waiter has reached its wait (on several workers it may not even
    // have started yet); settle then gives it time to block.
    wt::yield_until([&] { return calling.load() == 1; });
    wt::settle();
    EXPECT_EQ(passed.load(), 0);
    weft_sem_post(&s);
    wt::join(t);
    EXPECT_EQ(passed.load(), 1);
    EXPECT_EQ(value_of(&s), 0) << "the post went to the waiter, not to the value";
}

TEST_P(Sem, timedwait_times_out_at_the_deadline) {
    weft_sem_t s;
    weft_sem_init(&s, 0);
    std::int64_t t0 = wt::now_ns();
    timespec ts = wt::realtime_in(50ms);
    EXPECT_EQ(weft_sem_timedwait(&s, &ts), ETIMEDOUT);
    EXPECT_GE(wt::now_ns() - t0, 45'000'000);
    EXPECT_EQ(value_of(&s), 0);
}

TEST_P(Sem, timedwait_succeeds_when_posted_before_deadline) {
    weft_sem_t s;
    weft_sem_init(&s, 0);
    int rc = -1;
    std::atomic<int> calling{0};
    weft_thread_t t = wt::go([&] {
        timespec ts = wt::realtime_in(30s);
        calling = 1;
        rc = weft_sem_timedwait(&s, &ts);
    });
    wt::yield_until([&] { return calling.load() == 1; });
    wt::settle();
    weft_sem_post(&s);
    wt::join(t);
    EXPECT_EQ(rc, 0);
}

TEST_P(Sem, timedwait_with_value_ignores_past_deadline) {
    weft_sem_t s;
    weft_sem_init(&s, 1);
    timespec past = wt::realtime_past();
    EXPECT_EQ(weft_sem_timedwait(&s, &past), 0);
    EXPECT_EQ(weft_sem_timedwait(&s, &past), ETIMEDOUT);
}

TEST_P(Sem, timedwait_bad_timespec_is_einval) {
    weft_sem_t s;
    weft_sem_init(&s, 0);
    timespec bad{time(nullptr) + 1, -5};
    EXPECT_EQ(weft_sem_timedwait(&s, &bad), EINVAL);
    EXPECT_EQ(weft_sem_timedwait(&s, nullptr), EINVAL);
}

TEST_P(SemOneWorker, waiters_are_served_in_arrival_order) {
    weft_sem_t s;
    weft_sem_init(&s, 0);
    std::vector<int> order;
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < 8; ++i) {
        ts.push_back(wt::go([&, i] {
            weft_sem_wait(&s);
            order.push_back(i);
        }));
        wt::settle();
    }
    for (int i = 0; i < 8; ++i) {
        weft_sem_post(&s);
        wt::yield_until([&] { return order.size() == size_t(i + 1); });
    }
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST_P(Sem, destroy_with_waiters_is_ebusy) {
    weft_sem_t s;
    weft_sem_init(&s, 0);
    std::atomic<int> calling{0};
    weft_thread_t t = wt::go([&] {
        calling = 1;
        weft_sem_wait(&s);
    });
    wt::yield_until([&] { return calling.load() == 1; });
    wt::settle();
    EXPECT_EQ(weft_sem_destroy(&s), EBUSY);
    weft_sem_post(&s);
    wt::join(t);
    EXPECT_EQ(weft_sem_destroy(&s), 0);
}

TEST_P(Sem, counts_are_conserved) {
    weft_sem_t s;
    weft_sem_init(&s, 0);
    const int producers = 8, consumers = 8, per = 250;
    std::atomic<int> consumed{0};
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < consumers; ++i)
        ts.push_back(wt::go([&] {
            for (int k = 0; k < per; ++k) {
                weft_sem_wait(&s);
                consumed.fetch_add(1);
            }
        }));
    for (int i = 0; i < producers; ++i)
        ts.push_back(wt::go([&] {
            for (int k = 0; k < per; ++k) weft_sem_post(&s);
        }));
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(consumed.load(), producers * per);
    EXPECT_EQ(value_of(&s), 0);
}

TEST_P(Sem, null_arguments_are_einval) {
    int v;
    weft_sem_t s;
    weft_sem_init(&s, 0);
    EXPECT_EQ(weft_sem_init(nullptr, 0), EINVAL);
    EXPECT_EQ(weft_sem_wait(nullptr), EINVAL);
    EXPECT_EQ(weft_sem_trywait(nullptr), EINVAL);
    EXPECT_EQ(weft_sem_post(nullptr), EINVAL);
    EXPECT_EQ(weft_sem_getvalue(nullptr, &v), EINVAL);
    EXPECT_EQ(weft_sem_getvalue(&s, nullptr), EINVAL);
    EXPECT_EQ(weft_sem_destroy(nullptr), EINVAL);
}

// --- barrier ------------------------------------------------------------------------

class Barrier : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Serial, Barrier, ::testing::ValuesIn(wt::rt_params_one_worker()), wt::rt_param_name);
INSTANTIATE_TEST_SUITE_P(Concurrent, Barrier, ::testing::ValuesIn(wt::rt_params_multi()), wt::rt_param_name);

TEST_P(Barrier, count_zero_is_einval) {
    weft_barrier_t b;
    EXPECT_EQ(weft_barrier_init(&b, 0), EINVAL);
    EXPECT_EQ(weft_barrier_init(nullptr, 2), EINVAL);
    EXPECT_EQ(weft_barrier_wait(nullptr), EINVAL);
    EXPECT_EQ(weft_barrier_destroy(nullptr), EINVAL);
}

TEST_P(Barrier, count_one_is_always_serial) {
    weft_barrier_t b;
    ASSERT_EQ(weft_barrier_init(&b, 1), 0);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(weft_barrier_wait(&b), WEFT_BARRIER_SERIAL_THREAD);
    EXPECT_EQ(weft_barrier_destroy(&b), 0);
}

TEST_P(Barrier, one_serial_thread_per_round_and_nobody_runs_ahead) {
    const int n = 16, rounds = 50;
    weft_barrier_t b;
    ASSERT_EQ(weft_barrier_init(&b, n), 0);
    std::atomic<int> serial[rounds] = {};
    std::atomic<int> arrived[rounds] = {};
    std::atomic<int> early{0}, bad_rc{0};
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < n; ++i)
        ts.push_back(wt::go([&] {
            for (int r = 0; r < rounds; ++r) {
                arrived[r].fetch_add(1);
                int rc = weft_barrier_wait(&b);
                if (rc == WEFT_BARRIER_SERIAL_THREAD)
                    serial[r].fetch_add(1);
                else if (rc != 0)
                    bad_rc.fetch_add(1);
                if (arrived[r].load() != n) early.fetch_add(1);
            }
        }));
    for (auto t : ts) wt::join(t);
    for (int r = 0; r < rounds; ++r) EXPECT_EQ(serial[r].load(), 1) << "round " << r;
    EXPECT_EQ(early.load(), 0) << "a thread passed the barrier before all had arrived";
    EXPECT_EQ(bad_rc.load(), 0);
    EXPECT_EQ(weft_barrier_destroy(&b), 0);
}

TEST_P(Barrier, main_thread_takes_part) {
    weft_barrier_t b;
    ASSERT_EQ(weft_barrier_init(&b, 3), 0);
    std::atomic<int> serial{0};
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < 2; ++i)
        ts.push_back(wt::go([&] {
            for (int r = 0; r < 10; ++r)
                if (weft_barrier_wait(&b) == WEFT_BARRIER_SERIAL_THREAD) serial.fetch_add(1);
        }));
    for (int r = 0; r < 10; ++r)
        if (weft_barrier_wait(&b) == WEFT_BARRIER_SERIAL_THREAD) serial.fetch_add(1);
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(serial.load(), 10);
}

TEST_P(Barrier, destroy_with_waiters_is_ebusy) {
    weft_barrier_t b;
    ASSERT_EQ(weft_barrier_init(&b, 2), 0);
    std::atomic<int> calling{0};
    weft_thread_t t = wt::go([&] {
        calling = 1;
        weft_barrier_wait(&b);
    });
    wt::yield_until([&] { return calling.load() == 1; });
    wt::settle();
    EXPECT_EQ(weft_barrier_destroy(&b), EBUSY);
    weft_barrier_wait(&b);
    wt::join(t);
    EXPECT_EQ(weft_barrier_destroy(&b), 0);
}

}  // namespace
