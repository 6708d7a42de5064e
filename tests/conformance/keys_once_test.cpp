// Class: requirement, negative. Thread-specific data (keys, destructors and
// their iterations, reuse of deleted keys, EAGAIN when all are used) and
// weft_once (runs init exactly once; concurrent callers block until it is done).
//
// Keys are process-global: every test deletes the keys it creates, so the file
// also passes when the whole binary runs in one process.
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <thread>
#include <vector>

#include "support/weft_test.hpp"

namespace {

class Keys : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Serial, Keys, ::testing::ValuesIn(wt::rt_params_one_worker()), wt::rt_param_name);
INSTANTIATE_TEST_SUITE_P(Concurrent, Keys, ::testing::ValuesIn(wt::rt_params({4})), wt::rt_param_name);

TEST_P(Keys, values_are_per_thread) {
    weft_key_t k;
    ASSERT_EQ(weft_key_create(&k, nullptr), 0);
    int main_value = 0;
    ASSERT_EQ(weft_setspecific(k, &main_value), 0);
    const int n = 32;
    std::vector<int> vals(n);
    std::atomic<int> bad{0};
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < n; ++i)
        ts.push_back(wt::go([&, i] {
            if (weft_getspecific(k) != nullptr) bad.fetch_add(1);  // a new thread starts with NULL
            weft_setspecific(k, &vals[i]);
            for (int r = 0; r < 5; ++r) {
                weft_thread_yield();
                if (weft_getspecific(k) != &vals[i]) bad.fetch_add(1);
            }
        }));
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(weft_getspecific(k), &main_value);
    ASSERT_EQ(weft_key_delete(k), 0);
}

TEST_P(Keys, errors) {
    EXPECT_EQ(weft_key_create(nullptr, nullptr), EINVAL);
    EXPECT_EQ(weft_key_delete(WEFT_KEYS_MAX), EINVAL);
    EXPECT_EQ(weft_setspecific(WEFT_KEYS_MAX, nullptr), EINVAL);
    EXPECT_EQ(weft_getspecific(WEFT_KEYS_MAX), nullptr);
    weft_key_t k;
    ASSERT_EQ(weft_key_create(&k, nullptr), 0);
    ASSERT_EQ(weft_key_delete(k), 0);
    EXPECT_EQ(weft_key_delete(k), EINVAL) << "deleting twice";
    EXPECT_EQ(weft_setspecific(k, &k), EINVAL) << "set on a deleted key";
}

std::atomic<int> g_dtor_calls{0};
std::atomic<std::uintptr_t> g_dtor_sum{0};
void counting_dtor(void* v) {
    g_dtor_calls.fetch_add(1);
    g_dtor_sum.fetch_add(reinterpret_cast<std::uintptr_t>(v));
}

TEST_P(Keys, destructor_runs_at_thread_end_with_the_value) {
    g_dtor_calls = 0;
    g_dtor_sum = 0;
    weft_key_t k;
    ASSERT_EQ(weft_key_create(&k, &counting_dtor), 0);
    std::vector<weft_thread_t> ts;
    for (std::uintptr_t i = 1; i <= 10; ++i)
        ts.push_back(wt::go([k, i] { weft_setspecific(k, reinterpret_cast<void*>(i)); }));
    // A thread that never sets a value, and one that sets NULL: no call.
    ts.push_back(wt::go([] {}));
    ts.push_back(wt::go([k] { weft_setspecific(k, nullptr); }));
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(g_dtor_calls.load(), 10);
    EXPECT_EQ(g_dtor_sum.load(), 55u);
    ASSERT_EQ(weft_key_delete(k), 0);
}

TEST_P(Keys, destructor_runs_on_thread_exit) {
    g_dtor_calls = 0;
    weft_key_t k;
    ASSERT_EQ(weft_key_create(&k, &counting_dtor), 0);
    weft_thread_t t = wt::go([k] {
        weft_setspecific(k, reinterpret_cast<void*>(5));
        weft_thread_exit(nullptr);
    });
    wt::join(t);
    EXPECT_EQ(g_dtor_calls.load(), 1);
    ASSERT_EQ(weft_key_delete(k), 0);
}

TEST_P(Keys, destructor_sees_its_value_cleared) {
    static weft_key_t key;
    static std::atomic<int> still_set;
    still_set = 0;
    ASSERT_EQ(weft_key_create(&key,
                              [](void*) {
                                  if (weft_getspecific(key) != nullptr) still_set.fetch_add(1);
                              }),
              0);
    weft_thread_t t = wt::go([] { weft_setspecific(key, reinterpret_cast<void*>(1)); });
    wt::join(t);
    EXPECT_EQ(still_set.load(), 0) << "Pthreads: the value is NULL when the destructor runs";
    ASSERT_EQ(weft_key_delete(key), 0);
}

TEST_P(Keys, destructor_iterations_are_bounded) {
    // A destructor that always stores a new value is called once per round,
    // WEFT_DESTRUCTOR_ITERATIONS rounds at most.
    static weft_key_t key;
    static std::atomic<int> calls;
    calls = 0;
    ASSERT_EQ(weft_key_create(&key,
                              [](void* v) {
                                  calls.fetch_add(1);
                                  weft_setspecific(key, v);
                              }),
              0);
    weft_thread_t t = wt::go([] { weft_setspecific(key, reinterpret_cast<void*>(1)); });
    wt::join(t);
    EXPECT_EQ(calls.load(), WEFT_DESTRUCTOR_ITERATIONS);
    ASSERT_EQ(weft_key_delete(key), 0);
}

TEST_P(Keys, destructor_reset_twice_runs_three_rounds) {
    static weft_key_t key;
    static std::atomic<int> calls;
    calls = 0;
    ASSERT_EQ(weft_key_create(&key,
                              [](void* v) {
                                  calls.fetch_add(1);
                                  auto n = reinterpret_cast<std::uintptr_t>(v);
                                  if (n > 1) weft_setspecific(key, reinterpret_cast<void*>(n - 1));
                              }),
              0);
    weft_thread_t t = wt::go([] { weft_setspecific(key, reinterpret_cast<void*>(3)); });
    wt::join(t);
    EXPECT_EQ(calls.load(), 3);
    ASSERT_EQ(weft_key_delete(key), 0);
}

TEST_P(Keys, deleted_key_destructor_does_not_run) {
    g_dtor_calls = 0;
    weft_key_t k;
    ASSERT_EQ(weft_key_create(&k, &counting_dtor), 0);
    weft_sem_t s;
    weft_sem_init(&s, 0);
    std::atomic<int> set{0};
    weft_thread_t t = wt::go([&] {
        EXPECT_EQ(weft_setspecific(k, reinterpret_cast<void*>(9)), 0);
        set = 1;
        weft_sem_wait(&s);
    });
    // The thread holds a value for k when k is deleted.
    wt::yield_until([&] { return set.load() == 1; });
    ASSERT_EQ(weft_key_delete(k), 0);
    weft_sem_post(&s);
    wt::join(t);
    EXPECT_EQ(g_dtor_calls.load(), 0);
}

TEST_P(Keys, reused_slot_does_not_return_old_values) {
    weft_key_t k1;
    ASSERT_EQ(weft_key_create(&k1, nullptr), 0);
    int v = 0;
    ASSERT_EQ(weft_setspecific(k1, &v), 0);
    ASSERT_EQ(weft_key_delete(k1), 0);
    EXPECT_EQ(weft_getspecific(k1), nullptr) << "a deleted key has no value";
    // Create keys until the deleted slot comes back.
    std::vector<weft_key_t> made;
    bool reused = false;
    for (int i = 0; i < WEFT_KEYS_MAX && !reused; ++i) {
        weft_key_t k2;
        ASSERT_EQ(weft_key_create(&k2, nullptr), 0);
        made.push_back(k2);
        if (k2 == k1) {
            reused = true;
            EXPECT_EQ(weft_getspecific(k2), nullptr) << "the old value leaked into the new key";
        }
    }
    EXPECT_TRUE(reused);
    for (auto k : made) ASSERT_EQ(weft_key_delete(k), 0);
}

TEST_P(Keys, eagain_when_all_keys_are_in_use) {
    std::vector<weft_key_t> made;
    int rc = 0;
    for (int i = 0; i <= WEFT_KEYS_MAX; ++i) {
        weft_key_t k;
        rc = weft_key_create(&k, nullptr);
        if (rc != 0) break;
        made.push_back(k);
    }
    EXPECT_EQ(rc, EAGAIN);
    EXPECT_LE(made.size(), size_t(WEFT_KEYS_MAX));
    EXPECT_GE(made.size(), size_t(WEFT_KEYS_MAX) - 8) << "only a few keys may be taken by the runtime itself";
    // Every key works, the highest included.
    ASSERT_FALSE(made.empty());
    int x = 0;
    EXPECT_EQ(weft_setspecific(made.back(), &x), 0);
    EXPECT_EQ(weft_getspecific(made.back()), &x);
    for (auto k : made) ASSERT_EQ(weft_key_delete(k), 0);
    weft_key_t again;
    EXPECT_EQ(weft_key_create(&again, nullptr), 0) << "a key is free again after delete";
    weft_key_delete(again);
}

TEST_P(Keys, external_thread_has_its_own_values) {
    weft_key_t k;
    ASSERT_EQ(weft_key_create(&k, nullptr), 0);
    int mine = 0, theirs = 0;
    weft_setspecific(k, &mine);
    void* seen_before = &mine;
    void* seen_after = nullptr;
    std::thread([&] {
        seen_before = weft_getspecific(k);
        weft_setspecific(k, &theirs);
        seen_after = weft_getspecific(k);
    }).join();
    EXPECT_EQ(seen_before, nullptr);
    EXPECT_EQ(seen_after, &theirs);
    EXPECT_EQ(weft_getspecific(k), &mine);
    ASSERT_EQ(weft_key_delete(k), 0);
}

// --- once ---------------------------------------------------------------------------

class Once : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Serial, Once, ::testing::ValuesIn(wt::rt_params_one_worker()), wt::rt_param_name);
INSTANTIATE_TEST_SUITE_P(Concurrent, Once, ::testing::ValuesIn(wt::rt_params_multi()), wt::rt_param_name);

std::atomic<int> g_init_calls{0};
std::atomic<int> g_init_done{0};
void slow_init() {
    g_init_calls.fetch_add(1);
    weft_sleep_ns(20'000'000);  // blocks: the other callers must wait, not run init
    weft_thread_yield();
    g_init_done.store(1);
}

TEST_P(Once, concurrent_callers_run_init_once_and_wait_for_it) {
    g_init_calls = 0;
    g_init_done = 0;
    weft_once_t once = WEFT_ONCE_INIT;
    std::atomic<int> early{0}, rcs{0};
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < 64; ++i)
        ts.push_back(wt::go([&] {
            rcs.fetch_add(weft_once(&once, &slow_init));
            if (g_init_done.load() != 1) early.fetch_add(1);
        }));
    EXPECT_EQ(weft_once(&once, &slow_init), 0);
    EXPECT_EQ(g_init_done.load(), 1);
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(g_init_calls.load(), 1);
    EXPECT_EQ(early.load(), 0) << "a caller returned before init had finished";
    EXPECT_EQ(rcs.load(), 0);
}

TEST_P(Once, later_calls_do_nothing) {
    static int calls;
    calls = 0;
    weft_once_t once = WEFT_ONCE_INIT;
    for (int i = 0; i < 5; ++i) ASSERT_EQ(weft_once(&once, [] { ++calls; }), 0);
    EXPECT_EQ(calls, 1);
}

TEST_P(Once, distinct_once_objects_are_independent) {
    static int a, b;
    a = b = 0;
    weft_once_t o1 = WEFT_ONCE_INIT, o2 = WEFT_ONCE_INIT;
    weft_once(&o1, [] { ++a; });
    weft_once(&o2, [] { ++b; });
    weft_once(&o1, [] { ++a; });
    EXPECT_EQ(a, 1);
    EXPECT_EQ(b, 1);
}

TEST_P(Once, null_arguments_are_einval) {
    weft_once_t once = WEFT_ONCE_INIT;
    EXPECT_EQ(weft_once(nullptr, [] {}), EINVAL);
    EXPECT_EQ(weft_once(&once, nullptr), EINVAL);
}

TEST_P(Once, many_onces_sharing_wait_buckets) {
    // More once objects than the runtime's wait buckets, each with waiters:
    // waking one object's callers must not wake (or lose) another's.
    static std::atomic<int> calls;
    calls = 0;
    const int n = 200;
    std::vector<weft_once_t> onces(n, WEFT_ONCE_INIT);
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < 3; ++j)
            ts.push_back(wt::go([&onces, i] {
                weft_once(&onces[i], [] {
                    calls.fetch_add(1);
                    weft_thread_yield();
                });
            }));
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(calls.load(), n);
}

}  // namespace
