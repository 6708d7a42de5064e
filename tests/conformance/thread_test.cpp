// Class: requirement, negative. Threads (weft.h, "Threads"): create, join,
// detach, exit, yield, self, equal, id, names, attributes, the in-place API for
// language bindings, and every documented error code. Parameterized over
// fifo/lifo x 1/2/4 workers where the behaviour must not depend on them (the
// multi-worker instances are named Concurrent/... and run under TSan too).
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "support/weft_test.hpp"

namespace {

class Thread : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Serial, Thread, ::testing::ValuesIn(wt::rt_params_one_worker()), wt::rt_param_name);
INSTANTIATE_TEST_SUITE_P(Concurrent, Thread, ::testing::ValuesIn(wt::rt_params_multi()), wt::rt_param_name);

// Orders that are only defined on one worker (arrival order = program order).
class ThreadOneWorker : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Serial, ThreadOneWorker, ::testing::ValuesIn(wt::rt_params_one_worker()), wt::rt_param_name);

void* return_arg_plus_one(void* arg) { return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(arg) + 1); }

TEST_P(Thread, join_returns_the_result) {
    weft_thread_t t;
    ASSERT_EQ(weft_thread_create(&t, nullptr, &return_arg_plus_one, reinterpret_cast<void*>(41)), 0);
    void* r = nullptr;
    ASSERT_EQ(weft_thread_join(t, &r), 0);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(r), 42u);
}

TEST_P(Thread, join_with_null_retval_is_allowed) {
    weft_thread_t t;
    ASSERT_EQ(weft_thread_create(&t, nullptr, &return_arg_plus_one, nullptr), 0);
    EXPECT_EQ(weft_thread_join(t, nullptr), 0);
}

TEST_P(Thread, results_through_void_pointers) {
    struct result {
        int sum;
        std::string text;
    };
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < 50; ++i)
        ts.push_back(wt::go([i]() -> void* { return new result{i * (i + 1) / 2, "thread " + std::to_string(i)}; }));
    for (int i = 0; i < 50; ++i) {
        auto* r = static_cast<result*>(wt::join(ts[i]));
        ASSERT_NE(r, nullptr);
        EXPECT_EQ(r->sum, i * (i + 1) / 2);
        EXPECT_EQ(r->text, "thread " + std::to_string(i));
        delete r;
    }
}

void* exit_deep(void* arg) {
    struct rec {
        static void down(int n, void* v) {
            if (n < 0) return;  // never: a path that returns keeps -Winfinite-recursion quiet
            if (n > 0) down(n - 1, v);
            weft_thread_exit(v);
        }
    };
    rec::down(10, arg);
    return nullptr;  // not reached
}

TEST_P(Thread, exit_value_reaches_join) {
    weft_thread_t t;
    int marker = 0;
    ASSERT_EQ(weft_thread_create(&t, nullptr, &exit_deep, &marker), 0);
    void* r = nullptr;
    ASSERT_EQ(weft_thread_join(t, &r), 0);
    EXPECT_EQ(r, &marker);
}

TEST_P(Thread, exit_skips_the_rest_of_the_thread) {
    int after = 0;
    weft_thread_t t = wt::go([&]() -> void* {
        weft_thread_exit(reinterpret_cast<void*>(7));
        after = 1;  // never runs
        return nullptr;
    });
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(wt::join(t)), 7u);
    EXPECT_EQ(after, 0);
}

int fib(int n) {
    if (n < 2) return n;
    int a = 0;
    weft_thread_t t = wt::go([&a, n] { a = fib(n - 1); });
    int b = fib(n - 2);
    wt::join(t);
    return a + b;
}

TEST_P(Thread, nested_creation_fork_join_tree) { EXPECT_EQ(fib(16), 987); }

TEST_P(Thread, join_self_is_edeadlk) {
    int rc = -1;
    std::atomic<weft_thread_t> me{WEFT_THREAD_NULL};
    weft_thread_t t = wt::go([&] {
        me = weft_thread_self();
        rc = weft_thread_join(weft_thread_self(), nullptr);
    });
    wt::join(t);
    EXPECT_EQ(rc, EDEADLK);
}

TEST_P(Thread, main_joining_itself_is_edeadlk) { EXPECT_EQ(weft_thread_join(weft_thread_self(), nullptr), EDEADLK); }

TEST_P(Thread, join_null_is_esrch) {
    EXPECT_EQ(weft_thread_join(WEFT_THREAD_NULL, nullptr), ESRCH);
    EXPECT_EQ(weft_thread_detach(WEFT_THREAD_NULL), ESRCH);
}

TEST_P(Thread, join_of_detached_thread_is_einval) {
    weft_sem_t go_on;
    weft_sem_init(&go_on, 0);
    std::atomic<int> done{0};
    weft_thread_t t = wt::go([&] {
        weft_sem_wait(&go_on);
        done = 1;
    });
    ASSERT_EQ(weft_thread_detach(t), 0);
    // Still alive (blocked on the semaphore): the handle is valid, join refuses.
    EXPECT_EQ(weft_thread_join(t, nullptr), EINVAL);
    EXPECT_EQ(weft_thread_detach(t), EINVAL) << "detaching twice";
    weft_sem_post(&go_on);
    wt::yield_until([&] { return done.load() == 1; });
}

TEST_P(Thread, join_of_thread_created_detached_is_einval) {
    weft_sem_t go_on;
    weft_sem_init(&go_on, 0);
    std::atomic<int> done{0};
    weft_attr_t attr;
    weft_attr_init(&attr);
    ASSERT_EQ(weft_attr_setdetachstate(&attr, WEFT_CREATE_DETACHED), 0);
    weft_thread_t t = wt::go(
        [&] {
            weft_sem_wait(&go_on);
            done = 1;
        },
        &attr);
    EXPECT_EQ(weft_thread_join(t, nullptr), EINVAL);
    weft_sem_post(&go_on);
    wt::yield_until([&] { return done.load() == 1; });
}

TEST_P(Thread, second_concurrent_joiner_gets_einval) {
    weft_sem_t go_on;
    weft_sem_init(&go_on, 0);
    weft_thread_t target = wt::go([&] { weft_sem_wait(&go_on); });
    std::atomic<int> first_blocked{0};
    int rc1 = -1;
    weft_thread_t joiner = wt::go([&] {
        first_blocked = 1;
        rc1 = weft_thread_join(target, nullptr);
    });
    wt::yield_until([&] { return first_blocked.load() == 1; });
    wt::settle();
    // The first joiner is (very probably) blocked in join by now; if it has not
    // reached join yet, ours is the first and theirs gets EINVAL instead.
    int rc2 = weft_thread_join(target, nullptr);
    if (rc2 == 0) {
        weft_sem_post(&go_on);
        wt::join(joiner);
        EXPECT_EQ(rc1, EINVAL);
    } else {
        EXPECT_EQ(rc2, EINVAL);
        weft_sem_post(&go_on);
        wt::join(joiner);
        EXPECT_EQ(rc1, 0);
    }
}

TEST_P(Thread, detach_of_finished_thread_reclaims_it) {
    std::atomic<int> done{0};
    weft_thread_t t = wt::go([&] { done = 1; });
    wt::yield_until([&] { return done.load() == 1; });
    wt::settle();
    EXPECT_EQ(weft_thread_detach(t), 0);
    weft_stats_t s;
    ASSERT_EQ(weft_stats_get(&s), 0);
    EXPECT_EQ(s.threads_live, 1u);
}

TEST_P(Thread, detached_threads_run_to_completion) {
    std::atomic<int> done{0};
    for (int i = 0; i < 100; ++i) {
        weft_thread_t t = wt::go([&] {
            weft_thread_yield();
            done.fetch_add(1);
        });
        ASSERT_EQ(weft_thread_detach(t), 0);
    }
    wt::yield_until([&] { return done.load() == 100; });
}

TEST_P(Thread, self_is_the_created_handle) {
    std::atomic<weft_thread_t> seen{WEFT_THREAD_NULL};
    weft_thread_t t = wt::go([&] { seen = weft_thread_self(); });
    wt::yield_until([&] { return seen.load() != WEFT_THREAD_NULL; });
    EXPECT_TRUE(weft_thread_equal(seen.load(), t));
    EXPECT_FALSE(weft_thread_equal(weft_thread_self(), t));
    EXPECT_TRUE(weft_thread_equal(weft_thread_self(), weft_thread_self()));
    wt::join(t);
}

TEST_P(Thread, ids_are_unique_and_main_is_one) {
    EXPECT_EQ(weft_thread_id(weft_thread_self()), 1u);
    EXPECT_EQ(weft_thread_id(WEFT_THREAD_NULL), 0u);
    std::vector<std::uint64_t> ids(200);
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < 200; ++i) ts.push_back(wt::go([&ids, i] { ids[i] = weft_thread_id(weft_thread_self()); }));
    for (int i = 0; i < 200; ++i) {
        std::uint64_t handle_id = weft_thread_id(ts[i]);
        wt::join(ts[i]);
        EXPECT_EQ(handle_id, ids[i]);
    }
    std::set<std::uint64_t> uniq(ids.begin(), ids.end());
    EXPECT_EQ(uniq.size(), ids.size());
    EXPECT_EQ(uniq.count(0), 0u);
    EXPECT_EQ(uniq.count(1), 0u);
}

TEST_P(Thread, name_from_attribute) {
    weft_attr_t attr;
    weft_attr_init(&attr);
    std::string name = "worker-bee";
    ASSERT_EQ(weft_attr_setname(&attr, name.c_str()), 0);
    char seen[WEFT_THREAD_NAME_MAX] = "?";
    weft_thread_t t = wt::go([&] { weft_thread_getname(weft_thread_self(), seen, sizeof seen); }, &attr);
    name = "changed after create";  // the name was copied at create time
    wt::join(t);
    EXPECT_STREQ(seen, "worker-bee");
}

TEST_P(Thread, unnamed_thread_has_empty_name) {
    char seen[WEFT_THREAD_NAME_MAX] = "?";
    weft_thread_t t = wt::go([&] { weft_thread_getname(weft_thread_self(), seen, sizeof seen); });
    wt::join(t);
    EXPECT_STREQ(seen, "");
}

TEST_P(Thread, setname_getname_roundtrip_and_truncation) {
    weft_thread_t self = weft_thread_self();
    ASSERT_EQ(weft_thread_setname(self, "renamed"), 0);
    char buf[WEFT_THREAD_NAME_MAX];
    ASSERT_EQ(weft_thread_getname(self, buf, sizeof buf), 0);
    EXPECT_STREQ(buf, "renamed");
    // Longer than WEFT_THREAD_NAME_MAX - 1: truncated.
    std::string longname(100, 'x');
    ASSERT_EQ(weft_thread_setname(self, longname.c_str()), 0);
    ASSERT_EQ(weft_thread_getname(self, buf, sizeof buf), 0);
    EXPECT_EQ(std::strlen(buf), size_t(WEFT_THREAD_NAME_MAX - 1));
    // A small buffer gets a truncated, terminated copy.
    char small[4];
    ASSERT_EQ(weft_thread_getname(self, small, sizeof small), 0);
    EXPECT_STREQ(small, "xxx");
    weft_thread_setname(self, "main");
}

TEST_P(Thread, name_errors) {
    char buf[8];
    EXPECT_EQ(weft_thread_getname(weft_thread_self(), buf, 0), ERANGE);
    EXPECT_EQ(weft_thread_getname(WEFT_THREAD_NULL, buf, sizeof buf), ESRCH);
    EXPECT_EQ(weft_thread_setname(WEFT_THREAD_NULL, "x"), ESRCH);
}

TEST_P(Thread, setname_of_another_thread) {
    weft_sem_t s;
    weft_sem_init(&s, 0);
    char seen[WEFT_THREAD_NAME_MAX] = "?";
    weft_thread_t t = wt::go([&] {
        weft_sem_wait(&s);
        weft_thread_getname(weft_thread_self(), seen, sizeof seen);
    });
    ASSERT_EQ(weft_thread_setname(t, "named-by-main"), 0);
    weft_sem_post(&s);
    wt::join(t);
    EXPECT_STREQ(seen, "named-by-main");
}

TEST_P(ThreadOneWorker, yield_alternates_two_threads_on_one_worker) {
    std::vector<int> order;
    weft_thread_t a = wt::go([&] {
        for (int i = 0; i < 5; ++i) {
            order.push_back(1);
            weft_thread_yield();
        }
    });
    weft_thread_t b = wt::go([&] {
        for (int i = 0; i < 5; ++i) {
            order.push_back(2);
            weft_thread_yield();
        }
    });
    wt::join(a);
    wt::join(b);
    ASSERT_EQ(order.size(), 10u);
    for (size_t i = 1; i < order.size(); ++i) EXPECT_NE(order[i], order[i - 1]) << "at " << i;
}

TEST_P(Thread, yield_alone_returns_zero) {
    for (int i = 0; i < 100; ++i) ASSERT_EQ(weft_thread_yield(), 0);
}

TEST_P(ThreadOneWorker, creation_order_follows_the_policy) {
    std::vector<int> order;
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < 5; ++i) ts.push_back(wt::go([&order, i] { order.push_back(i); }));
    order.push_back(-1);  // the parent's turn
    for (auto t : ts) wt::join(t);
    const std::string s = sched();
    if (s == "fifo") {  // the parent goes on; the children in creation order
        EXPECT_EQ(order, (std::vector<int>{-1, 0, 1, 2, 3, 4}));
    } else if (s == "lifo") {  // the parent goes on; the most recent child first
        EXPECT_EQ(order, (std::vector<int>{-1, 4, 3, 2, 1, 0}));
    } else {  // dfs, ws: each child runs at once, the parent after it
        EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, -1}));
    }
}

TEST_P(Thread, create_rejects_bad_arguments) {
    weft_thread_t t;
    EXPECT_EQ(weft_thread_create(nullptr, nullptr, &return_arg_plus_one, nullptr), EINVAL);
    EXPECT_EQ(weft_thread_create(&t, nullptr, nullptr, nullptr), EINVAL);
    weft_attr_t attr;
    weft_attr_init(&attr);
    attr.detach_state = 7;
    EXPECT_EQ(weft_thread_create(&t, &attr, &return_arg_plus_one, nullptr), EINVAL);
    weft_attr_init(&attr);
    attr.stack_size = WEFT_STACK_MIN - 1;
    EXPECT_EQ(weft_thread_create(&t, &attr, &return_arg_plus_one, nullptr), EINVAL);
}

// --- attributes -----------------------------------------------------------------

TEST_P(Thread, attr_defaults) {
    weft_attr_t attr;
    ASSERT_EQ(weft_attr_init(&attr), 0);
    int state = -1;
    ASSERT_EQ(weft_attr_getdetachstate(&attr, &state), 0);
    EXPECT_EQ(state, WEFT_CREATE_JOINABLE);
    size_t size = 0;
    ASSERT_EQ(weft_attr_getstacksize(&attr, &size), 0);
    EXPECT_EQ(size, 64u * 1024u) << "the runtime default";
    EXPECT_EQ(weft_attr_destroy(&attr), 0);
}

TEST_P(Thread, attr_stack_size_bounds) {
    weft_attr_t attr;
    weft_attr_init(&attr);
    EXPECT_EQ(weft_attr_setstacksize(&attr, 0), EINVAL);
    EXPECT_EQ(weft_attr_setstacksize(&attr, WEFT_STACK_MIN - 1), EINVAL);
    EXPECT_EQ(weft_attr_setstacksize(&attr, (size_t(1) << 30) + 1), EINVAL);
    EXPECT_EQ(weft_attr_setstacksize(&attr, WEFT_STACK_MIN), 0);
    size_t size = 0;
    weft_attr_getstacksize(&attr, &size);
    EXPECT_EQ(size, size_t(WEFT_STACK_MIN));
    EXPECT_EQ(weft_attr_setstacksize(&attr, size_t(1) << 30), 0);
    weft_attr_getstacksize(&attr, &size);
    EXPECT_EQ(size, size_t(1) << 30);
}

TEST_P(Thread, attr_detach_state_values) {
    weft_attr_t attr;
    weft_attr_init(&attr);
    EXPECT_EQ(weft_attr_setdetachstate(&attr, 2), EINVAL);
    EXPECT_EQ(weft_attr_setdetachstate(&attr, -1), EINVAL);
    EXPECT_EQ(weft_attr_setdetachstate(&attr, WEFT_CREATE_DETACHED), 0);
    int state = -1;
    weft_attr_getdetachstate(&attr, &state);
    EXPECT_EQ(state, WEFT_CREATE_DETACHED);
}

TEST_P(Thread, large_stack_attribute_is_usable) {
    weft_attr_t attr;
    weft_attr_init(&attr);
    ASSERT_EQ(weft_attr_setstacksize(&attr, 2u << 20), 0);
    int ok = 0;
    weft_thread_t t = wt::go(
        [&] {
            volatile char big[1536 * 1024];
            for (size_t i = 0; i < sizeof big; i += 4096) big[i] = static_cast<char>(i >> 12);
            ok = big[4096] == 1;
        },
        &attr);
    wt::join(t);
    EXPECT_EQ(ok, 1);
}

TEST_P(Thread, minimum_stack_attribute_runs_a_thread) {
    weft_attr_t attr;
    weft_attr_init(&attr);
    ASSERT_EQ(weft_attr_setstacksize(&attr, WEFT_STACK_MIN), 0);
    int v = 0;
    weft_thread_t t = wt::go(
        [&] {
            volatile char buf[4096];
            buf[0] = 3;
            v = buf[0];
        },
        &attr);
    wt::join(t);
    EXPECT_EQ(v, 3);
}

// --- in-place threads (language bindings) -------------------------------------------

struct inplace_log {
    std::vector<std::string> events;
};
inplace_log* g_log = nullptr;

void* inplace_body(void* storage) {
    auto* p = static_cast<std::uint64_t*>(storage);
    p[1] = p[0] * 2;  // input in word 0, result in word 1
    g_log->events.push_back("run");
    return nullptr;
}

TEST_P(ThreadOneWorker, inplace_storage_start_collect_release) {
    inplace_log log;
    g_log = &log;
    weft_thread_t t;
    void* storage = nullptr;
    ASSERT_EQ(weft_thread_create_inplace(&t, nullptr, &inplace_body, 128, &storage,
                                         [](void* s) {
                                             g_log->events.push_back("release");
                                             static_cast<std::uint64_t*>(s)[0] = 0;
                                         }),
              0);
    ASSERT_NE(storage, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(storage) % 64, 0u);
    static_cast<std::uint64_t*>(storage)[0] = 21;
    wt::settle();
    EXPECT_TRUE(log.events.empty()) << "a created, unstarted thread must not run";
    ASSERT_EQ(weft_thread_start(t), 0);
    EXPECT_EQ(weft_thread_start(t), EINVAL) << "start twice";
    std::uint64_t got = 0;
    ASSERT_EQ(weft_thread_join_inplace(
                  t,
                  [](void* s, void* ctx) {
                      g_log->events.push_back("collect");
                      *static_cast<std::uint64_t*>(ctx) = static_cast<std::uint64_t*>(s)[1];
                  },
                  &got),
              0);
    EXPECT_EQ(got, 42u);
    EXPECT_EQ(log.events, (std::vector<std::string>{"run", "collect", "release"}));
    g_log = nullptr;
}

TEST_P(Thread, inplace_storage_too_big_is_einval) {
    weft_thread_t t;
    void* storage = nullptr;
    // At most 1/4 of the (64 KiB default) stack.
    EXPECT_EQ(weft_thread_create_inplace(&t, nullptr, &inplace_body, 64 * 1024 / 4 + 1, &storage, nullptr), EINVAL);
    weft_attr_t attr;
    weft_attr_init(&attr);
    weft_attr_setstacksize(&attr, 1u << 20);
    void* storage2 = nullptr;
    ASSERT_EQ(weft_thread_create_inplace(
                  &t, &attr, [](void*) -> void* { return nullptr; }, 64 * 1024, &storage2, nullptr),
              0)
        << "a bigger stack allows more storage";
    ASSERT_EQ(weft_thread_start(t), 0);
    EXPECT_EQ(weft_thread_join_inplace(t, nullptr, nullptr), 0);
}

TEST_P(Thread, inplace_release_runs_when_detached_thread_ends) {
    static std::atomic<int> released;
    released = 0;
    weft_thread_t t;
    void* storage = nullptr;
    ASSERT_EQ(
        weft_thread_create_inplace(
            &t, nullptr, [](void*) -> void* { return nullptr; }, 64, &storage, [](void*) { released.fetch_add(1); }),
        0);
    ASSERT_EQ(weft_thread_detach(t), 0);
    ASSERT_EQ(weft_thread_start(t), 0);
    wt::yield_until([&] { return released.load() == 1; });
}

TEST_P(Thread, inplace_join_passes_through_exit_value_path) {
    weft_thread_t t;
    void* storage = nullptr;
    ASSERT_EQ(weft_thread_create_inplace(
                  &t, nullptr, [](void* s) -> void* { return s; }, 64, &storage, nullptr),
              0);
    ASSERT_EQ(weft_thread_start(t), 0);
    EXPECT_EQ(weft_thread_start(WEFT_THREAD_NULL), ESRCH);
    EXPECT_EQ(weft_thread_join_inplace(WEFT_THREAD_NULL, nullptr, nullptr), ESRCH);
    EXPECT_EQ(weft_thread_join_inplace(t, nullptr, nullptr), 0);
}

TEST_P(Thread, many_threads_all_joined) {
    // 500 under TSan (a thread's creation costs it about a millisecond): still
    // several times what the stack and handle caches hold (64).
    const int n = wt::tsan ? 500 : 2000;
    std::vector<weft_thread_t> ts(n);
    std::atomic<int> ran{0};
    for (int i = 0; i < n; ++i) ts[i] = wt::go([&] { ran.fetch_add(1, std::memory_order_relaxed); });
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(ran.load(), n);
    weft_stats_t s;
    ASSERT_EQ(weft_stats_get(&s), 0);
    EXPECT_EQ(s.threads_live, 1u);
}

// --- stale handles ------------------------------------------------------------------
// A handle whose thread was joined, or detached and ended, names nothing: every
// call on it returns ESRCH (weft_thread_id 0) and never reaches the thread that
// reuses its storage.

// Every handle call on `stale`, each expected to fail without effect.
void expect_stale(weft_thread_t stale) {
    void* r = reinterpret_cast<void*>(std::uintptr_t(0x5ca1ab1e));
    EXPECT_EQ(weft_thread_join(stale, &r), ESRCH);
    EXPECT_EQ(r, reinterpret_cast<void*>(std::uintptr_t(0x5ca1ab1e))) << "a failed join must not write *retval";
    EXPECT_EQ(weft_thread_join_inplace(stale, nullptr, nullptr), ESRCH);
    EXPECT_EQ(weft_thread_detach(stale), ESRCH);
    EXPECT_EQ(weft_thread_start(stale), ESRCH);
    EXPECT_EQ(weft_thread_setname(stale, "stale"), ESRCH);
    char buf[WEFT_THREAD_NAME_MAX];
    EXPECT_EQ(weft_thread_getname(stale, buf, sizeof buf), ESRCH);
    EXPECT_EQ(weft_thread_id(stale), 0u);
    EXPECT_FALSE(weft_thread_equal(stale, weft_thread_self()));
}

TEST_P(Thread, second_join_is_esrch) {
    weft_thread_t t;
    ASSERT_EQ(weft_thread_create(&t, nullptr, &return_arg_plus_one, reinterpret_cast<void*>(6)), 0);
    void* r = nullptr;
    ASSERT_EQ(weft_thread_join(t, &r), 0);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(r), 7u);
    expect_stale(t);
}

TEST_P(Thread, detach_after_join_is_esrch) {
    weft_thread_t t = wt::go([] {});
    wt::join(t);
    EXPECT_EQ(weft_thread_detach(t), ESRCH);
    EXPECT_EQ(weft_thread_join(t, nullptr), ESRCH);
}

TEST_P(Thread, join_after_a_detached_thread_ended_is_esrch) {
    // The release callback runs when the thread's resources go back, after its
    // handle has been retired: from then on the handle is stale.
    static std::atomic<int> released;
    released = 0;
    weft_thread_t t;
    void* storage = nullptr;
    ASSERT_EQ(weft_thread_create_inplace(
                  &t, nullptr, [](void*) -> void* { return nullptr; }, 64, &storage,
                  [](void*) { released.fetch_add(1); }),
              0);
    ASSERT_EQ(weft_thread_detach(t), 0);
    ASSERT_EQ(weft_thread_start(t), 0);
    ASSERT_TRUE(wt::yield_until([&] { return released.load() == 1; }));
    expect_stale(t);
}

TEST_P(Thread, handles_of_a_created_detached_thread_go_stale_when_it_ends) {
    static std::atomic<int> released;
    released = 0;
    weft_attr_t attr;
    weft_attr_init(&attr);
    ASSERT_EQ(weft_attr_setdetachstate(&attr, WEFT_CREATE_DETACHED), 0);
    weft_thread_t t;
    void* storage = nullptr;
    ASSERT_EQ(weft_thread_create_inplace(
                  &t, &attr, [](void*) -> void* { return nullptr; }, 64, &storage,
                  [](void*) { released.fetch_add(1); }),
              0);
    EXPECT_EQ(weft_thread_join(t, nullptr), EINVAL) << "alive and detached: Pthreads' EINVAL";
    ASSERT_EQ(weft_thread_start(t), 0);
    ASSERT_TRUE(wt::yield_until([&] { return released.load() == 1; }));
    expect_stale(t);
}

// A thread waiting on a semaphore until released, then returning a value in
// its in-place storage.
struct parked_body {
    static void* run(void* storage) {
        auto* self = static_cast<parked_body*>(storage);
        self->started.store(1);
        weft_sem_wait(self->go_on);
        return reinterpret_cast<void*>(self->value);
    }
    weft_sem_t* go_on;
    std::uintptr_t value;
    std::atomic<int> started{0};
};

// Creates (without starting) parked in-place threads until one gets the
// storage at `wanted` (the stack pool hands back the stack a join just freed),
// keeping the others, unstarted, in `others` so that each try takes another
// stack. Returns that thread, its body in *body.
weft_thread_t create_at(void* wanted, weft_sem_t* go_on, std::vector<weft_thread_t>* others, parked_body** body) {
    for (int attempt = 0; attempt < 256; ++attempt) {
        weft_thread_t t = WEFT_THREAD_NULL;
        void* storage = nullptr;
        if (weft_thread_create_inplace(&t, nullptr, &parked_body::run, sizeof(parked_body), &storage, nullptr) != 0)
            return WEFT_THREAD_NULL;
        *body = new (storage) parked_body{go_on, 2};
        if (storage == wanted) return t;
        others->push_back(t);
    }
    return WEFT_THREAD_NULL;
}

TEST_P(Thread, stale_handle_never_reaches_the_thread_that_reuses_its_storage) {
    weft_sem_t go_on;
    ASSERT_EQ(weft_sem_init(&go_on, 0), 0);
    weft_thread_t old_t;
    void* old_storage = nullptr;
    ASSERT_EQ(weft_thread_create_inplace(&old_t, nullptr, &parked_body::run, sizeof(parked_body), &old_storage,
                                         nullptr),
              0);
    new (old_storage) parked_body{&go_on, 1};
    ASSERT_EQ(weft_thread_start(old_t), 0);
    ASSERT_EQ(weft_sem_post(&go_on), 0);
    void* old_r = nullptr;
    ASSERT_EQ(weft_thread_join(old_t, &old_r), 0);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(old_r), 1u);

    // A live thread on the same storage (the same stack, the same control block).
    std::vector<weft_thread_t> others;
    parked_body* body = nullptr;
    weft_thread_t t = create_at(old_storage, &go_on, &others, &body);
    ASSERT_NE(t, WEFT_THREAD_NULL) << "the stack pool never handed the joined thread's stack back";
    ASSERT_EQ(weft_thread_setname(t, "new"), 0);
    ASSERT_EQ(weft_thread_start(t), 0);
    ASSERT_TRUE(wt::yield_until([&] { return body->started.load() == 1; }));

    EXPECT_FALSE(weft_thread_equal(old_t, t));
    // Detach before join: a runtime that let the stale handle through would mark
    // the new thread detached, and the join would then fail at once instead of
    // hanging on that thread.
    EXPECT_EQ(weft_thread_detach(old_t), ESRCH);
    EXPECT_EQ(weft_thread_setname(old_t, "stale"), ESRCH);
    EXPECT_EQ(weft_thread_join(old_t, nullptr), ESRCH);
    EXPECT_EQ(weft_thread_id(old_t), 0u);

    // The new thread is untouched: still its name, still joinable, its own result.
    char name[WEFT_THREAD_NAME_MAX] = "?";
    EXPECT_EQ(weft_thread_getname(t, name, sizeof name), 0);
    EXPECT_STREQ(name, "new");
    EXPECT_NE(weft_thread_id(t), 0u);
    ASSERT_EQ(weft_sem_post(&go_on), 0);
    void* r = nullptr;
    EXPECT_EQ(weft_thread_join(t, &r), 0);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(r), 2u);
    for (weft_thread_t o : others) {
        ASSERT_EQ(weft_thread_start(o), 0);
        ASSERT_EQ(weft_sem_post(&go_on), 0);
        EXPECT_EQ(weft_thread_join(o, nullptr), 0);
    }
}

TEST_P(Thread, main_is_neither_joinable_nor_detachable) {
    weft_thread_t main_t = weft_thread_self();
    EXPECT_EQ(wt::on_other_thread([&] { return weft_thread_join(main_t, nullptr); }), EINVAL);
    EXPECT_EQ(wt::on_other_thread([&] { return weft_thread_detach(main_t); }), EINVAL);
    EXPECT_EQ(weft_thread_id(main_t), 1u) << "main's handle is still valid";
}

// Two weft threads race to join or detach each target: one wins (0), the other
// gets EINVAL (claimed) or ESRCH (already recycled), and nothing else happens:
// every target's result is collected exactly once, no thread is touched twice.
TEST_P(Thread, racing_joins_and_detaches_have_one_winner) {
    constexpr int rounds = 300;
    std::atomic<int> collected{0}, detached{0}, refused{0}, other{0};
    for (int i = 0; i < rounds; ++i) {
        weft_thread_t target = wt::go([] { weft_thread_yield(); });
        std::atomic<int> ready{0};
        auto racer = [&](bool join) {
            ready.fetch_add(1);
            while (ready.load() < 2) weft_thread_yield();
            int rc = join ? weft_thread_join(target, nullptr) : weft_thread_detach(target);
            if (rc == 0) (join ? collected : detached).fetch_add(1);
            else if (rc == EINVAL || rc == ESRCH) refused.fetch_add(1);
            else other.fetch_add(1);
        };
        weft_thread_t a = wt::go([&] { racer(true); });
        weft_thread_t b = wt::go([&] { racer(i % 2 == 0); });
        wt::join(a);
        wt::join(b);
    }
    EXPECT_EQ(collected.load() + detached.load(), rounds);
    EXPECT_EQ(refused.load(), rounds);
    EXPECT_EQ(other.load(), 0);
    weft_stats_t st{};
    EXPECT_TRUE(wt::yield_until([&] { return weft_stats_get(&st) == 0 && st.threads_live == 1; }));
}

// A handle kept across weft_finalize and weft_init names nothing in the new runtime.
TEST(ThreadRuntimes, a_handle_from_an_earlier_runtime_is_stale) {
    ASSERT_EQ(weft_is_initialized(), 0);
    weft_config_t cfg = wt::config(1, "fifo");
    ASSERT_EQ(weft_init(&cfg), 0);
    weft_thread_t old_t = wt::go([] {});
    wt::join(old_t);
    ASSERT_EQ(weft_finalize(), 0);
    EXPECT_EQ(weft_thread_join(old_t, nullptr), ESRCH) << "no runtime";
    ASSERT_EQ(weft_init(&cfg), 0);
    weft_sem_t go_on;
    ASSERT_EQ(weft_sem_init(&go_on, 0), 0);
    weft_thread_t t = wt::go([&] { weft_sem_wait(&go_on); });
    EXPECT_FALSE(weft_thread_equal(old_t, t));
    EXPECT_EQ(weft_thread_detach(old_t), ESRCH);
    EXPECT_EQ(weft_thread_join(old_t, nullptr), ESRCH);
    weft_sem_post(&go_on);
    EXPECT_EQ(weft_thread_join(t, nullptr), 0);
    ASSERT_EQ(weft_finalize(), 0);
}

}  // namespace
