// weft-bench micro: one mutex contended by many threads, weft's and the
// kernel's together.
//
//   mutex_contended        12 weft threads on one weft_mutex_t
//   mutex_contended_mixed  8 weft threads and 4 kernel threads outside weft
//                          (plain pthreads calling weft_mutex_lock) on one
//                          weft_mutex_t
//   pthread_mutex_contended 12 pthreads on one pthread_mutex_t (the peer of
//                          the first)
// Each thread does n/12 iterations of: lock; ++counter; every 16th iteration
// yield inside the critical section (weft_thread_yield on a weft thread,
// sched_yield on a kernel thread); unlock. The yield makes the others find the
// mutex taken and queue even though every thread runs on the run's one CPU
// (the weft worker and the kernel threads are pinned there, as in the rest of
// micro). The figure is ns per lock/unlock pair, from the first thread's start
// to the last one's end; the run warns if the counter is wrong.
//
// A mutex that hands itself to its first waiter forms a lock convoy here:
// the receiver is not running (a kernel thread asleep on its futex, a weft
// thread not yet switched to), everyone else queues behind it, and every
// later lock goes through the queue (src/sync/mutex.cpp).
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <weft/weft.h>

#include "harness.hpp"
#include "micro.hpp"

namespace weft::bench::micro {
namespace {

constexpr int contenders = 12;
constexpr std::uint64_t yield_every = 16;

struct weft_lock {
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    void lock() { check(weft_mutex_lock(&m), "weft_mutex_lock"); }
    void unlock() { check(weft_mutex_unlock(&m), "weft_mutex_unlock"); }
};

struct pthread_lock {
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    void lock() { check(pthread_mutex_lock(&m), "pthread_mutex_lock"); }
    void unlock() { check(pthread_mutex_unlock(&m), "pthread_mutex_unlock"); }
};

template <class Lock>
struct contention {
    Lock mutex;
    std::uint64_t per_thread = 0;
    std::uint64_t counter = 0;
    std::vector<std::uint64_t> t0 = std::vector<std::uint64_t>(contenders, 0);
    std::vector<std::uint64_t> t1 = std::vector<std::uint64_t>(contenders, 0);
};

template <class Lock>
struct contender {
    contention<Lock>* st;
    int index;
    bool weft;
};

template <class Lock>
void* contend(void* arg) {
    auto* c = static_cast<contender<Lock>*>(arg);
    contention<Lock>& st = *c->st;
    st.t0[c->index] = now_ns();
    for (std::uint64_t k = 0; k < st.per_thread; ++k) {
        st.mutex.lock();
        ++st.counter;
        if (k % yield_every == yield_every - 1) {
            if (c->weft) check(weft_thread_yield(), "weft_thread_yield");
            else sched_yield();
        }
        st.mutex.unlock();
    }
    st.t1[c->index] = now_ns();
    return nullptr;
}

// Runs `kernel` kernel threads (inheriting the caller's one-CPU affinity) and
// contenders - kernel weft threads (on the run's one worker) on one Lock.
template <class Lock>
op_result contend_run(std::uint64_t n, int kernel, char const* what) {
    contention<Lock> st;
    st.per_thread = std::max<std::uint64_t>(1, n / contenders);
    std::vector<contender<Lock>> args;
    for (int i = 0; i < contenders; ++i) args.push_back({&st, i, i >= kernel});
    std::vector<pthread_t> ks(static_cast<std::size_t>(kernel));
    std::vector<weft_thread_t> ws;
    for (std::size_t i = 0; i < ks.size(); ++i)
        check(pthread_create(&ks[i], nullptr, &contend<Lock>, &args[i]), "pthread_create");
    for (std::size_t i = ks.size(); i < args.size(); ++i) {
        weft_thread_t t = WEFT_THREAD_NULL;
        check(weft_thread_create(&t, nullptr, &contend<Lock>, &args[i]), "weft_thread_create");
        ws.push_back(t);
    }
    for (auto t : ws) check(weft_thread_join(t, nullptr), "weft_thread_join");
    for (auto& k : ks) check(pthread_join(k, nullptr), "pthread_join");
    std::uint64_t const start = *std::min_element(st.t0.begin(), st.t0.end());
    std::uint64_t const end = *std::max_element(st.t1.begin(), st.t1.end());
    std::uint64_t const pairs = st.per_thread * contenders;
    op_result r{double(end - start), pairs, {}};
    if (st.counter != pairs) r.warning = std::string(what) + ": the counter is wrong (mutual exclusion broken)";
    return r;
}

op_result mutex_contended(std::uint64_t n, int) { return contend_run<weft_lock>(n, 0, "mutex_contended"); }
op_result mutex_contended_mixed(std::uint64_t n, int) {
    return contend_run<weft_lock>(n, 4, "mutex_contended_mixed");
}
op_result pthread_mutex_contended(std::uint64_t n, int) {
    return contend_run<pthread_lock>(n, contenders, "pthread_mutex_contended");
}

struct register_contended_ops {
    register_contended_ops() {
        op_registrar{micro_op{.id = "mutex_contended",
                              .kind = "mutex_contended",
                              .family = "weft",
                              .unit = "lock+unlock",
                              .order = 5,
                              .run = &mutex_contended}};
        op_registrar{micro_op{.id = "pthread_mutex_contended",
                              .kind = "mutex_contended",
                              .family = "pthread",
                              .unit = "lock+unlock",
                              .kernel = true,
                              .order = 5,
                              .run = &pthread_mutex_contended}};
        op_registrar{micro_op{.id = "mutex_contended_mixed",
                              .kind = "mutex_contended_mixed",
                              .family = "weft",
                              .unit = "lock+unlock",
                              .order = 6,
                              .run = &mutex_contended_mixed}};
    }
} const contended_ops;

}  // namespace
}  // namespace weft::bench::micro
