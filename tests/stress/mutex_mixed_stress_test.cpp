// Class: stress, regression. One weft mutex contended by kernel threads outside
// weft and weft threads together, the case where a mutex that always handed
// itself to the first waiter formed a lock convoy: every unlock gave it to a
// thread that was not running (a kernel thread asleep on its futex, or a weft
// thread not yet switched to), everyone else queued behind it, and 4 kernel
// threads plus 8 weft threads doing 500,000 lock/unlock pairs each took 26-50 s
// on 1 or 2 workers instead of about 0.1 s (src/sync/mutex.cpp; `weft-bench
// micro --only mutex_contended_mixed` measures it). The check is an exact
// count; the fixture's watchdog (60 s; 90 s under sanitizers) is the bound: at
// 2,000,000 pairs a thread it catches a hang or such a convoy, far above the
// few seconds the run takes on a loaded host.
#include <thread>
#include <vector>

#include "support/weft_test.hpp"

namespace {

class MutexMixedConcurrency : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Workers, MutexMixedConcurrency, ::testing::ValuesIn(wt::rt_params_all()),
                         wt::rt_param_name);

TEST_P(MutexMixedConcurrency, kernel_and_weft_threads_share_one_mutex) {
    const int kernel_threads = 4, weft_threads = 8;
    const long iters = wt::scaled(2'000'000, 2'000);
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    long counter = 0;
    auto body = [&] {
        for (long k = 0; k < iters; ++k) {
            weft_mutex_lock(&m);
            ++counter;
            weft_mutex_unlock(&m);
        }
    };
    std::vector<std::thread> outside;
    for (int i = 0; i < kernel_threads; ++i) outside.emplace_back(body);
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < weft_threads; ++i) ts.push_back(wt::go(body));
    for (auto t : ts) wt::join(t);
    for (auto& t : outside) t.join();
    EXPECT_EQ(counter, (kernel_threads + weft_threads) * iters);
    EXPECT_EQ(weft_mutex_trylock(&m), 0) << "the mutex ends free";
    ASSERT_EQ(weft_mutex_unlock(&m), 0);
}

TEST_P(MutexMixedConcurrency, kernel_and_weft_threads_hold_it_across_a_switch) {
    // The holder sometimes yields inside the critical section (weft_thread_yield
    // or sched_yield), so waiters do queue, are woken, and race newcomers for
    // the mutex.
    const int kernel_threads = 4, weft_threads = 8;
    const long iters = wt::scaled(20'000, 500);
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    long counter = 0;
    auto body = [&](bool weft) {
        for (long k = 0; k < iters; ++k) {
            weft_mutex_lock(&m);
            long v = counter;
            if (k % 64 == 0) {
                if (weft) weft_thread_yield();
                else std::this_thread::yield();
            }
            counter = v + 1;
            weft_mutex_unlock(&m);
        }
    };
    std::vector<std::thread> outside;
    for (int i = 0; i < kernel_threads; ++i) outside.emplace_back(body, false);
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < weft_threads; ++i) ts.push_back(wt::go([&] { body(true); }));
    for (auto t : ts) wt::join(t);
    for (auto& t : outside) t.join();
    EXPECT_EQ(counter, (kernel_threads + weft_threads) * iters);
}

}  // namespace
