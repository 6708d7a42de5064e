// Class: requirement, negative. The C++ API (weft.hpp): weft::runtime,
// weft::spawn / task (values, exceptions, moves), weft::thread, the
// synchronization wrappers with the standard lock types, this_thread, stats.
#include <atomic>
#include <memory>
#include <mutex>
#include <numeric>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/weft_test.hpp"
#include "weft/weft.hpp"

namespace {

using namespace std::chrono_literals;

class Cxx : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Serial, Cxx, ::testing::ValuesIn(wt::rt_params_one_worker()), wt::rt_param_name);
INSTANTIATE_TEST_SUITE_P(Concurrent, Cxx, ::testing::ValuesIn(wt::rt_params_multi()), wt::rt_param_name);

TEST(CxxRuntime, raii_starts_and_stops) {
    ASSERT_EQ(weft_is_initialized(), 0);
    {
        weft::runtime rt(weft::config{.workers = 2, .sched = "lifo"});
        EXPECT_EQ(weft_is_initialized(), 1);
        EXPECT_EQ(weft_num_workers(), 2);
        EXPECT_EQ(weft::spawn([] { return 5; }).join(), 5);
    }
    EXPECT_EQ(weft_is_initialized(), 0);
}

TEST(CxxRuntime, bad_config_throws_weft_error) {
    ASSERT_EQ(weft_is_initialized(), 0);
    ::testing::internal::CaptureStderr();
    try {
        weft::runtime rt(weft::config{.workers = -3});
        ADD_FAILURE() << "no exception";
    } catch (const weft::error& e) {
        EXPECT_EQ(e.code().value(), EINVAL);
    }
    ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(weft_is_initialized(), 0);
}

TEST_P(Cxx, spawn_returns_value) {
    auto t = weft::spawn([](int a, int b) { return a * b; }, 6, 7);
    EXPECT_TRUE(t.joinable());
    EXPECT_EQ(t.join(), 42);
    EXPECT_FALSE(t.joinable());
}

TEST_P(Cxx, spawn_returns_strings_and_move_only_values) {
    auto s = weft::spawn([] { return std::string(1000, 'z'); });
    auto p = weft::spawn([] { return std::make_unique<int>(17); });
    EXPECT_EQ(s.join(), std::string(1000, 'z'));
    std::unique_ptr<int> v = p.join();
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(*v, 17);
}

TEST_P(Cxx, spawn_takes_move_only_arguments) {
    auto up = std::make_unique<int>(8);
    auto t = weft::spawn([](std::unique_ptr<int> q) { return *q + 1; }, std::move(up));
    EXPECT_EQ(up, nullptr);
    EXPECT_EQ(t.join(), 9);
}

TEST_P(Cxx, arguments_are_copied_at_spawn) {
    std::string text = "before";
    auto t = weft::spawn([](const std::string& s) { return s; }, text);
    text = "after";
    EXPECT_EQ(t.join(), "before");
}

TEST_P(Cxx, void_spawn) {
    int side = 0;
    auto t = weft::spawn([&] { side = 3; });
    t.join();
    EXPECT_EQ(side, 3);
}

TEST_P(Cxx, join_rethrows_the_exception) {
    auto t = weft::spawn([]() -> int { throw std::runtime_error("boom in thread"); });
    try {
        t.join();
        ADD_FAILURE() << "no exception";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "boom in thread");
    }
}

TEST_P(Cxx, join_rethrows_custom_exception_types) {
    struct my_error {
        int code;
    };
    auto t = weft::spawn([] { throw my_error{77}; });
    try {
        t.join();
        ADD_FAILURE() << "no exception";
    } catch (const my_error& e) {
        EXPECT_EQ(e.code, 77);
    }
}

TEST_P(Cxx, exception_thrown_after_blocking) {
    weft::counting_semaphore sem(0);
    auto t = weft::spawn([&] {
        sem.acquire();
        throw std::logic_error("late");
    });
    weft::this_thread::sleep_for(2ms);
    sem.release();
    EXPECT_THROW(t.join(), std::logic_error);
}

TEST_P(Cxx, task_is_movable) {
    auto a = weft::spawn([] { return 1; });
    weft::task<int> b = std::move(a);
    EXPECT_FALSE(a.joinable());
    EXPECT_TRUE(b.joinable());
    weft::task<int> c;
    EXPECT_FALSE(c.joinable());
    c = std::move(b);
    EXPECT_EQ(c.join(), 1);
    // Move-assigning over a joinable task joins the old one first.
    std::atomic<int> ran{0};
    auto d = weft::spawn([&] {
        ran.fetch_add(1);
        return 2;
    });
    d = weft::spawn([&] {
        ran.fetch_add(1);
        return 3;
    });
    EXPECT_EQ(ran.load() >= 1, true);
    EXPECT_EQ(d.join(), 3);
    EXPECT_EQ(ran.load(), 2);
}

TEST_P(Cxx, vector_of_tasks) {
    std::vector<weft::task<long>> tasks;
    for (long i = 0; i < 200; ++i) tasks.push_back(weft::spawn([i] { return i * i; }));
    long sum = 0;
    for (auto& t : tasks) sum += t.join();
    long expect = 0;
    for (long i = 0; i < 200; ++i) expect += i * i;
    EXPECT_EQ(sum, expect);
}

TEST_P(Cxx, destroying_a_joinable_task_joins_it) {
    std::atomic<int> done{0};
    {
        auto t = weft::spawn([&] {
            weft::this_thread::sleep_for(5ms);
            done = 1;
        });
    }
    EXPECT_EQ(done.load(), 1);
}

TEST_P(Cxx, detach_runs_to_completion) {
    std::atomic<int> done{0};
    auto t = weft::spawn([&] { done = 1; });
    t.detach();
    EXPECT_FALSE(t.joinable());
    wt::yield_until([&] { return done.load() == 1; });
}

// The error code of what f throws, or 0 if it throws no weft::error.
template <class F>
int weft_error_of(F f) {
    try {
        f();
    } catch (const weft::error& e) {
        return e.code().value();
    }
    return 0;
}

// A task whose thread was joined through its native handle holds a stale
// handle: join and detach throw ESRCH and touch nothing.
TEST_P(Cxx, task_whose_handle_was_joined_elsewhere_throws_esrch) {
    auto t = weft::spawn([] { return 5; });
    ASSERT_EQ(weft_thread_join(t.native_handle(), nullptr), 0);
    EXPECT_EQ(t.id(), 0u);
    EXPECT_EQ(weft_error_of([&] { t.join(); }), ESRCH);
    EXPECT_FALSE(t.joinable());
    auto d = weft::spawn([] { return 6; });
    ASSERT_EQ(weft_thread_join(d.native_handle(), nullptr), 0);
    EXPECT_EQ(weft_error_of([&] { d.detach(); }), ESRCH);
}

TEST_P(Cxx, stale_task_leaves_the_thread_on_its_storage_alone) {
    auto old_task = weft::spawn([] { return 1; });
    weft_thread_t old_handle = old_task.native_handle();
    ASSERT_EQ(weft_thread_join(old_handle, nullptr), 0);
    // The next thread takes the freed stack (LIFO caches), its closure and
    // result where the old thread's were.
    weft::counting_semaphore go_on(0);
    auto t = weft::spawn([&] {
        go_on.acquire();
        return 2;
    });
    EXPECT_NE(t.native_handle(), old_handle);
    EXPECT_EQ(weft_error_of([&] { old_task.detach(); }), ESRCH);
    go_on.release();
    EXPECT_EQ(t.join(), 2);
}

TEST(CxxDeathTest, exception_escaping_a_detached_task_terminates) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            weft::runtime rt(weft::config{.workers = 1, .sched = "fifo"});
            auto t = weft::spawn([] { throw std::runtime_error("nobody joins me"); });
            t.detach();
            for (;;) weft::this_thread::yield();
        },
        "terminate");
}

TEST_P(Cxx, join_of_non_joinable_throws_einval) {
    weft::task<int> t;
    try {
        t.join();
        ADD_FAILURE() << "no exception";
    } catch (const weft::error& e) {
        EXPECT_EQ(e.code().value(), EINVAL);
    }
}

TEST_P(Cxx, spawn_with_name_and_stack_size) {
    auto t = weft::spawn_with(weft::thread_options{.stack_size = 1 << 20, .name = "cxx-named"}, [] {
        char buf[WEFT_THREAD_NAME_MAX];
        weft_thread_getname(weft_thread_self(), buf, sizeof buf);
        volatile char big[512 * 1024];
        big[0] = 1;
        big[sizeof big - 1] = 1;
        return std::string(buf);
    });
    EXPECT_EQ(t.join(), "cxx-named");
}

TEST_P(Cxx, spawn_with_bad_stack_size_throws) {
    try {
        auto t = weft::spawn_with(weft::thread_options{.stack_size = 100}, [] {});
        ADD_FAILURE() << "no exception";
    } catch (const weft::error& e) {
        EXPECT_EQ(e.code().value(), EINVAL);
    }
}

TEST_P(Cxx, task_id_matches_thread_id) {
    std::uint64_t inside = 0;
    auto t = weft::spawn([&] { inside = weft::this_thread::get_id(); });
    std::uint64_t id = t.id();
    t.join();
    EXPECT_EQ(id, inside);
    EXPECT_EQ(weft::this_thread::get_id(), 1u);
}

TEST_P(Cxx, thread_join_and_rethrow) {
    int v = 0;
    weft::thread a([&](int x) { v = x; }, 12);
    EXPECT_TRUE(a.joinable());
    EXPECT_NE(a.get_id(), 0u);
    a.join();
    EXPECT_EQ(v, 12);
    weft::thread b([] { throw std::runtime_error("from weft::thread"); });
    EXPECT_THROW(b.join(), std::runtime_error);
    weft::thread c;
    EXPECT_FALSE(c.joinable());
    weft::thread d([] {});
    c = std::move(d);
    EXPECT_TRUE(c.joinable());
    EXPECT_FALSE(d.joinable());
    c.join();
}

TEST_P(Cxx, mutex_with_standard_locks) {
    weft::mutex m;
    long counter = 0;
    std::vector<weft::task<void>> ts;
    for (int i = 0; i < 16; ++i)
        ts.push_back(weft::spawn([&] {
            for (int k = 0; k < 200; ++k) {
                if (k % 2) {
                    std::lock_guard<weft::mutex> g(m);
                    ++counter;
                } else {
                    std::unique_lock<weft::mutex> lk(m);
                    long v = counter;
                    weft::this_thread::yield();
                    counter = v + 1;
                }
            }
        }));
    for (auto& t : ts) t.join();
    EXPECT_EQ(counter, 16 * 200);
}

TEST_P(Cxx, mutex_try_lock_for_times_out) {
    weft::mutex m;
    m.lock();
    bool got = true;
    std::int64_t waited = 0;
    auto t = weft::spawn([&] {
        std::int64_t t0 = wt::now_ns();
        got = m.try_lock_for(30ms);
        waited = wt::now_ns() - t0;
    });
    t.join();
    EXPECT_FALSE(got);
    EXPECT_GE(waited, 25'000'000);
    EXPECT_FALSE(weft::spawn([&] { return m.try_lock(); }).join());
    m.unlock();
    EXPECT_TRUE(m.try_lock());
    m.unlock();
}

TEST_P(Cxx, recursive_mutex_relocks) {
    weft::recursive_mutex m;
    std::lock_guard<weft::recursive_mutex> a(m);
    std::lock_guard<weft::recursive_mutex> b(m);
    EXPECT_TRUE(m.try_lock());
    m.unlock();
}

TEST_P(Cxx, condition_variable_wait_with_predicate) {
    weft::mutex m;
    weft::condition_variable cv;
    std::vector<int> queue;
    int consumed = 0;
    auto consumer = weft::spawn([&] {
        for (int i = 0; i < 100; ++i) {
            std::unique_lock<weft::mutex> lk(m);
            cv.wait(lk, [&] { return !queue.empty(); });
            consumed += queue.back();
            queue.pop_back();
        }
    });
    for (int i = 1; i <= 100; ++i) {
        {
            std::lock_guard<weft::mutex> g(m);
            queue.push_back(i);
        }
        cv.notify_one();
        if (i % 10 == 0) weft::this_thread::yield();
    }
    consumer.join();
    EXPECT_EQ(consumed, 5050);
}

TEST_P(Cxx, condition_variable_wait_for_times_out) {
    weft::mutex m;
    weft::condition_variable cv;
    std::unique_lock<weft::mutex> lk(m);
    std::int64_t t0 = wt::now_ns();
    EXPECT_EQ(cv.wait_for(lk, 30ms), std::cv_status::timeout);
    EXPECT_GE(wt::now_ns() - t0, 25'000'000);
    EXPECT_TRUE(lk.owns_lock());
    EXPECT_FALSE(cv.wait_for(lk, 5ms, [] { return false; }));
    EXPECT_TRUE(cv.wait_for(lk, 5ms, [] { return true; }));
    EXPECT_EQ(cv.wait_until(lk, std::chrono::system_clock::now() + 5ms), std::cv_status::timeout);
}

TEST_P(Cxx, condition_variable_notify_all) {
    weft::mutex m;
    weft::condition_variable cv;
    bool go = false;
    std::atomic<int> woke{0};
    std::vector<weft::task<void>> ts;
    for (int i = 0; i < 20; ++i)
        ts.push_back(weft::spawn([&] {
            std::unique_lock<weft::mutex> lk(m);
            cv.wait(lk, [&] { return go; });
            woke.fetch_add(1);
        }));
    weft::this_thread::sleep_for(2ms);
    {
        std::lock_guard<weft::mutex> g(m);
        go = true;
    }
    cv.notify_all();
    for (auto& t : ts) t.join();
    EXPECT_EQ(woke.load(), 20);
}

TEST_P(Cxx, shared_mutex_with_shared_lock) {
    weft::shared_mutex sm;
    weft::barrier both(2);
    std::atomic<int> readers_together{0};
    auto reader = [&] {
        std::shared_lock<weft::shared_mutex> lk(sm);
        both.arrive_and_wait();  // both readers inside at once
        readers_together.fetch_add(1);
    };
    auto r1 = weft::spawn(reader), r2 = weft::spawn(reader);
    r1.join();
    r2.join();
    EXPECT_EQ(readers_together.load(), 2);
    {
        std::unique_lock<weft::shared_mutex> w(sm);
        EXPECT_FALSE(weft::spawn([&] { return sm.try_lock_shared(); }).join());
        EXPECT_FALSE(weft::spawn([&] { return sm.try_lock(); }).join());
    }
    EXPECT_TRUE(sm.try_lock_shared());
    sm.unlock_shared();
}

TEST_P(Cxx, shared_mutex_unlock_not_held_throws_eperm) {
    weft::shared_mutex sm;
    try {
        sm.unlock();
        ADD_FAILURE() << "no exception";
    } catch (const weft::error& e) {
        EXPECT_EQ(e.code().value(), EPERM);
    }
}

TEST_P(Cxx, counting_semaphore) {
    weft::counting_semaphore s(2);
    EXPECT_TRUE(s.try_acquire());
    EXPECT_TRUE(s.try_acquire());
    EXPECT_FALSE(s.try_acquire());
    auto t = weft::spawn([&] {
        s.acquire();
        return 1;
    });
    s.release(3);
    EXPECT_EQ(t.join(), 1);
    EXPECT_TRUE(s.try_acquire());
    EXPECT_TRUE(s.try_acquire());
    EXPECT_FALSE(s.try_acquire());
}

TEST_P(Cxx, counting_semaphore_bad_initial_throws) {
    EXPECT_THROW(weft::counting_semaphore s(WEFT_SEM_VALUE_MAX + 1u), weft::error);
}

TEST_P(Cxx, barrier_serial_once_per_round) {
    const int n = 8, rounds = 20;
    weft::barrier b(n);
    std::atomic<int> serial{0};
    std::vector<weft::task<void>> ts;
    for (int i = 0; i < n; ++i)
        ts.push_back(weft::spawn([&] {
            for (int r = 0; r < rounds; ++r)
                if (b.arrive_and_wait()) serial.fetch_add(1);
        }));
    for (auto& t : ts) t.join();
    EXPECT_EQ(serial.load(), rounds);
    EXPECT_THROW(weft::barrier zero(0), weft::error);
}

TEST_P(Cxx, sleep_for_sleeps_at_least) {
    std::int64_t t0 = wt::now_ns();
    weft::this_thread::sleep_for(15ms);
    EXPECT_GE(wt::now_ns() - t0, 15'000'000);
    weft::this_thread::sleep_for(-5ms);  // negative: returns
    weft::this_thread::sleep_for(0ms);
}

TEST_P(Cxx, stats_wrapper) {
    auto t = weft::spawn([] {});
    t.join();
    weft_stats_t s = weft::stats();
    EXPECT_EQ(s.threads_created, 1u);
    EXPECT_EQ(s.workers, workers());
}

TEST_P(Cxx, recursive_spawn_tree) {
    struct rec {
        static long sum(long lo, long hi) {
            if (hi - lo < 64) {
                long s = 0;
                for (long i = lo; i < hi; ++i) s += i;
                return s;
            }
            long mid = (lo + hi) / 2;
            auto left = weft::spawn(&rec::sum, lo, mid);
            long right = sum(mid, hi);
            return left.join() + right;
        }
    };
    EXPECT_EQ(rec::sum(0, 20000), 20000L * 19999 / 2);
}

}  // namespace
