// Class: requirement, negative. weft_mutex_t: the three types, trylock,
// timedlock, the arrival order of waiters and the hand-off to one that has waited
// past the bound, every documented error code,
// and mutual exclusion on several workers (MutexConcurrency, run under TSan).
#include <atomic>
#include <cerrno>
#include <vector>

#include "support/weft_test.hpp"

namespace {

using namespace std::chrono_literals;

class Mutex : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Serial, Mutex, ::testing::ValuesIn(wt::rt_params_one_worker()), wt::rt_param_name);
INSTANTIATE_TEST_SUITE_P(Concurrent, Mutex, ::testing::ValuesIn(wt::rt_params_multi()), wt::rt_param_name);

// Orders that are only defined on one worker (arrival order = program order).
class MutexOneWorker : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Serial, MutexOneWorker, ::testing::ValuesIn(wt::rt_params_one_worker()), wt::rt_param_name);

using wt::on_other_thread;

TEST_P(Mutex, attr_types) {
    weft_mutexattr_t a;
    ASSERT_EQ(weft_mutexattr_init(&a), 0);
    int type = -1;
    ASSERT_EQ(weft_mutexattr_gettype(&a, &type), 0);
    EXPECT_EQ(type, WEFT_MUTEX_DEFAULT);
    for (int t : {WEFT_MUTEX_NORMAL, WEFT_MUTEX_RECURSIVE, WEFT_MUTEX_ERRORCHECK}) {
        EXPECT_EQ(weft_mutexattr_settype(&a, t), 0);
        weft_mutexattr_gettype(&a, &type);
        EXPECT_EQ(type, t);
    }
    EXPECT_EQ(weft_mutexattr_settype(&a, 3), EINVAL);
    EXPECT_EQ(weft_mutexattr_settype(&a, -1), EINVAL);
    EXPECT_EQ(weft_mutexattr_destroy(&a), 0);
}

TEST_P(Mutex, lock_unlock_and_static_initializers) {
    weft_mutex_t a = WEFT_MUTEX_INITIALIZER;
    weft_mutex_t b = WEFT_RECURSIVE_MUTEX_INITIALIZER;
    weft_mutex_t c = WEFT_ERRORCHECK_MUTEX_INITIALIZER;
    for (weft_mutex_t* m : {&a, &b, &c}) {
        ASSERT_EQ(weft_mutex_lock(m), 0);
        ASSERT_EQ(weft_mutex_unlock(m), 0);
        EXPECT_EQ(weft_mutex_destroy(m), 0);
    }
    EXPECT_EQ(weft_mutex_lock(&b), 0);
    EXPECT_EQ(weft_mutex_lock(&b), 0) << "static recursive initializer is recursive";
    EXPECT_EQ(weft_mutex_unlock(&b), 0);
    EXPECT_EQ(weft_mutex_unlock(&b), 0);
    EXPECT_EQ(weft_mutex_lock(&c), 0);
    EXPECT_EQ(weft_mutex_lock(&c), EDEADLK) << "static errorcheck initializer checks";
    EXPECT_EQ(weft_mutex_unlock(&c), 0);
}

TEST_P(Mutex, init_rejects_bad_type) {
    weft_mutexattr_t a;
    weft_mutexattr_init(&a);
    a.type = 9;
    weft_mutex_t m;
    EXPECT_EQ(weft_mutex_init(&m, &a), EINVAL);
    EXPECT_EQ(weft_mutex_init(nullptr, nullptr), EINVAL);
}

TEST_P(Mutex, trylock_busy_when_held_by_another_thread) {
    for (int type : {WEFT_MUTEX_NORMAL, WEFT_MUTEX_RECURSIVE, WEFT_MUTEX_ERRORCHECK}) {
        weft_mutex_t m = wt::make_mutex(type);
        ASSERT_EQ(weft_mutex_lock(&m), 0);
        EXPECT_EQ(on_other_thread([&] { return weft_mutex_trylock(&m); }), EBUSY) << "type " << type;
        ASSERT_EQ(weft_mutex_unlock(&m), 0);
        EXPECT_EQ(on_other_thread([&] {
                      int rc = weft_mutex_trylock(&m);
                      if (rc == 0) weft_mutex_unlock(&m);
                      return rc;
                  }),
                  0);
    }
}

TEST_P(Mutex, trylock_by_owner) {
    weft_mutex_t n = wt::make_mutex(WEFT_MUTEX_NORMAL), e = wt::make_mutex(WEFT_MUTEX_ERRORCHECK),
                 r = wt::make_mutex(WEFT_MUTEX_RECURSIVE);
    for (weft_mutex_t* m : {&n, &e, &r}) ASSERT_EQ(weft_mutex_lock(m), 0);
    EXPECT_EQ(weft_mutex_trylock(&n), EBUSY);
    EXPECT_EQ(weft_mutex_trylock(&e), EBUSY);
    EXPECT_EQ(weft_mutex_trylock(&r), 0) << "recursive: the owner may relock";
    EXPECT_EQ(weft_mutex_unlock(&r), 0);
    for (weft_mutex_t* m : {&n, &e, &r}) ASSERT_EQ(weft_mutex_unlock(m), 0);
}

TEST_P(Mutex, errorcheck_relock_is_edeadlk) {
    weft_mutex_t m = wt::make_mutex(WEFT_MUTEX_ERRORCHECK);
    ASSERT_EQ(weft_mutex_lock(&m), 0);
    EXPECT_EQ(weft_mutex_lock(&m), EDEADLK);
    timespec ts = wt::realtime_in(10ms);
    EXPECT_EQ(weft_mutex_timedlock(&m, &ts), EDEADLK);
    ASSERT_EQ(weft_mutex_unlock(&m), 0);
}

TEST_P(Mutex, errorcheck_unlock_by_non_owner_is_eperm) {
    weft_mutex_t m = wt::make_mutex(WEFT_MUTEX_ERRORCHECK);
    EXPECT_EQ(weft_mutex_unlock(&m), EPERM) << "unlocked";
    ASSERT_EQ(weft_mutex_lock(&m), 0);
    EXPECT_EQ(on_other_thread([&] { return weft_mutex_unlock(&m); }), EPERM);
    ASSERT_EQ(weft_mutex_unlock(&m), 0);
    EXPECT_EQ(weft_mutex_unlock(&m), EPERM) << "unlocked twice";
}

TEST_P(Mutex, recursive_depth_and_release) {
    weft_mutex_t m = wt::make_mutex(WEFT_MUTEX_RECURSIVE);
    const int depth = 100;
    for (int i = 0; i < depth; ++i) ASSERT_EQ(weft_mutex_lock(&m), 0);
    for (int i = 0; i < depth - 1; ++i) {
        ASSERT_EQ(weft_mutex_unlock(&m), 0);
        ASSERT_EQ(on_other_thread([&] { return weft_mutex_trylock(&m); }), EBUSY) << "after " << i + 1 << " unlocks";
    }
    ASSERT_EQ(weft_mutex_unlock(&m), 0);
    EXPECT_EQ(on_other_thread([&] {
                  int rc = weft_mutex_trylock(&m);
                  if (rc == 0) weft_mutex_unlock(&m);
                  return rc;
              }),
              0);
    EXPECT_EQ(weft_mutex_unlock(&m), EPERM) << "recursive: unlocking an unlocked mutex";
}

TEST_P(Mutex, recursive_unlock_by_non_owner_is_eperm) {
    weft_mutex_t m = wt::make_mutex(WEFT_MUTEX_RECURSIVE);
    ASSERT_EQ(weft_mutex_lock(&m), 0);
    EXPECT_EQ(on_other_thread([&] { return weft_mutex_unlock(&m); }), EPERM);
    ASSERT_EQ(weft_mutex_unlock(&m), 0);
}

TEST_P(Mutex, lock_blocks_until_unlocked) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    ASSERT_EQ(weft_mutex_lock(&m), 0);
    std::atomic<int> got{0};
    std::atomic<bool> reached{false};
    weft_thread_t t = wt::go([&] {
        reached = true;
        weft_mutex_lock(&m);
        got = 1;
        weft_mutex_unlock(&m);
    });
    // The thread must have reached its lock() before the check, or the check
    // would pass whether lock() waits or not.
    while (!reached.load()) weft_thread_yield();
    wt::settle();
    EXPECT_EQ(got.load(), 0) << "acquired a held mutex";
    ASSERT_EQ(weft_mutex_unlock(&m), 0);
    wt::join(t);
    EXPECT_EQ(got.load(), 1);
}

TEST_P(Mutex, timedlock_times_out_at_the_deadline) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    ASSERT_EQ(weft_mutex_lock(&m), 0);
    int rc = -1;
    std::int64_t waited = 0;
    weft_thread_t t = wt::go([&] {
        std::int64_t t0 = wt::now_ns();
        timespec ts = wt::realtime_in(50ms);
        rc = weft_mutex_timedlock(&m, &ts);
        waited = wt::now_ns() - t0;
    });
    wt::join(t);
    EXPECT_EQ(rc, ETIMEDOUT);
    EXPECT_GE(waited, 45'000'000) << "returned before the deadline";  // 5 ms slack for clock conversion
    ASSERT_EQ(weft_mutex_unlock(&m), 0);
}

TEST_P(Mutex, timedlock_succeeds_when_released_before_deadline) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    ASSERT_EQ(weft_mutex_lock(&m), 0);
    int rc = -1;
    weft_thread_t t = wt::go([&] {
        timespec ts = wt::realtime_in(30s);
        rc = weft_mutex_timedlock(&m, &ts);
        if (rc == 0) weft_mutex_unlock(&m);
    });
    wt::settle();
    ASSERT_EQ(weft_mutex_unlock(&m), 0);
    wt::join(t);
    EXPECT_EQ(rc, 0);
}

TEST_P(Mutex, timedlock_past_deadline) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    timespec past = wt::realtime_past();
    EXPECT_EQ(weft_mutex_timedlock(&m, &past), 0) << "a free mutex is taken whatever the deadline";
    EXPECT_EQ(on_other_thread([&] { return weft_mutex_timedlock(&m, &past); }), ETIMEDOUT);
    timespec zero{0, 0};
    EXPECT_EQ(on_other_thread([&] { return weft_mutex_timedlock(&m, &zero); }), ETIMEDOUT);
    ASSERT_EQ(weft_mutex_unlock(&m), 0);
}

TEST_P(Mutex, timedlock_bad_timespec_is_einval) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    ASSERT_EQ(weft_mutex_lock(&m), 0);
    timespec bad1{time(nullptr) + 1, -1}, bad2{time(nullptr) + 1, 1'000'000'000};
    EXPECT_EQ(on_other_thread([&] { return weft_mutex_timedlock(&m, &bad1); }), EINVAL);
    EXPECT_EQ(on_other_thread([&] { return weft_mutex_timedlock(&m, &bad2); }), EINVAL);
    EXPECT_EQ(on_other_thread([&] { return weft_mutex_timedlock(&m, nullptr); }), EINVAL);
    ASSERT_EQ(weft_mutex_unlock(&m), 0);
}

TEST_P(Mutex, destroy_busy_is_ebusy) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    ASSERT_EQ(weft_mutex_lock(&m), 0);
    EXPECT_EQ(weft_mutex_destroy(&m), EBUSY);
    ASSERT_EQ(weft_mutex_unlock(&m), 0);
    EXPECT_EQ(weft_mutex_destroy(&m), 0);
}

TEST_P(MutexOneWorker, waiters_get_it_in_arrival_order) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    ASSERT_EQ(weft_mutex_lock(&m), 0);
    std::vector<int> order;
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < 8; ++i) {
        ts.push_back(wt::go([&, i] {
            weft_mutex_lock(&m);
            order.push_back(i);
            weft_mutex_unlock(&m);
        }));
        wt::settle();  // thread i is queued on the mutex before thread i+1 exists
    }
    // A running thread may take the mutex before the woken waiter runs (it is
    // handed to the waiter instead once it has waited past the bound, as
    // thread 0 has after settling); either way the waiters keep their order.
    ASSERT_EQ(weft_mutex_unlock(&m), 0);
    int rc = weft_mutex_trylock(&m);
    EXPECT_TRUE(rc == 0 || rc == EBUSY) << rc;
    if (rc == 0) {
        ASSERT_EQ(weft_mutex_unlock(&m), 0);
    }
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST_P(MutexOneWorker, a_waiter_that_kept_losing_past_the_bound_is_handed_the_mutex) {
    // The bound is 1 ms (tun::mutex_handoff_after_ns), counted from the first
    // time a woken waiter finds the mutex taken: from then on, an unlock 5 ms
    // later gives it the mutex itself, so the unlocker cannot take it back.
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    ASSERT_EQ(weft_mutex_lock(&m), 0);
    std::atomic<int> queued{0};
    bool got = false;
    weft_thread_t t = wt::go([&] {
        queued = 1;
        weft_mutex_lock(&m);
        got = true;
        weft_mutex_unlock(&m);
    });
    while (queued.load() == 0) weft_thread_yield();
    weft_thread_yield();  // one worker: the thread has blocked on m
    // The unlock wakes it but leaves m free: we take it back before it runs.
    ASSERT_EQ(weft_mutex_unlock(&m), 0);
    ASSERT_EQ(weft_mutex_trylock(&m), 0) << "a running thread may take a mutex whose waiter has not run yet";
    weft_thread_yield();  // it runs, finds m taken, and queues again: its first loss
    EXPECT_FALSE(got);
    weft_sleep_ns(5'000'000);
    ASSERT_EQ(weft_mutex_unlock(&m), 0);
    EXPECT_EQ(weft_mutex_trylock(&m), EBUSY) << "the waiter that kept losing owns it now";
    wt::join(t);
    EXPECT_TRUE(got);
    EXPECT_EQ(weft_mutex_trylock(&m), 0);
    ASSERT_EQ(weft_mutex_unlock(&m), 0);
}

TEST_P(Mutex, timedlock_of_a_woken_waiter_still_times_out_or_gets_it) {
    // Waiters with deadlines are woken to retry while others take the mutex
    // in between: each either gets it or times out, and no wake-up is lost.
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    std::atomic<int> ok{0}, timed_out{0};
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < 8; ++i)
        ts.push_back(wt::go([&, i] {
            for (int k = 0; k < 200; ++k) {
                timespec deadline = wt::realtime_in(std::chrono::microseconds(50 * (i + 1)));
                int rc = weft_mutex_timedlock(&m, &deadline);
                if (rc == 0) {
                    ++ok;
                    if (k % 8 == 0) weft_thread_yield();
                    weft_mutex_unlock(&m);
                } else if (rc == ETIMEDOUT) {
                    ++timed_out;
                }
            }
        }));
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(ok + timed_out, 8 * 200);
    EXPECT_EQ(weft_mutex_trylock(&m), 0) << "the mutex ends free";
    ASSERT_EQ(weft_mutex_unlock(&m), 0);
}

TEST_P(Mutex, counter_is_exact_under_contention) {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    long counter = 0;
    const int threads = 64, iters = 200;
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < threads; ++i)
        ts.push_back(wt::go([&] {
            for (int k = 0; k < iters; ++k) {
                weft_mutex_lock(&m);
                long v = counter;
                if (k % 16 == 0) weft_thread_yield();  // hold it across a switch
                counter = v + 1;
                weft_mutex_unlock(&m);
            }
        }));
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(counter, long(threads) * iters);
}

TEST_P(Mutex, null_arguments_are_einval) {
    EXPECT_EQ(weft_mutex_lock(nullptr), EINVAL);
    EXPECT_EQ(weft_mutex_trylock(nullptr), EINVAL);
    EXPECT_EQ(weft_mutex_unlock(nullptr), EINVAL);
    EXPECT_EQ(weft_mutex_destroy(nullptr), EINVAL);
    timespec ts = wt::realtime_in(1ms);
    EXPECT_EQ(weft_mutex_timedlock(nullptr, &ts), EINVAL);
}

}  // namespace
