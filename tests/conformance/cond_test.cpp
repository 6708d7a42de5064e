// Class: requirement, negative. weft_cond_t: signal wakes one waiter, the
// oldest; broadcast wakes all; timed waits (both clocks) return ETIMEDOUT with
// the mutex relocked; EPERM/EINVAL/EBUSY; recursive mutexes keep their depth.
#include <atomic>
#include <cerrno>
#include <vector>

#include "support/weft_test.hpp"

namespace {

using namespace std::chrono_literals;

class Cond : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Serial, Cond, ::testing::ValuesIn(wt::rt_params_one_worker()), wt::rt_param_name);
INSTANTIATE_TEST_SUITE_P(Concurrent, Cond, ::testing::ValuesIn(wt::rt_params_multi()), wt::rt_param_name);

// Orders that are only defined on one worker (arrival order = program order).
class CondOneWorker : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Serial, CondOneWorker, ::testing::ValuesIn(wt::rt_params_one_worker()), wt::rt_param_name);

TEST_P(Cond, attr_clock) {
    weft_condattr_t a;
    ASSERT_EQ(weft_condattr_init(&a), 0);
    clockid_t c = -1;
    ASSERT_EQ(weft_condattr_getclock(&a, &c), 0);
    EXPECT_EQ(c, CLOCK_REALTIME);
    EXPECT_EQ(weft_condattr_setclock(&a, CLOCK_MONOTONIC), 0);
    weft_condattr_getclock(&a, &c);
    EXPECT_EQ(c, CLOCK_MONOTONIC);
    EXPECT_EQ(weft_condattr_setclock(&a, CLOCK_PROCESS_CPUTIME_ID), EINVAL);
    EXPECT_EQ(weft_condattr_setclock(&a, CLOCK_BOOTTIME), EINVAL);
    EXPECT_EQ(weft_condattr_destroy(&a), 0);
}

TEST_P(Cond, signal_wakes_exactly_one) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    weft_cond_t c = WEFT_COND_INITIALIZER;
    int tickets = 0, woken = 0, waiting = 0;
    const int n = 6;
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < n; ++i)
        ts.push_back(wt::go([&] {
            weft_mutex_lock(&m);
            ++waiting;
            while (tickets == 0) weft_cond_wait(&c, &m);
            --tickets;
            ++woken;
            weft_mutex_unlock(&m);
        }));
    wt::yield_until([&] {
        weft_mutex_lock(&m);
        bool all = waiting == n;
        weft_mutex_unlock(&m);
        return all;
    });
    wt::settle();
    weft_mutex_lock(&m);
    tickets = 1;
    weft_cond_signal(&c);
    weft_mutex_unlock(&m);
    wt::yield_until([&] {
        weft_mutex_lock(&m);
        bool one = woken == 1;
        weft_mutex_unlock(&m);
        return one;
    });
    wt::settle();
    weft_mutex_lock(&m);
    EXPECT_EQ(woken, 1);
    tickets = n - 1;
    weft_cond_broadcast(&c);
    weft_mutex_unlock(&m);
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(woken, n);
}

TEST_P(CondOneWorker, signal_wakes_waiters_in_fifo_order) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    weft_cond_t c = WEFT_COND_INITIALIZER;
    std::vector<int> order;
    std::vector<int> go(8, 0);
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < 8; ++i) {
        ts.push_back(wt::go([&, i] {
            weft_mutex_lock(&m);
            while (!go[i]) weft_cond_wait(&c, &m);
            order.push_back(i);
            weft_mutex_unlock(&m);
        }));
        wt::settle();  // waiter i is queued before waiter i+1 exists
    }
    for (int i = 0; i < 8; ++i) {
        weft_mutex_lock(&m);
        // Every waiter may go: the one woken first (the oldest) records first.
        for (auto& g : go) g = 1;
        weft_cond_signal(&c);
        weft_mutex_unlock(&m);
        wt::yield_until([&] { return order.size() == size_t(i + 1); });
    }
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST_P(Cond, broadcast_wakes_all) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    weft_cond_t c = WEFT_COND_INITIALIZER;
    bool go = false;
    int waiting = 0;
    std::atomic<int> done{0};
    const int n = 50;
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < n; ++i)
        ts.push_back(wt::go([&] {
            weft_mutex_lock(&m);
            ++waiting;
            while (!go) weft_cond_wait(&c, &m);
            weft_mutex_unlock(&m);
            done.fetch_add(1);
        }));
    wt::yield_until([&] {
        weft_mutex_lock(&m);
        bool all = waiting == n;
        weft_mutex_unlock(&m);
        return all;
    });
    weft_mutex_lock(&m);
    go = true;
    EXPECT_EQ(weft_cond_broadcast(&c), 0);
    weft_mutex_unlock(&m);
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(done.load(), n);
}

TEST_P(Cond, signal_without_waiters_is_lost) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    weft_cond_t c = WEFT_COND_INITIALIZER;
    EXPECT_EQ(weft_cond_signal(&c), 0);
    EXPECT_EQ(weft_cond_broadcast(&c), 0);
    weft_mutex_lock(&m);
    timespec ts = wt::realtime_in(20ms);
    EXPECT_EQ(weft_cond_timedwait(&c, &m, &ts), ETIMEDOUT) << "a signal before the wait must not be remembered";
    weft_mutex_unlock(&m);
}

TEST_P(Cond, timedwait_timeout_relocks_the_mutex) {
    weft_mutex_t m = wt::make_mutex(WEFT_MUTEX_ERRORCHECK);
    weft_cond_t c = WEFT_COND_INITIALIZER;
    ASSERT_EQ(weft_mutex_lock(&m), 0);
    std::int64_t t0 = wt::now_ns();
    timespec ts = wt::realtime_in(50ms);
    EXPECT_EQ(weft_cond_timedwait(&c, &m, &ts), ETIMEDOUT);
    EXPECT_GE(wt::now_ns() - t0, 45'000'000);
    // We own it again: another thread cannot take it, and our unlock works.
    int rc = -1;
    weft_thread_t t = wt::go([&] { rc = weft_mutex_trylock(&m); });
    wt::join(t);
    EXPECT_EQ(rc, EBUSY);
    EXPECT_EQ(weft_mutex_unlock(&m), 0);
}

TEST_P(Cond, timedwait_monotonic_clock_attribute) {
    weft_condattr_t a;
    weft_condattr_init(&a);
    weft_condattr_setclock(&a, CLOCK_MONOTONIC);
    weft_cond_t c;
    ASSERT_EQ(weft_cond_init(&c, &a), 0);
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    weft_mutex_lock(&m);
    // A monotonic deadline read as realtime would lie decades in the past and
    // return at once: waiting the full 50 ms shows the clock was honoured.
    std::int64_t t0 = wt::now_ns();
    timespec ts = wt::deadline_in(50ms, CLOCK_MONOTONIC);
    EXPECT_EQ(weft_cond_timedwait(&c, &m, &ts), ETIMEDOUT);
    EXPECT_GE(wt::now_ns() - t0, 49'000'000);
    weft_mutex_unlock(&m);
    EXPECT_EQ(weft_cond_destroy(&c), 0);
}

TEST_P(Cond, timedwait_realtime_clock_default) {
    weft_cond_t c;
    ASSERT_EQ(weft_cond_init(&c, nullptr), 0);
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    weft_mutex_lock(&m);
    std::int64_t t0 = wt::now_ns();
    timespec ts = wt::realtime_in(50ms);
    EXPECT_EQ(weft_cond_timedwait(&c, &m, &ts), ETIMEDOUT);
    EXPECT_GE(wt::now_ns() - t0, 45'000'000);
    weft_mutex_unlock(&m);
}

TEST_P(Cond, timedwait_signaled_before_deadline_returns_zero) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    weft_cond_t c = WEFT_COND_INITIALIZER;
    bool ready = false;
    std::atomic<int> waiting{0};
    int rc = -1;
    weft_thread_t t = wt::go([&] {
        weft_mutex_lock(&m);
        waiting = 1;
        timespec ts = wt::realtime_in(30s);
        while (!ready && rc != ETIMEDOUT) rc = weft_cond_timedwait(&c, &m, &ts);
        weft_mutex_unlock(&m);
    });
    // It holds the mutex: main gets it once the waiter waits.
    wt::yield_until([&] { return waiting.load() == 1; });
    weft_mutex_lock(&m);
    ready = true;
    weft_cond_signal(&c);
    weft_mutex_unlock(&m);
    wt::join(t);
    EXPECT_EQ(rc, 0);
}

TEST_P(Cond, timedwait_past_deadline_is_etimedout) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    weft_cond_t c = WEFT_COND_INITIALIZER;
    weft_mutex_lock(&m);
    timespec past = wt::realtime_past();
    EXPECT_EQ(weft_cond_timedwait(&c, &m, &past), ETIMEDOUT);
    EXPECT_EQ(weft_mutex_unlock(&m), 0) << "relocked after the timeout";
}

TEST_P(Cond, timedwait_bad_timespec_is_einval) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    weft_cond_t c = WEFT_COND_INITIALIZER;
    weft_mutex_lock(&m);
    timespec bad{time(nullptr) + 1, 1'000'000'000};
    EXPECT_EQ(weft_cond_timedwait(&c, &m, &bad), EINVAL);
    EXPECT_EQ(weft_cond_timedwait(&c, &m, nullptr), EINVAL);
    EXPECT_EQ(weft_mutex_unlock(&m), 0);
}

TEST_P(Cond, wait_without_owning_errorcheck_mutex_is_eperm) {
    weft_mutex_t m = wt::make_mutex(WEFT_MUTEX_ERRORCHECK);
    weft_cond_t c = WEFT_COND_INITIALIZER;
    EXPECT_EQ(weft_cond_wait(&c, &m), EPERM);
    timespec ts = wt::realtime_in(10ms);
    EXPECT_EQ(weft_cond_timedwait(&c, &m, &ts), EPERM);
    // Owned by another thread.
    weft_mutex_lock(&m);
    int rc = -1;
    weft_thread_t t = wt::go([&] { rc = weft_cond_wait(&c, &m); });
    wt::join(t);
    EXPECT_EQ(rc, EPERM);
    weft_mutex_unlock(&m);
}

TEST_P(Cond, wait_without_owning_recursive_mutex_is_eperm) {
    weft_mutex_t m = wt::make_mutex(WEFT_MUTEX_RECURSIVE);
    weft_cond_t c = WEFT_COND_INITIALIZER;
    EXPECT_EQ(weft_cond_wait(&c, &m), EPERM);
}

TEST_P(Cond, waiting_with_a_second_mutex_is_einval) {
    weft_mutex_t m1 = WEFT_MUTEX_INITIALIZER, m2 = WEFT_MUTEX_INITIALIZER;
    weft_cond_t c = WEFT_COND_INITIALIZER;
    bool go = false;
    std::atomic<int> waiting{0};
    weft_thread_t t = wt::go([&] {
        weft_mutex_lock(&m1);
        waiting = 1;
        while (!go) weft_cond_wait(&c, &m1);
        weft_mutex_unlock(&m1);
    });
    wt::yield_until([&] { return waiting.load() == 1; });
    wt::settle();
    weft_mutex_lock(&m2);
    timespec ts = wt::realtime_in(10ms);
    EXPECT_EQ(weft_cond_timedwait(&c, &m2, &ts), EINVAL);
    EXPECT_EQ(weft_mutex_unlock(&m2), 0) << "m2 is still ours after EINVAL";
    weft_mutex_lock(&m1);
    go = true;
    weft_cond_signal(&c);
    weft_mutex_unlock(&m1);
    wt::join(t);
    // Once nobody waits, the condition may be used with another mutex.
    weft_mutex_lock(&m2);
    ts = wt::realtime_in(1ms);
    EXPECT_EQ(weft_cond_timedwait(&c, &m2, &ts), ETIMEDOUT);
    weft_mutex_unlock(&m2);
}

TEST_P(Cond, destroy_with_waiters_is_ebusy) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    weft_cond_t c = WEFT_COND_INITIALIZER;
    bool go = false;
    std::atomic<int> waiting{0};
    weft_thread_t t = wt::go([&] {
        weft_mutex_lock(&m);
        waiting = 1;
        while (!go) weft_cond_wait(&c, &m);
        weft_mutex_unlock(&m);
    });
    wt::yield_until([&] { return waiting.load() == 1; });
    wt::settle();
    weft_mutex_lock(&m);
    EXPECT_EQ(weft_cond_destroy(&c), EBUSY);
    go = true;
    weft_cond_broadcast(&c);
    weft_mutex_unlock(&m);
    wt::join(t);
    EXPECT_EQ(weft_cond_destroy(&c), 0);
}

TEST_P(Cond, recursive_mutex_depth_survives_wait) {
    weft_mutex_t m = wt::make_mutex(WEFT_MUTEX_RECURSIVE);
    weft_cond_t c = WEFT_COND_INITIALIZER;
    bool go = false;
    std::atomic<int> waiting{0};
    int rc_wait = -1, unlocks_ok = 0, extra_unlock = 0;
    weft_thread_t t = wt::go([&] {
        weft_mutex_lock(&m);
        weft_mutex_lock(&m);
        weft_mutex_lock(&m);
        waiting = 1;
        while (!go) rc_wait = weft_cond_wait(&c, &m);  // releases all three levels
        for (int i = 0; i < 3; ++i) unlocks_ok += weft_mutex_unlock(&m) == 0;
        extra_unlock = weft_mutex_unlock(&m);
    });
    // Once the waiter holds the mutex, main gets it only when the wait has
    // released all three levels.
    wt::yield_until([&] { return waiting.load() == 1; });
    ASSERT_EQ(weft_mutex_lock(&m), 0);
    go = true;
    weft_cond_signal(&c);
    ASSERT_EQ(weft_mutex_unlock(&m), 0);
    wt::join(t);
    EXPECT_EQ(rc_wait, 0);
    EXPECT_EQ(unlocks_ok, 3);
    EXPECT_EQ(extra_unlock, EPERM);
}

TEST_P(Cond, null_arguments_are_einval) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    weft_cond_t c = WEFT_COND_INITIALIZER;
    EXPECT_EQ(weft_cond_wait(nullptr, &m), EINVAL);
    EXPECT_EQ(weft_cond_wait(&c, nullptr), EINVAL);
    EXPECT_EQ(weft_cond_signal(nullptr), EINVAL);
    EXPECT_EQ(weft_cond_broadcast(nullptr), EINVAL);
    EXPECT_EQ(weft_cond_init(nullptr, nullptr), EINVAL);
    EXPECT_EQ(weft_cond_destroy(nullptr), EINVAL);
}

}  // namespace
