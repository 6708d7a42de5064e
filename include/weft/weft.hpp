// weft.hpp — the C++ API of weft: thin RAII over the C API of weft.h.
//
//   weft::runtime rt({.workers = 2});            // or nothing: first use starts it
//   auto t = weft::spawn([](int x) { return x * 2; }, 21);
//   int v = t.join();                            // 42; rethrows what the thread threw
//
// Threads keep their closure and result on their own stack
// (weft_thread_create_inplace), so spawning allocates nothing.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <utility>

#include "weft/weft.h"

namespace weft {
inline namespace v0 {

// Thrown by the C++ API when a C call fails; code() holds the errno value.
class error : public std::system_error {
public:
    error(int code, const char* what) : std::system_error(code, std::generic_category(), what) {}
};

}  // namespace v0

// The templates' own helpers: weft::detail::d0 (inline), beside, not inside,
// the library's weft::detail, so that one name means one namespace everywhere.
namespace detail {
inline namespace d0 {
inline void check(int rc, const char* what) {
    if (rc != 0) throw error(rc, what);
}

// What a spawned thread keeps on its own stack: the closure until it has run,
// then the result or the exception. Only the thread, its joiner (collect) and
// the release when its resources go back touch it: a task keeps no pointer
// into it, so a task whose handle went stale never writes into a stack that
// another thread now uses.
template <class R, class F, class... Args>
struct spawn_state {
    using result_t = std::conditional_t<std::is_void_v<R>, char, R>;
    std::optional<std::tuple<std::decay_t<F>, std::decay_t<Args>...>> closure;
    std::optional<result_t> value;
    std::exception_ptr exception;

    static void* run(void* self) {
        auto* s = static_cast<spawn_state*>(self);
        if (!s->closure) return nullptr;  // building the closure threw; spawn rethrows
        try {
            if constexpr (std::is_void_v<R>) {
                std::apply([](auto&... a) { std::invoke(std::move(a)...); }, *s->closure);
                s->value.emplace('\0');
            } else {
                s->value.emplace(std::apply([](auto&... a) { return std::invoke(std::move(a)...); }, *s->closure));
            }
        } catch (...) {
            s->exception = std::current_exception();
        }
        // Captured arguments die when the thread ends, as with std::thread.
        s->closure.reset();
        return nullptr;
    }
    static void release(void* self) {
        auto* s = static_cast<spawn_state*>(self);
        // collect() takes the exception; one left here had nobody to join it
        // (the thread was detached): it ends the program, as with std::thread.
        if (s->exception) std::terminate();
        s->~spawn_state();
    }
};

template <class R>
struct spawn_collect {
    std::optional<std::conditional_t<std::is_void_v<R>, char, R>> value;
    std::exception_ptr exception;
};

template <class R, class State>
void collect(void* storage, void* ctx) {
    auto* s = static_cast<State*>(storage);
    auto* out = static_cast<spawn_collect<R>*>(ctx);
    out->exception = std::move(s->exception);
    s->exception = nullptr;
    if (s->value) out->value.emplace(std::move(*s->value));
}
}  // namespace d0
}  // namespace detail

inline namespace v0 {

// Options for a thread (weft_attr_t).
struct thread_options {
    std::size_t stack_size = 0;  // 0: the runtime default (WEFT_STACK_SIZE)
    const char* name = nullptr;
};

// A joinable weft thread returning R. Movable, not copyable. join() returns the
// value or rethrows the exception the thread threw. Destroying a joinable task
// joins it (discarding its result), like std::jthread.
template <class R>
class task {
public:
    task() = default;
    task(task&& o) noexcept : handle_(std::exchange(o.handle_, WEFT_THREAD_NULL)), collect_(o.collect_) {}
    task& operator=(task&& o) noexcept {
        if (this != &o) {
            reset();
            handle_ = std::exchange(o.handle_, WEFT_THREAD_NULL);
            collect_ = o.collect_;
        }
        return *this;
    }
    task(const task&) = delete;
    task& operator=(const task&) = delete;
    ~task() { reset(); }

    bool joinable() const noexcept { return handle_ != WEFT_THREAD_NULL; }
    weft_thread_t native_handle() const noexcept { return handle_; }
    std::uint64_t id() const noexcept { return weft_thread_id(handle_); }

    R join() {
        if (!joinable()) throw error(EINVAL, "weft::task::join: not joinable");
        detail::spawn_collect<R> out;
        weft_thread_t h = std::exchange(handle_, WEFT_THREAD_NULL);
        detail::check(weft_thread_join_inplace(h, collect_, &out), "weft_thread_join");
        if (out.exception) std::rethrow_exception(out.exception);
        if constexpr (!std::is_void_v<R>) return std::move(*out.value);
    }

    // Lets the thread run on its own; an exception escaping it then terminates
    // the program (as with std::thread).
    void detach() {
        if (!joinable()) throw error(EINVAL, "weft::task::detach: not joinable");
        detail::check(weft_thread_detach(std::exchange(handle_, WEFT_THREAD_NULL)), "weft_thread_detach");
    }

private:
    template <class F, class... Args>
    friend auto spawn_with(const thread_options&, F&&, Args&&...)
        -> task<std::invoke_result_t<std::decay_t<F>, std::decay_t<Args>...>>;

    void reset() noexcept {
        if (handle_ != WEFT_THREAD_NULL) {
            detail::spawn_collect<R> ignored;
            (void)weft_thread_join_inplace(std::exchange(handle_, WEFT_THREAD_NULL), collect_, &ignored);
        }
    }

    weft_thread_t handle_ = WEFT_THREAD_NULL;
    void (*collect_)(void*, void*) = nullptr;
};

// Starts f(args...) on a new weft thread.
template <class F, class... Args>
auto spawn_with(const thread_options& opts, F&& f, Args&&... args)
    -> task<std::invoke_result_t<std::decay_t<F>, std::decay_t<Args>...>> {
    using R = std::invoke_result_t<std::decay_t<F>, std::decay_t<Args>...>;
    using state = detail::spawn_state<R, F, Args...>;
    weft_attr_t attr;
    weft_attr_init(&attr);
    if (opts.stack_size != 0) detail::check(weft_attr_setstacksize(&attr, opts.stack_size), "weft::spawn");
    attr.name = opts.name;
    void* storage = nullptr;
    task<R> t;
    detail::check(weft_thread_create_inplace(&t.handle_, &attr, &state::run, sizeof(state), &storage,
                                             &state::release),
                  "weft::spawn");
    auto* s = new (storage) state;
    t.collect_ = &detail::collect<R, state>;
    try {
        s->closure.emplace(std::forward<F>(f), std::forward<Args>(args)...);
    } catch (...) {
        // The thread exists but must not run a closure: start it empty, reap it.
        (void)weft_thread_start(t.handle_);
        t.reset();
        throw;
    }
    detail::check(weft_thread_start(t.handle_), "weft::spawn");
    return t;
}

template <class F, class... Args>
auto spawn(F&& f, Args&&... args) {
    return spawn_with(thread_options{}, std::forward<F>(f), std::forward<Args>(args)...);
}

// A std::thread-shaped weft thread (void result). join() rethrows.
class thread {
public:
    thread() = default;
    template <class F, class... Args, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, thread>>>
    explicit thread(F&& f, Args&&... args)
        : task_(spawn([fn = std::forward<F>(f)](auto&&... a) mutable { (void)std::invoke(fn, a...); },
                      std::forward<Args>(args)...)) {}
    thread(thread&&) noexcept = default;
    thread& operator=(thread&&) noexcept = default;

    bool joinable() const noexcept { return task_.joinable(); }
    void join() { task_.join(); }
    void detach() { task_.detach(); }
    std::uint64_t get_id() const noexcept { return task_.id(); }
    weft_thread_t native_handle() const noexcept { return task_.native_handle(); }

private:
    task<void> task_;
};

// Starts the runtime for a scope (weft_init / weft_finalize).
struct config {
    int workers = 0;
    const char* sched = nullptr;
    std::size_t stack_size = 0;
    std::optional<bool> stats = std::nullopt;  // true/false win over WEFT_STATS; empty: WEFT_STATS decides
    bool measure = false;  // work and span (weft_stats_t.work_ns / span_ns), pruned forks counted
    const char* adapt = nullptr;  // "schedstat" | "asat" | "off"; null: WEFT_ADAPT decides (weft_adapt_get)
};

class runtime {
public:
    runtime() : runtime(config{}) {}
    explicit runtime(const config& c) {
        int stats = !c.stats ? WEFT_CONFIG_UNSET : *c.stats ? WEFT_CONFIG_ON : WEFT_CONFIG_OFF;
        weft_config_t cfg{c.workers, c.sched, c.stack_size, stats, c.measure ? 1 : 0, c.adapt};
        detail::check(weft_init(&cfg), "weft_init");
    }
    ~runtime() { (void)weft_finalize(); }
    runtime(const runtime&) = delete;
    runtime& operator=(const runtime&) = delete;
};

namespace this_thread {
inline void yield() noexcept { (void)weft_thread_yield(); }
inline std::uint64_t get_id() noexcept { return weft_thread_id(weft_thread_self()); }
template <class Rep, class Period>
void sleep_for(const std::chrono::duration<Rep, Period>& d) {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
    (void)weft_sleep_ns(ns > 0 ? static_cast<std::uint64_t>(ns) : 0);
}
}  // namespace this_thread

}  // namespace v0

namespace detail {
inline namespace d0 {
inline timespec to_realtime(std::chrono::system_clock::time_point tp) {
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(tp.time_since_epoch()).count();
    if (ns < 0) ns = 0;
    return timespec{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
}
template <class Clock, class Duration>
timespec to_realtime(const std::chrono::time_point<Clock, Duration>& tp) {
    return to_realtime(std::chrono::system_clock::now() +
                       std::chrono::duration_cast<std::chrono::system_clock::duration>(tp - Clock::now()));
}
}  // namespace d0
}  // namespace detail

inline namespace v0 {

// Lockable (usable with std::lock_guard, std::unique_lock, std::scoped_lock).
class mutex {
public:
    mutex() noexcept = default;
    mutex(const mutex&) = delete;
    mutex& operator=(const mutex&) = delete;
    void lock() { detail::check(weft_mutex_lock(&m_), "weft_mutex_lock"); }
    bool try_lock() noexcept { return weft_mutex_trylock(&m_) == 0; }
    void unlock() { detail::check(weft_mutex_unlock(&m_), "weft_mutex_unlock"); }
    template <class Rep, class Period>
    bool try_lock_for(const std::chrono::duration<Rep, Period>& d) {
        return try_lock_until(std::chrono::steady_clock::now() + d);
    }
    template <class Clock, class Duration>
    bool try_lock_until(const std::chrono::time_point<Clock, Duration>& tp) {
        timespec ts = detail::to_realtime(tp);
        int rc = weft_mutex_timedlock(&m_, &ts);
        if (rc == ETIMEDOUT) return false;
        detail::check(rc, "weft_mutex_timedlock");
        return true;
    }
    weft_mutex_t* native_handle() noexcept { return &m_; }

protected:
    explicit mutex(int type) noexcept { m_.kind_ = static_cast<std::uint32_t>(type); }

private:
    weft_mutex_t m_ = WEFT_MUTEX_INITIALIZER;
};

class recursive_mutex : public mutex {
public:
    recursive_mutex() noexcept : mutex(WEFT_MUTEX_RECURSIVE) {}
};

// Waits with std::unique_lock<weft::mutex>.
class condition_variable {
public:
    condition_variable() noexcept = default;
    condition_variable(const condition_variable&) = delete;
    condition_variable& operator=(const condition_variable&) = delete;
    void notify_one() noexcept { (void)weft_cond_signal(&c_); }
    void notify_all() noexcept { (void)weft_cond_broadcast(&c_); }
    void wait(std::unique_lock<mutex>& lk) {
        detail::check(weft_cond_wait(&c_, lk.mutex()->native_handle()), "weft_cond_wait");
    }
    template <class Pred>
    void wait(std::unique_lock<mutex>& lk, Pred pred) {
        while (!pred()) wait(lk);
    }
    template <class Clock, class Duration>
    std::cv_status wait_until(std::unique_lock<mutex>& lk, const std::chrono::time_point<Clock, Duration>& tp) {
        timespec ts = detail::to_realtime(tp);
        int rc = weft_cond_timedwait(&c_, lk.mutex()->native_handle(), &ts);
        if (rc == ETIMEDOUT) return std::cv_status::timeout;
        detail::check(rc, "weft_cond_timedwait");
        return std::cv_status::no_timeout;
    }
    template <class Clock, class Duration, class Pred>
    bool wait_until(std::unique_lock<mutex>& lk, const std::chrono::time_point<Clock, Duration>& tp, Pred pred) {
        while (!pred())
            if (wait_until(lk, tp) == std::cv_status::timeout) return pred();
        return true;
    }
    template <class Rep, class Period>
    std::cv_status wait_for(std::unique_lock<mutex>& lk, const std::chrono::duration<Rep, Period>& d) {
        return wait_until(lk, std::chrono::steady_clock::now() + d);
    }
    template <class Rep, class Period, class Pred>
    bool wait_for(std::unique_lock<mutex>& lk, const std::chrono::duration<Rep, Period>& d, Pred pred) {
        return wait_until(lk, std::chrono::steady_clock::now() + d, std::move(pred));
    }
    weft_cond_t* native_handle() noexcept { return &c_; }

private:
    weft_cond_t c_ = WEFT_COND_INITIALIZER;
};

class counting_semaphore {
public:
    explicit counting_semaphore(unsigned int initial) { detail::check(weft_sem_init(&s_, initial), "weft_sem_init"); }
    counting_semaphore(const counting_semaphore&) = delete;
    counting_semaphore& operator=(const counting_semaphore&) = delete;
    void acquire() { detail::check(weft_sem_wait(&s_), "weft_sem_wait"); }
    bool try_acquire() noexcept { return weft_sem_trywait(&s_) == 0; }
    void release(unsigned int n = 1) {
        for (unsigned int i = 0; i < n; ++i) detail::check(weft_sem_post(&s_), "weft_sem_post");
    }

private:
    weft_sem_t s_;
};

class barrier {
public:
    explicit barrier(unsigned int count) { detail::check(weft_barrier_init(&b_, count), "weft_barrier_init"); }
    barrier(const barrier&) = delete;
    barrier& operator=(const barrier&) = delete;
    // True for exactly one of the threads of each round.
    bool arrive_and_wait() { return weft_barrier_wait(&b_) == WEFT_BARRIER_SERIAL_THREAD; }

private:
    weft_barrier_t b_;
};

// SharedMutex (std::shared_lock / std::unique_lock).
class shared_mutex {
public:
    shared_mutex() noexcept = default;
    shared_mutex(const shared_mutex&) = delete;
    shared_mutex& operator=(const shared_mutex&) = delete;
    void lock() { detail::check(weft_rwlock_wrlock(&rw_), "weft_rwlock_wrlock"); }
    bool try_lock() noexcept { return weft_rwlock_trywrlock(&rw_) == 0; }
    void unlock() { detail::check(weft_rwlock_unlock(&rw_), "weft_rwlock_unlock"); }
    void lock_shared() { detail::check(weft_rwlock_rdlock(&rw_), "weft_rwlock_rdlock"); }
    bool try_lock_shared() noexcept { return weft_rwlock_tryrdlock(&rw_) == 0; }
    void unlock_shared() { unlock(); }

private:
    weft_rwlock_t rw_ = WEFT_RWLOCK_INITIALIZER;
};

// The runtime's statistics (weft_stats_get).
inline weft_stats_t stats() {
    weft_stats_t s{};
    detail::check(weft_stats_get(&s), "weft_stats_get");
    return s;
}

}  // namespace v0
}  // namespace weft

// The umbrella: one header per layer.
#include "weft/allocator.hpp"  // weft::allocator<T> (weft_malloc: heap accounting, dfs quota)
#include "weft/filament.hpp"   // filaments: fork_join, parallel_for, parallel_reduce, pool sets
