// filament.hpp — the C++ API of weft's filaments: stateless fine-grain
// parallelism (Lowenthal, Freeh & Andrews, "Efficient support for fine-grain parallelism on
// shared-memory machines"; docs/design/filaments.md).
//
//   long fib(int n) {                                   // fork at every call
//       if (n < 2) return n;
//       auto [a, b] = weft::join([&] { return fib(n - 1); }, [&] { return fib(n - 2); });
//       return a + b;
//   }
//   weft::parallel_for(weft::range2d<int>{1, n - 1, 1, n - 1}, [&](int i, int j) { ... });
//   double s = weft::parallel_reduce(weft::range<long>{0, n}, 0.0,
//                                    [&](long i, double& acc) { acc += x[i]; }, std::plus<>{});
//
//   weft::reduction<double, weft::maximum<>> maxdiff;   // one copy per worker
//   weft::pool_set jacobi([&](int i, int j) { ...; maxdiff.local() = std::max(maxdiff.local(), d); },
//                         [&] { ...; return maxdiff.reduce() < eps ? weft::next::done : weft::next::continue_; });
//   jacobi.add_pools(...);                              // then pool.add(i, j) per filament
//   weft::run(jacobi);
//
// Bodies are template parameters: the pool loop, the parallel_for loop and the
// pruned fork are inlined into your code (no call per filament; Lowenthal, Freeh & Andrews §3.1
// "inlining"). The runtime recognises pools that are dense 1-D or 2-D ranges
// and runs them as plain loops (§3.1 "pattern recognition"); forks become
// plain calls while every worker is busy (§3.2 "pruning").
//
// Exceptions: the first exception thrown by a filament reaches the caller of
// the region (the call to join, fork_join, parallel_for, parallel_reduce or
// run). Fork/join: the sibling of a throwing branch still completes if another
// worker has started it, and is skipped if not; iterative: the pools not yet
// started are skipped, the after function is not called again, and no body
// runs after the call returns.
//
// Contexts: any weft thread or external kernel thread (an external caller
// blocks while the workers run the region). A region started inside a filament
// joins the running region (fork/join, parallel_for, parallel_reduce) or runs
// on the calling worker alone (run of pool sets).
// Undefined: blocking in a filament on something only another filament of the
// same region would release (filaments are not preempted); a pool set in two
// regions at once.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/detail/fil_hunger.hpp"
#include "weft/detail/fil_pool_loops.hpp"
#include "weft/detail/filament_abi.hpp"
#include "weft/weft.h"
#include "weft/weft.hpp"

// The public names are in weft::v0 (inline: weft::join), the templates' own
// helpers in weft::detail::d0 (inline: weft::detail::...), beside, not inside,
// the library's weft::detail.
namespace weft {
inline namespace v0 {

// The result of a branch that returns void.
struct none {};

// Options of a fork/join region (Lowenthal, Freeh & Andrews §3.2).
struct fj_options {
    // Idle workers take filaments from the front of the longest list. Off: only
    // the initial distribution along the tree of workers (for well-balanced
    // programs such as merge sort, where stealing costs more than it gains).
    bool receiver_initiated = true;
    // Forks become calls while every worker is busy. Off: every fork is a real
    // fork (to measure what pruning saves).
    bool pruning = true;
};

}  // namespace v0

namespace detail {
inline namespace d0 {

template <class F>
using fil_result_t =
    std::conditional_t<std::is_void_v<std::invoke_result_t<F&>>, none, std::invoke_result_t<F&>>;

template <class F>
inline fil_result_t<F> fil_call(F& f) {
    if constexpr (std::is_void_v<std::invoke_result_t<F&>>) {
        f();
        return none{};
    } else {
        return f();
    }
}

inline weft_fil_fj_options_t to_c(const fj_options& o) {
    weft_fil_fj_options_t c{};
    c.no_receiver_initiated = o.receiver_initiated ? 0 : 1;
    c.no_pruning = o.pruning ? 0 : 1;
    return c;
}

// The forked branch of a join, on the forker's stack (rayon's StackJob).
template <class F>
struct stack_job : weft_fil_job_ {
    weft_fil_latch_ counter;
    F* fn;
    std::optional<fil_result_t<F>> result;
    std::exception_ptr error;

    static void run(weft_fil_job_* j) {
        auto* s = static_cast<stack_job*>(j);
        try {
            s->result.emplace(fil_call(*s->fn));
        } catch (...) {
            s->error = std::current_exception();
        }
    }
};

template <class A, class B>
std::pair<fil_result_t<A>, fil_result_t<B>> join_outside(A& a, B& b, const weft_fil_fj_options_t* opts);

// A worker is hungry (or we are outside any region): the forking path. a and b
// are join's own copies of the branches, made on this path only (see join).
// Capture by value ([=]) in hot recursive joins: a branch that captures a local
// by reference keeps that local in memory on the pruned path too (measured:
// fib 1.8x slower).
template <class A, class B>
[[gnu::noinline]] std::pair<fil_result_t<A>, fil_result_t<B>> join_cold(weft_fil_self_t_* p, A& a, B& b) {
    using RA = fil_result_t<A>;
    if (p == &weft_fil_outside_) return join_outside(a, b, nullptr);
    stack_job<B> jb;
    jb.execute = &stack_job<B>::run;
    jb.latch = &jb.counter;
    jb.thief = -1;
    jb.reserved_ = 0;
    jb.counter.pending.store(1, std::memory_order_relaxed);
    jb.counter.owner = p;
    jb.fn = &b;
    if (weft_fil_fork_(&jb) == 0) {
        RA ra = fil_call(a);
        return {std::move(ra), fil_call(b)};
    }
    std::optional<RA> ra;
    try {
        ra.emplace(fil_call(a));
    } catch (...) {
        // b is on this frame: wait for it if another worker runs it, skip it
        // if nobody started it. a's exception wins.
        (void)weft_fil_join_(&jb);
        throw;
    }
    if (weft_fil_join_(&jb) == 1) return {std::move(*ra), fil_call(b)};
    if (jb.error) std::rethrow_exception(jb.error);
    return {std::move(*ra), std::move(*jb.result)};
}


}  // namespace d0
}  // namespace detail

inline namespace v0 {

// Runs a() and b(), possibly in parallel, and returns both results (a void
// branch gives weft::none). The calling worker runs a; b is forked: while every
// worker is busy that is a plain call (pruning: one load and a branch), except
// that each worker keeps one forked job ready on its list (with more than one
// worker); when a worker is idle, b goes where it can take it. Outside a
// region this starts a fork/join region with this join at its root.
// Contexts: any. Errors: weft::error (EAGAIN, ENOMEM) if a region cannot start.
// Exceptions: rethrows a's exception, else b's.
template <class A, class B>
inline std::pair<detail::fil_result_t<A>, detail::fil_result_t<B>> join(A&& a, B&& b) {
    weft_fil_self_t_* p = weft_fil_self_;  // never null (weft_fil_outside_)
    // The pruning test (Lowenthal, Freeh & Andrews §3.2): every worker is busy, or this join is
    // too deep to be worth giving away. The common case is one load of the
    // participant's own copy of the hunger count and one branch. Every
    // instruction here counts: fib's recursion makes a join every ~5 cycles
    // (Zen 4: fib(35) ran 1.21-1.22x serial when the test also followed a
    // pointer to a shared count and or'ed in the list's length, 1.03-1.10x
    // with it reading one word but still counting every pruned join, and
    // 1.00-1.02x without the count: see weft/detail/fil_hunger.hpp, counting).
    if (const int h = p->hungry.load(); __builtin_expect(h != 0, 0)) {
        if (h != detail::hunger_word::counting && weft_fil_sp_() >= p->fork_limit.load(std::memory_order_relaxed)) {
            // Copies of the branches, made here so that they exist in memory on
            // this path only. Passed by value instead, GCC built both argument
            // copies before the pruning test, on the pruned path too
            // (quadrature, a join per ~45 ns: 1.08x serial on one worker; 1.02x
            // like this).
            std::decay_t<A> ac(std::forward<A>(a));
            std::decay_t<B> bc(std::forward<B>(b));
            return detail::join_cold<std::decay_t<A>, std::decay_t<B>>(p, ac, bc);
        }
        ++p->pruned;  // counted, or too deep to give away while someone is hungry
    }
    detail::fil_result_t<A> ra = detail::fil_call(a);
    return {std::move(ra), detail::fil_call(b)};
}

}  // namespace v0

namespace detail {
inline namespace d0 {

template <class F>
struct fj_root_ctx {
    F* fn;
    std::optional<fil_result_t<F>> result;
    std::exception_ptr error;
    static void run(void* c) {
        auto* x = static_cast<fj_root_ctx*>(c);
        try {
            x->result.emplace(fil_call(*x->fn));
        } catch (...) {
            x->error = std::current_exception();
        }
    }
};

template <class F>
fil_result_t<F> run_fj(F& f, const weft_fil_fj_options_t* opts) {
    fj_root_ctx<F> ctx{&f, std::nullopt, nullptr};
    weft::detail::check(weft_fil_run_fj_(&fj_root_ctx<F>::run, &ctx, opts), "weft::fork_join");
    if (ctx.error) std::rethrow_exception(ctx.error);
    return std::move(*ctx.result);
}

template <class A, class B>
std::pair<fil_result_t<A>, fil_result_t<B>> join_outside(A& a, B& b, const weft_fil_fj_options_t* opts) {
    auto root = [&] { return weft::join(a, b); };
    return run_fj(root, opts);
}

}  // namespace d0
}  // namespace detail

inline namespace v0 {

// Runs f() as the root of a fork/join region: every weft::join (and
// weft_fil_fork) inside it may use every worker. Returns f's result (weft::none
// for void). Inside a region it is a plain call.
template <class F>
detail::fil_result_t<F> fork_join(F&& f) {
    if (weft_fil_current_() != nullptr) return detail::fil_call(f);
    return detail::run_fj(f, nullptr);
}
template <class F>
detail::fil_result_t<F> fork_join(const fj_options& o, F&& f) {
    if (weft_fil_current_() != nullptr) return detail::fil_call(f);
    weft_fil_fj_options_t c = detail::to_c(o);
    return detail::run_fj(f, &c);
}

// ---------------------------------------------------------------------------
// Loops
// ---------------------------------------------------------------------------

// [begin, end)
template <class I = std::int64_t>
struct range {
    I begin, end;
};
// [row_begin, row_end) x [col_begin, col_end), row-major.
template <class I = std::int64_t>
struct range2d {
    I row_begin, row_end, col_begin, col_end;
};

}  // namespace v0

namespace detail {
inline namespace d0 {

template <class I, class Body>
struct for1_ctx {
    Body* body;
    static void run(void* c, const weft_fil_pool_view_* v) {
        Body& body = *static_cast<for1_ctx*>(c)->body;
        const I lo = static_cast<I>(v->i0), hi = static_cast<I>(v->i0 + v->nrows);
        for (I i = lo; i < hi; ++i) body(i);
    }
};

template <class I, class Body>
struct for2_ctx {
    Body* body;
    static void run(void* c, const weft_fil_pool_view_* v) {
        Body& body = *static_cast<for2_ctx*>(c)->body;
        const I rlo = static_cast<I>(v->i0), rhi = static_cast<I>(v->i0 + v->nrows);
        const I clo = static_cast<I>(v->j0), chi = static_cast<I>(v->j0 + v->ncols);
        for (I i = rlo; i < rhi; ++i)
            for (I j = clo; j < chi; ++j) body(i, j);
    }
};

template <class I>
I nested_grain(I n, const weft_fil_self_t_* p) {
    I pieces = static_cast<I>(p->nparts * for_nested_pieces_per_worker);
    I g = n / (pieces > 0 ? pieces : 1);
    return g > 0 ? g : I(1);
}

template <class I, class Leaf>
void split(I lo, I hi, I grain, Leaf& leaf) {
    if (hi - lo <= grain) {
        leaf(lo, hi);
        return;
    }
    I mid = lo + (hi - lo) / 2;
    weft::join([&] { split(lo, mid, grain, leaf); }, [&] { split(mid, hi, grain, leaf); });
}

inline void check_run(int rc, std::exception_ptr& e, const char* what) {
    if (e) std::rethrow_exception(e);
    weft::detail::check(rc, what);
}

}  // namespace d0
}  // namespace detail

inline namespace v0 {

// body(i) for every i in r, in parallel. At the top level the range is cut into
// a few contiguous pieces per worker (a coarse-grain static partition, with
// idle workers taking pieces not yet started); inside a region it is split
// recursively with weft::join. The body is inlined into the loop.
// Errors: weft::error if a region cannot start. Exceptions: the first one.
template <class I, class Body>
void parallel_for(range<I> r, Body&& body) {
    if (!(r.begin < r.end)) return;
    if (const weft_fil_self_t_* p = weft_fil_current_()) {
        auto leaf = [&](I lo, I hi) {
            for (I i = lo; i < hi; ++i) body(i);
        };
        detail::split(r.begin, r.end, detail::nested_grain<I>(r.end - r.begin, p), leaf);
        return;
    }
    using B = std::remove_reference_t<Body>;
    detail::for1_ctx<I, B> ctx{&body};
    std::exception_ptr e;
    int rc = weft_fil_run_range_(static_cast<std::int64_t>(r.begin), static_cast<std::int64_t>(r.end), 0, 1,
                                 detail::for_chunks_per_worker, &detail::for1_ctx<I, B>::run, &ctx, &e);
    detail::check_run(rc, e, "weft::parallel_for");
}

// body(i, j) for every (i, j) in r, in parallel (rows are cut, or columns when
// there are too few rows).
template <class I, class Body>
void parallel_for(range2d<I> r, Body&& body) {
    if (!(r.row_begin < r.row_end) || !(r.col_begin < r.col_end)) return;
    if (const weft_fil_self_t_* p = weft_fil_current_()) {
        auto leaf = [&](I lo, I hi) {
            for (I i = lo; i < hi; ++i)
                for (I j = r.col_begin; j < r.col_end; ++j) body(i, j);
        };
        detail::split(r.row_begin, r.row_end, detail::nested_grain<I>(r.row_end - r.row_begin, p), leaf);
        return;
    }
    using B = std::remove_reference_t<Body>;
    detail::for2_ctx<I, B> ctx{&body};
    std::exception_ptr e;
    int rc = weft_fil_run_range_(static_cast<std::int64_t>(r.row_begin), static_cast<std::int64_t>(r.row_end),
                                 static_cast<std::int64_t>(r.col_begin), static_cast<std::int64_t>(r.col_end),
                                 detail::for_chunks_per_worker, &detail::for2_ctx<I, B>::run, &ctx, &e);
    detail::check_run(rc, e, "weft::parallel_for");
}

template <class I, class Body>
void parallel_for(I begin, I end, Body&& body) {
    parallel_for(range<I>{begin, end}, std::forward<Body>(body));
}

// Associative operators for reductions (with std::plus<>, std::multiplies<>,
// std::logical_and<>, std::logical_or<>, std::bit_and<>, ... or your own).
template <class T = void>
struct minimum {
    constexpr T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
template <>
struct minimum<void> {
    template <class T>
    constexpr T operator()(const T& a, const T& b) const {
        return b < a ? b : a;
    }
};
template <class T = void>
struct maximum {
    constexpr T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <>
struct maximum<void> {
    template <class T>
    constexpr T operator()(const T& a, const T& b) const {
        return a < b ? b : a;
    }
};

// A reduction variable (the paper's reduction variables and Local()): one copy
// per worker, each on its own cache line. Filaments update local(); reduce()
// combines the copies in worker order (call it in an after function, or after
// the region). Op must be associative; identity must be its neutral element.
template <class T, class Op = std::plus<>>
class reduction {
public:
    explicit reduction(T identity = T{}, Op op = Op{}) : identity_(identity), op_(op) {
        weft::detail::check(weft_fil_init(), "weft::reduction");
        int n = weft_num_workers();
        slots_.resize(static_cast<std::size_t>(n > 0 ? n : 1), slot{identity_});
    }
    // The calling worker's copy.
    T& local() noexcept {
        const weft_fil_self_t_* s = weft_fil_current_();
        int k = s != nullptr ? s->index : weft_worker_id();
        if (k < 0) k = 0;
        // A compare, not a division on every call (this runs once per
        // filament in reduction bodies); the modulo only when the runtime was
        // restarted with more workers than the reduction was made for.
        std::size_t i = static_cast<std::size_t>(k);
        if (i >= slots_.size()) [[unlikely]]
            i %= slots_.size();
        return slots_[i].value;
    }
    // Every copy combined (copy 0 op copy 1 op ...). The copies are unchanged.
    T reduce() const {
        T acc = slots_[0].value;
        for (std::size_t k = 1; k < slots_.size(); ++k) acc = op_(acc, slots_[k].value);
        return acc;
    }
    // Sets every copy to v (default: the identity).
    void reset() { reset(identity_); }
    void reset(const T& v) {
        for (slot& s : slots_) s.value = v;
    }
    const T& identity() const noexcept { return identity_; }

private:
    struct alignas(64) slot {
        T value;
    };
    T identity_;
    Op op_;
    std::vector<slot> slots_;
};

// combine(identity, body(i, acc) over every i of r): each worker accumulates
// into its own acc (starting from identity), then the accumulators are combined
// with combine (associative; in worker order at the top level, so a
// non-associative floating-point sum may differ from the serial one in the
// last bits). body(i, acc) is inlined into the loop.
template <class I, class T, class Body, class Combine>
T parallel_reduce(range<I> r, T identity, Body&& body, Combine combine) {
    if (!(r.begin < r.end)) return identity;
    if (const weft_fil_self_t_* p = weft_fil_current_()) {
        struct rec {
            const T& id;
            Body& body;
            Combine& combine;
            I grain;
            T go(I lo, I hi) {
                if (hi - lo <= grain) {
                    T acc = id;
                    for (I i = lo; i < hi; ++i) body(i, acc);
                    return acc;
                }
                I mid = lo + (hi - lo) / 2;
                auto [a, b] = weft::join([&] { return go(lo, mid); }, [&] { return go(mid, hi); });
                return combine(std::move(a), std::move(b));
            }
        } x{identity, body, combine, detail::nested_grain<I>(r.end - r.begin, p)};
        return x.go(r.begin, r.end);
    }
    reduction<T, Combine> acc(identity, combine);
    auto loop = [&](I i) { body(i, acc.local()); };
    // The accumulator is looked up once per piece, not per element.
    struct ctx_t {
        Body* body;
        reduction<T, Combine>* acc;
        static void run(void* c, const weft_fil_pool_view_* v) {
            auto* x = static_cast<ctx_t*>(c);
            T& a = x->acc->local();
            const I lo = static_cast<I>(v->i0), hi = static_cast<I>(v->i0 + v->nrows);
            for (I i = lo; i < hi; ++i) (*x->body)(i, a);
        }
    } ctx{&body, &acc};
    (void)loop;
    std::exception_ptr e;
    int rc = weft_fil_run_range_(static_cast<std::int64_t>(r.begin), static_cast<std::int64_t>(r.end), 0, 1,
                                 detail::for_chunks_per_worker, &ctx_t::run, &ctx, &e);
    detail::check_run(rc, e, "weft::parallel_reduce");
    return acc.reduce();
}

// ---------------------------------------------------------------------------
// Iterative filaments: pools and pool sets (Lowenthal, Freeh & Andrews §2.1-2.2, §3.1)
// ---------------------------------------------------------------------------

// What an after function returns.
enum class next : int { continue_ = WEFT_FIL_CONTINUE, done = WEFT_FIL_DONE };
// Sweep order of a pool set.
enum class order : int { back_and_forth = WEFT_FIL_BACK_AND_FORTH, forward = WEFT_FIL_FORWARD };
// How a pool ran in its last sweep.
enum class pool_path : int {
    none = WEFT_FIL_PATH_NONE,
    general = WEFT_FIL_PATH_GENERAL,
    dense_1d = WEFT_FIL_PATH_DENSE_1D,
    dense_2d = WEFT_FIL_PATH_DENSE_2D,
};

// A pool of a pool set: filaments (i, j) placed on one worker. A handle: the
// pool belongs to its set.
class pool {
public:
    pool() = default;
    explicit pool(weft_fil_pool_t h) : h_(h) {}
    // Adds the filament (i, j) (an 8-byte descriptor). Not while its set runs,
    // except from the set's after function.
    void add(int i, int j = 0) { weft::detail::check(weft_fil_create(h_, i, j), "weft::pool::add"); }
    // Adds (i, j) for i = i0, i0 + istride, ... below i1 and j0 <= j < j1, row
    // by row (weft_fil_create_range): a dense range in one call.
    void add_range(int i0, int i1, int istride = 1, int j0 = 0, int j1 = 1) {
        weft::detail::check(weft_fil_create_range(h_, i0, i1, istride, j0, j1), "weft::pool::add_range");
    }
    // Removes every filament (weft_fil_pool_clear); from the set's after
    // function, with add/add_range after it, this shrinks the next sweeps.
    void clear() { weft::detail::check(weft_fil_pool_clear(h_), "weft::pool::clear"); }
    std::size_t size() const { return weft_fil_pool_size(h_); }
    pool_path path() const { return static_cast<pool_path>(weft_fil_pool_path(h_)); }
    weft_fil_pool_t native_handle() const noexcept { return h_; }

private:
    weft_fil_pool_t h_ = nullptr;
};

// A pool-set body that also receives the running worker's copy of a reduction
// (weft::with_local(red, body): body(i, j, T& local)). The copy is read into a
// local variable when a pool starts and written back when it ends, so in the
// coarsened loops it lives in a register instead of being loaded, compared and
// stored through red.local() at every filament: Jacobi's max-reduction on one
// worker of a Zen 4 host took 1.4-1.7x the serial time through local(), as
// much as serial with this (docs/design/filaments.md, "Reductions in the
// coarsened loop"). A pool runs on one worker from start to end, so the value
// is the one local() would give. Use it only where the body does not also
// reach the same reduction through local().
template <class Red, class Body>
struct with_local_t {
    Red& red;
    Body body;
};
template <class Red, class Body>
with_local_t<Red, std::decay_t<Body>> with_local(Red& red, Body&& body) {
    return {red, std::forward<Body>(body)};
}

}  // namespace v0

namespace detail {
inline namespace d0 {
template <class B>
inline constexpr bool is_with_local = false;
template <class Red, class Body>
inline constexpr bool is_with_local<with_local_t<Red, Body>> = true;
}  // namespace d0
}  // namespace detail

inline namespace v0 {

// A pool set: body(i, j) for every filament of its pools, once per sweep, then
// after() (returning weft::next) on one worker while the others wait. Without
// an after function a set continues to the next set of the sequence, and the
// last set of a sequence ends it. The body is inlined into the pool loops: the
// general loop over descriptors and the dense 1-D/2-D loops. Body may be a
// weft::with_local(red, body) (above).
template <class Body, class After = std::nullptr_t>
class pool_set {
public:
    explicit pool_set(Body body, After after = After{}, order o = order::back_and_forth)
        : body_(std::move(body)), after_(std::move(after)) {
        weft_fil_after_ctx_fn_ a = nullptr;
        if constexpr (!std::is_same_v<After, std::nullptr_t>) a = &pool_set::after_cb;
        weft::detail::check(weft_fil_poolset_create_cb_(&h_, &pool_set::run_cb, a, this), "weft::pool_set");
        if (o != order::back_and_forth) weft::detail::check(weft_fil_poolset_set_order(h_, static_cast<int>(o)), "weft::pool_set");
    }
    ~pool_set() { (void)weft_fil_poolset_destroy(h_); }
    pool_set(const pool_set&) = delete;
    pool_set& operator=(const pool_set&) = delete;

    // A pool placed on `worker` (modulo the workers), with room for `capacity`.
    pool add_pool(int worker, std::size_t capacity = 0) {
        weft_fil_pool_t p = nullptr;
        weft::detail::check(weft_fil_pool_create(h_, worker, capacity, &p), "weft::pool_set::add_pool");
        return pool(p);
    }
    // One pool per worker (the paper's fCreatePools): element w is on worker w.
    std::vector<pool> add_pools(std::size_t capacity = 0) {
        std::vector<pool> v;
        int n = weft_num_workers();
        for (int w = 0; w < (n > 0 ? n : 1); ++w) v.push_back(add_pool(w, capacity));
        return v;
    }
    void set_order(order o) { weft::detail::check(weft_fil_poolset_set_order(h_, static_cast<int>(o)), "weft::pool_set::set_order"); }
    weft_fil_poolset_t native_handle() const noexcept { return h_; }

private:
    static void run_cb(void* ctx, const weft_fil_pool_view_* v) {
        Body& b = static_cast<pool_set*>(ctx)->body_;
        if constexpr (detail::is_with_local<Body>) {
            auto& slot = b.red.local();
            auto acc = slot;
            detail::run_pool_loops([&b, &acc](int i, int j) { b.body(i, j, acc); }, v);
            slot = acc;
        } else {
            detail::run_pool_loops(b, v);
        }
    }
    static int after_cb(void* ctx) {
        if constexpr (!std::is_same_v<After, std::nullptr_t>) {
            return static_cast<int>(static_cast<pool_set*>(ctx)->after_());
        } else {
            return WEFT_FIL_CONTINUE;
        }
    }

    Body body_;
    After after_;
    weft_fil_poolset_t h_ = nullptr;
};

template <class Body>
pool_set(Body) -> pool_set<Body, std::nullptr_t>;
template <class Body, class After>
pool_set(Body, After) -> pool_set<Body, After>;
template <class Body, class After>
pool_set(Body, After, order) -> pool_set<Body, After>;

// Runs a sequence of pool sets as one region: each set's sweep in turn, its
// after function after it, until one returns weft::next::done (or, without
// after functions, once through). Exceptions: the first one, rethrown here.
template <class... Sets>
void run(Sets&... sets) {
    static_assert(sizeof...(Sets) > 0, "weft::run needs at least one pool set");
    weft_fil_poolset_t hs[] = {sets.native_handle()...};
    std::exception_ptr e;
    int rc = weft_fil_run_sets_ex_(hs, static_cast<int>(sizeof...(Sets)), &e);
    detail::check_run(rc, e, "weft::run");
}

// Filament statistics (weft_fil_stats_get).
inline weft_fil_stats_t filament_stats() {
    weft_fil_stats_t s{};
    weft::detail::check(weft_fil_stats_get(&s), "weft_fil_stats_get");
    return s;
}
inline weft_fil_stats_t filament_stats(int worker) {
    weft_fil_stats_t s{};
    weft::detail::check(weft_fil_worker_stats_get(worker, &s), "weft_fil_worker_stats_get");
    return s;
}

}  // namespace v0
}  // namespace weft
