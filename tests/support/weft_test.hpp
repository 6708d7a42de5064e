// Shared helpers of weft's GoogleTest suites (linked into every test binary as
// weft_test_support; public headers only, so the conformance binary can use it).
//
//   wt::runtime_fixture   a fixture that starts weft with a (sched, workers)
//                         parameter and stops it after the test, with a watchdog
//   wt::watchdog          aborts the process with a message if a test hangs
//   wt::realtime_in(...)  absolute CLOCK_REALTIME deadlines for the timed calls
//   wt::stress_scale()    how much to shrink stress sizes (sanitizers, env)
//   wt::run_child(...)    runs a program (usually /proc/self/exe) with extra
//                         environment, captures stdout/stderr, with a time limit
#pragma once

#include <gtest/gtest.h>

#include <sys/types.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/weft.h"

namespace wt {

// --- Build flavour ------------------------------------------------------------
#if defined(__SANITIZE_THREAD__)
inline constexpr bool tsan = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool tsan = true;
#else
inline constexpr bool tsan = false;
#endif
#else
inline constexpr bool tsan = false;
#endif

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool asan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool asan = true;
#else
inline constexpr bool asan = false;
#endif
#else
inline constexpr bool asan = false;
#endif

inline constexpr bool sanitized = tsan || asan;

// Factor (0 < f <= 1) applied to stress sizes: WEFT_STRESS_SCALE if set (a
// decimal number, e.g. 0.1), else 1 in plain builds, 0.3 under ASan and 0.02
// under TSan (which is 5-15x slower and keeps shadow state per fiber).
double stress_scale();
// n scaled by stress_scale(), at least `min`.
std::int64_t scaled(std::int64_t n, std::int64_t min = 1);

// EXPECT_TRUE(wt::contains(text, "needle")) prints both on failure.
inline ::testing::AssertionResult contains(const std::string& text, const std::string& needle) {
    if (text.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "\"" << needle << "\" not found in:\n" << text;
}

// --- Time -------------------------------------------------------------------
std::int64_t now_ns(clockid_t clock = CLOCK_MONOTONIC);
// An absolute deadline `d` from now on `clock` (CLOCK_REALTIME for every timed
// call except condition variables created with CLOCK_MONOTONIC).
timespec deadline_in(std::chrono::nanoseconds d, clockid_t clock = CLOCK_REALTIME);
inline timespec realtime_in(std::chrono::nanoseconds d) { return deadline_in(d, CLOCK_REALTIME); }
// A deadline that has already passed (1 s ago).
timespec realtime_past();

// --- Watchdog -----------------------------------------------------------------
// A kernel thread (not a weft thread: it never calls weft) that, unless
// disarmed within `limit`, prints "<what>: still running after N s (hung?)" to
// stderr and aborts the process. Every fixture arms one, so a hang fails fast
// with a message instead of waiting for ctest's timeout.
class watchdog {
public:
    watchdog(std::chrono::seconds limit, std::string what);
    ~watchdog();
    watchdog(const watchdog&) = delete;
    watchdog& operator=(const watchdog&) = delete;

private:
    struct state;
    state* s_;
};
// Default limit of a test: 60 s (90 s in sanitizer builds); ctest allows 120.
std::chrono::seconds default_test_limit();

// A weft_config_t with the given fields and every other field zero (the struct
// grows; aggregate initialisation with positional values would not compile
// warning-free under -Werror once it does).
inline weft_config_t config(int workers, const char* sched = nullptr, std::size_t stack_size = 0, int stats = 0) {
    weft_config_t c{};
    c.workers = workers;
    c.sched = sched;
    c.stack_size = stack_size;
    c.stats = stats;
    return c;
}

// --- Runtime fixture ------------------------------------------------------------
struct rt_param {
    const char* sched;
    int workers;
};
std::string rt_param_name(const ::testing::TestParamInfo<rt_param>& info);
// Every scheduler (fifo, lifo, dfs, ws) x the given worker counts: the
// synchronization primitives and the thread API must behave the same under
// each policy's order.
std::vector<rt_param> rt_params(std::vector<int> workers);
inline std::vector<rt_param> rt_params_all() { return rt_params({1, 2, 4}); }
inline std::vector<rt_param> rt_params_one_worker() { return rt_params({1}); }
inline std::vector<rt_param> rt_params_multi() { return rt_params({2, 4}); }

// Starts weft with GetParam() in SetUp and stops it in TearDown. Tests run on
// the main weft thread. WEFT_* variables that the environment of the test run
// may carry are ignored for the fields the parameter sets.
class runtime_fixture : public ::testing::TestWithParam<rt_param> {
protected:
    void SetUp() override;
    void TearDown() override;
    int workers() const { return GetParam().workers; }
    const char* sched() const { return GetParam().sched; }

private:
    watchdog* dog_ = nullptr;
};

// Same with a fixed config (1 worker, fifo unless changed in the constructor).
class single_runtime_fixture : public ::testing::Test {
protected:
    void SetUp() override;
    void TearDown() override;
    weft_config_t cfg_ = config(1, "fifo");

private:
    watchdog* dog_ = nullptr;
};

// --- Environment ---------------------------------------------------------------
// Sets (value != nullptr) or unsets a variable for the scope, then restores it.
class scoped_env {
public:
    scoped_env(const char* name, const char* value);
    ~scoped_env();
    scoped_env(const scoped_env&) = delete;
    scoped_env& operator=(const scoped_env&) = delete;

private:
    std::string name_;
    std::string old_;
    bool had_;
};

// --- Threads from lambdas (C API) ---------------------------------------------------
// Creates a weft thread running f() (f returns void or void*). Fails the test
// (and returns WEFT_THREAD_NULL) if creation fails.
template <class F>
weft_thread_t go(F f, const weft_attr_t* attr = nullptr) {
    auto* p = new F(std::move(f));
    weft_thread_t t = WEFT_THREAD_NULL;
    int rc = weft_thread_create(
        &t, attr,
        [](void* a) -> void* {
            // Moved to this thread's stack first: a body that ends with
            // weft_thread_exit never returns here, and must not leak the copy.
            auto* fp = static_cast<F*>(a);
            F fn(std::move(*fp));
            delete fp;
            if constexpr (std::is_same_v<decltype(fn()), void>) {
                fn();
                return nullptr;
            } else {
                return fn();
            }
        },
        p);
    if (rc != 0) {
        delete p;
        ADD_FAILURE() << "weft_thread_create failed: " << rc;
        return WEFT_THREAD_NULL;
    }
    return t;
}
// Joins t and returns its result (fails the test if join fails).
inline void* join(weft_thread_t t) {
    void* r = reinterpret_cast<void*>(std::uintptr_t(0xdead));
    int rc = weft_thread_join(t, &r);
    if (rc != 0) ADD_FAILURE() << "weft_thread_join failed: " << rc;
    return r;
}

// Runs f (returning int) on another weft thread, joins it, and returns f's
// result: "what does this call return when that thread makes it".
template <class F>
int on_other_thread(F f) {
    int rc = -12345;
    weft_thread_t t = go([&] { rc = f(); });
    join(t);
    return rc;
}
// Yields (weft) until pred() holds; fails after `limit` (then returns false).
template <class P>
bool yield_until(P pred, std::chrono::milliseconds limit = std::chrono::milliseconds(20000)) {
    std::int64_t end = now_ns() + std::chrono::duration_cast<std::chrono::nanoseconds>(limit).count();
    while (!pred()) {
        if (now_ns() > end) {
            ADD_FAILURE() << "condition not reached within " << limit.count() << " ms";
            return false;
        }
        weft_thread_yield();
    }
    return true;
}
// Lets the other ready weft threads of a one-worker runtime run until they
// block: yields a few times, then sleeps briefly (weft_sleep_ns), so that a
// thread made ready by a timer or another worker gets its turn too.
inline void settle() {
    for (int i = 0; i < 8; ++i) weft_thread_yield();
    weft_sleep_ns(2'000'000);
    for (int i = 0; i < 8; ++i) weft_thread_yield();
}

// A kernel thread (not a weft worker) whose join() does not block the calling
// worker: it waits with weft_sleep_ns until the thread has finished, so weft
// threads the kernel thread waits for can still run on a one-worker runtime.
class kthread {
public:
    template <class F>
    explicit kthread(F f)
        : t_([this, f = std::move(f)]() mutable {
              f();
              done_.store(true, std::memory_order_release);
          }) {}
    ~kthread() {
        if (t_.joinable()) join();
    }
    kthread(const kthread&) = delete;
    kthread& operator=(const kthread&) = delete;
    void join() {
        while (!done_.load(std::memory_order_acquire)) weft_sleep_ns(200'000);
        t_.join();
    }

private:
    std::atomic<bool> done_{false};
    std::thread t_;
};

// --- Child processes --------------------------------------------------------------
struct child_result {
    bool timed_out = false;  // still running at the limit (then killed with SIGKILL)
    bool exited = false;     // WIFEXITED
    int exit_code = -1;      // WEXITSTATUS
    int term_signal = 0;     // WTERMSIG when killed by a signal (other than our SIGKILL)
    std::string out;         // stdout
    std::string err;         // stderr
    double seconds = 0;      // wall time until it ended (or was killed)
};
// Runs `argv` (argv[0] = path) with `env` added to (or overriding) the current
// environment ("NAME=value"; "NAME" alone unsets it). Kills it with SIGKILL
// after `limit`. Output is captured through pipes.
child_result run_child(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                       std::chrono::milliseconds limit);
// The running binary (/proc/self/exe, resolved).
std::string self_exe();

// A mutex of the given type (WEFT_MUTEX_NORMAL/RECURSIVE/ERRORCHECK).
inline weft_mutex_t make_mutex(int type) {
    weft_mutexattr_t a;
    weft_mutexattr_init(&a);
    weft_mutexattr_settype(&a, type);
    weft_mutex_t m;
    weft_mutex_init(&m, &a);
    weft_mutexattr_destroy(&a);
    return m;
}

// A runtime of GetParam() workers (default policy) for each test: for suites
// parameterised by a worker count alone, named with worker_count_name.
class workers_fixture : public ::testing::TestWithParam<int> {
protected:
    void SetUp() override {
        weft_config_t cfg{};
        cfg.workers = GetParam();
        ASSERT_EQ(weft_init(&cfg), 0);
    }
    void TearDown() override { ASSERT_EQ(weft_finalize(), 0); }
};

// Names the instances of a suite parameterised by a worker count: "w1", "w2"...
// (Not "w" + to_string(..): GCC 12 warns there, -Wrestrict, a false positive.)
struct worker_count_name {
    std::string operator()(const ::testing::TestParamInfo<int>& info) const {
        std::string name = "w";
        name += std::to_string(info.param);
        return name;
    }
};

}  // namespace wt
