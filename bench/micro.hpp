// The micro-benchmark protocols, shared by weft, Pthreads and the peers.
//
// `weft-bench micro` (bench/micro.cpp) runs a set of micro operations, each a
// `micro_op` in a small registry, so that a peer (bench/micro_boost.cpp, built
// only where Boost.Fiber is found) adds its operations without micro.cpp
// naming it. The operations of a family of threads are the same four
// protocols, written once here as templates over a *family*:
//
//   struct Family {
//     static constexpr char const* name;       // "weft", "pthread", "boost_fiber"
//     struct mutex_type;  static void lock(mutex_type&), unlock(mutex_type&);
//     struct cond_type;   static void wait(cond_type&, mutex_type&), signal(cond_type&);
//     static void yield();
//     // Runs a() and b() on two new threads of the family, both on CPU `cpu`,
//     // and returns when both have finished.
//     template <class A, class B> static void run_pair(A& a, B& b, int cpu);
//   };
//
// Every protocol runs its two threads on ONE CPU (one weft worker; kernel
// threads pinned to the same CPU; fibers of one kernel thread pinned there),
// so each hand-off is a real switch from one thread to the other.
// docs/bench.md defines each figure; the definitions are repeated here.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "harness.hpp"

namespace weft::bench::micro {

// The outcome of one timed run of an operation.
struct op_result {
    double elapsed_ns = 0;  // wall time of the timed part
    std::uint64_t ops = 0;  // operations in it (the figure is elapsed_ns / ops)
    std::string warning{};  // non-empty if the run did not behave as defined
    // Further figures of the run, reported as ID_NAME (medians over rounds).
    std::vector<std::pair<std::string, double>> extra{};
};

struct micro_op {
    std::string id{};      // "yield", "pthread_yield", "boost_fiber_yield": the figure is ID_ns
    std::string kind{};    // "create_join", "yield", "mutex_handoff", "cond_pingpong"
    std::string family{};  // "weft", "pthread", "boost_fiber"
    std::string unit{};    // what one operation is, for tables: "create+join"
    bool kernel = false;   // uses kernel threads: sized by --kernel-iters, not --iters
    bool hosted = false;   // must run on a dedicated kernel thread pinned to the CPU
    int order = 0;         // position in tables and in each round
    // The id of the operation this one is judged against by a paired ratio:
    // in each round both run back to back, alternating which goes first, and
    // the figure of record is the median over rounds of this one's ns over
    // that one's (micro.cpp, "paired ratios"). Empty: no pairing.
    std::string paired_with{};
    // Performs the operation `iters` times (the protocol decides how many
    // operations that is, reported in op_result::ops). `cpu` is the CPU the
    // measurement is pinned to.
    std::function<op_result(std::uint64_t iters, int cpu)> run{};
};

// Registers an operation at static-initialisation time.
struct op_registrar {
    explicit op_registrar(micro_op op);
};
std::vector<micro_op const*> ops();  // sorted by order, then family

// The families of threads in table order; "weft" is the subject, the others
// the peers it is compared with. A peer not listed here still shows, after
// these.
inline constexpr char const* families[] = {"weft", "pthread", "boost_fiber"};

// ---------------------------------------------------------------------------
// Protocols
// ---------------------------------------------------------------------------

// A two-party barrier built from the family's own mutex and condition
// variable, used to line the two threads up before the clock starts.
template <class F>
struct pair_barrier {
    typename F::mutex_type m;
    typename F::cond_type c;
    int arrived = 0;

    void wait() {
        F::lock(m);
        if (++arrived == 2) {
            F::signal(c);
        } else {
            while (arrived < 2) F::wait(c, m);
        }
        F::unlock(m);
    }
};

// Start and end times of the two threads; the timed interval runs from the
// first thread's start to the last thread's end.
struct pair_clock {
    std::uint64_t t0[2] = {0, 0};
    std::uint64_t t1[2] = {0, 0};
    double elapsed_ns() const {
        std::uint64_t const start = t0[0] < t0[1] ? t0[0] : t0[1];
        std::uint64_t const end = t1[0] > t1[1] ? t1[0] : t1[1];
        return static_cast<double>(end - start);
    }
};

// yield: two threads each call yield() n times. Operations: 2n yields; each
// one is a switch to the other thread (checked: the run warns when fewer than
// 90% of the yields alternated between the two threads).
template <class F>
struct yield_state {
    std::uint64_t n = 0;
    pair_barrier<F> bar;
    pair_clock clk;
    // Who ran last; relaxed is enough: on one CPU the switch itself orders,
    // and the figure only needs an approximate count.
    std::atomic<int> last{-1};
    std::uint64_t switches[2] = {0, 0};
};

// Both threads run this one out-of-line loop, as threads of one function do,
// so both call yield() from the same site and return to the same addresses.
// With a copy inlined into each thread's lambda, the two return addresses
// differ and every switch also pays a mispredicted return (the CPU's return
// predictor holds the other thread's), which the shared loop avoids.
template <class F>
[[gnu::noinline]] void yield_loop(yield_state<F>& st, int me) {
    st.bar.wait();
    std::uint64_t s = 0;
    st.clk.t0[me] = now_ns();
    for (std::uint64_t i = 0; i < st.n; ++i) {
        F::yield();
        if (st.last.load(std::memory_order_relaxed) != me) {
            st.last.store(me, std::memory_order_relaxed);
            ++s;
        }
    }
    st.clk.t1[me] = now_ns();
    st.switches[me] = s;
}

template <class F>
op_result yield_pingpong(std::uint64_t n, int cpu) {
    yield_state<F> st;
    st.n = n;
    auto a = [&] { yield_loop(st, 0); };
    auto b = [&] { yield_loop(st, 1); };
    F::run_pair(a, b, cpu);
    op_result r{st.clk.elapsed_ns(), 2 * n, {}};
    std::uint64_t const seen = st.switches[0] + st.switches[1];
    if (n >= 10 && seen < (2 * n) * 9 / 10)
        r.warning = std::string(F::name) + " yield: only " + std::to_string(seen) + " of " + std::to_string(2 * n) +
                    " yields switched to the other thread";
    return r;
}

// mutex_handoff: a contended mutex handed from one thread to the other.
//
// A hand-off is: thread X unlocks a mutex that thread Y is blocked on, and Y
// returns from lock() owning it. To force strict alternation whatever the
// mutex's fairness (Pthreads and Boost.Fiber mutexes let the releasing thread
// take the lock again at once, so "lock; unlock" loops would hardly ever hand
// off), the protocol is a relay over three mutexes M0..M2 (no other
// synchronisation):
//
//   A starts holding M0, B holding M1 and M2; then, for k = 0 .. n-1,
//     A: lock(M[(k+1)%3]); unlock(M[k%3]);
//     B: unlock(M[(k+1)%3]); lock(M[k%3]);
//
// Every lock() names a mutex the other thread holds, so it blocks until the
// other thread unlocks it: each of the 2n lock() calls receives a hand-off.
// Operations: 2n hand-offs; per hand-off one unlock that wakes a waiter, one
// lock that blocks, and one switch.
template <class F>
op_result mutex_handoff(std::uint64_t n, int cpu) {
    typename F::mutex_type m[3];
    pair_barrier<F> bar;
    pair_clock clk;
    auto a = [&] {
        F::lock(m[0]);
        bar.wait();
        clk.t0[0] = now_ns();
        for (std::uint64_t k = 0; k < n; ++k) {
            F::lock(m[(k + 1) % 3]);
            F::unlock(m[k % 3]);
        }
        clk.t1[0] = now_ns();
        F::unlock(m[n % 3]);
    };
    auto b = [&] {
        F::lock(m[1]);
        F::lock(m[2]);
        bar.wait();
        clk.t0[1] = now_ns();
        for (std::uint64_t k = 0; k < n; ++k) {
            F::unlock(m[(k + 1) % 3]);
            F::lock(m[k % 3]);
        }
        clk.t1[1] = now_ns();
        for (std::uint64_t j = 0; j < 3; ++j)
            if (j != n % 3) F::unlock(m[j]);
    };
    F::run_pair(a, b, cpu);
    return {clk.elapsed_ns(), 2 * n, {}};
}

// cond_pingpong: a turn passed back and forth through one mutex and two
// condition variables. Thread i (0 or 1), n times:
//     lock(m); while (turn != i) wait(c[i], m); turn = 1 - i; signal(c[1 - i]); unlock(m);
// Operations: 2n one-way hand-offs (each passes the turn to the other thread,
// which wakes from its wait, relocks m and returns).
template <class F>
op_result cond_pingpong(std::uint64_t n, int cpu) {
    typename F::mutex_type m;
    typename F::cond_type c[2];
    int turn = 0;
    pair_barrier<F> bar;
    pair_clock clk;
    auto body = [&](int me) {
        bar.wait();
        clk.t0[me] = now_ns();
        for (std::uint64_t k = 0; k < n; ++k) {
            F::lock(m);
            while (turn != me) F::wait(c[me], m);
            turn = 1 - me;
            F::signal(c[1 - me]);
            F::unlock(m);
        }
        clk.t1[me] = now_ns();
    };
    auto a = [&] { body(0); };
    auto b = [&] { body(1); };
    F::run_pair(a, b, cpu);
    return {clk.elapsed_ns(), 2 * n, {}};
}

// Registers yield, mutex_handoff and cond_pingpong for family F under the
// ids PREFIX + kind ("" for weft, "pthread_", "boost_fiber_").
template <class F>
void register_pair_ops(std::string const& prefix, bool kernel, bool hosted, int order_base) {
    auto add = [&](char const* kind, char const* unit, int order, op_result (*fn)(std::uint64_t, int)) {
        op_registrar{micro_op{.id = prefix + kind,
                              .kind = kind,
                              .family = F::name,
                              .unit = unit,
                              .kernel = kernel,
                              .hosted = hosted,
                              .order = order_base + order,
                              .run = fn}};
    };
    add("yield", "switch", 1, &yield_pingpong<F>);
    add("mutex_handoff", "hand-off", 2, &mutex_handoff<F>);
    add("cond_pingpong", "one-way hand-off", 3, &cond_pingpong<F>);
}

}  // namespace weft::bench::micro
