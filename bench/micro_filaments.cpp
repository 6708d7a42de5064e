// weft-bench micro: what a filament costs (Lowenthal, Freeh & Andrews), on the run's one worker.
//
// Weft's own operations, with no peer row (Pthreads and Boost.Fiber have no
// stateless threads). Each runs from the main weft thread on worker 0:
//   fil_create         weft_fil_create into a pool with room for all of them
//                      (as the applications size their pools): per filament
//   fil_sweep_general  sweeps of a pool of 1,000 filaments that are no dense
//                      range (after a first sweep that classifies it), run
//                      descriptor by descriptor: per filament (body: a call
//                      through the C function pointer that adds i)
//   fil_sweep_dense    the same for a dense 1-D pool, run as a loop (§3.1)
//   fil_fork_join      a root filament that n times forks a child returning at
//                      once and joins it, pruning off (C API): per fork+join
//   join_forked        fib(k) by weft::join with pruning off: per join
//   join_pruned        the same with pruning on; on one worker every join is
//                      a plain call, so this is the recursion's cost per call
// Each checks its result (the sums, fib(k), the pool's path) and warns when it
// is wrong. docs/bench.md defines the figures.
#include <cstdint>
#include <string>

#include <weft/filament.hpp>
#include <weft/weft.h>

#include "harness.hpp"
#include "micro.hpp"

namespace weft::bench::micro {
namespace {

struct sweep_state {
    std::uint64_t sum = 0;
    std::uint64_t sweeps_left = 1;
};

void add_i(int i, int, void* arg) { static_cast<sweep_state*>(arg)->sum += static_cast<std::uint64_t>(i); }
int count_sweep(void* arg) {
    return --static_cast<sweep_state*>(arg)->sweeps_left == 0 ? WEFT_FIL_DONE : WEFT_FIL_CONTINUE;
}

// A pool set of one pool on worker 0, destroyed with the object.
struct one_pool {
    weft_fil_poolset_t set = nullptr;
    weft_fil_pool_t pool = nullptr;
    sweep_state state;

    explicit one_pool(std::uint64_t capacity) {
        check(weft_fil_poolset_create(&set, &add_i, &count_sweep, &state), "weft_fil_poolset_create");
        check(weft_fil_poolset_set_order(set, WEFT_FIL_FORWARD), "weft_fil_poolset_set_order");
        check(weft_fil_pool_create(set, 0, capacity, &pool), "weft_fil_pool_create");
    }
    ~one_pool() { check(weft_fil_poolset_destroy(set), "weft_fil_poolset_destroy"); }
    one_pool(one_pool const&) = delete;
    one_pool& operator=(one_pool const&) = delete;
};

op_result fil_create(std::uint64_t n, int) {
    one_pool p(n);
    std::uint64_t const t0 = now_ns();
    for (std::uint64_t k = 0; k < n; ++k) check(weft_fil_create(p.pool, static_cast<int>(k), 0), "weft_fil_create");
    std::uint64_t const t1 = now_ns();
    op_result r{double(t1 - t0), n, {}};
    if (weft_fil_pool_size(p.pool) != n) r.warning = "fil_create: the pool does not hold every filament created";
    return r;
}

// Sweeps of a pool of `size` filaments, as an iterative program makes them:
// one region whose after function continues until n / size sweeps have run.
// `dense` picks (k, 0), a dense 1-D range, or the diagonal (k, k), which no
// dense pattern matches. The pool stays the same size whatever n is, so that
// callgrind's difference between two n counts sweeps only.
constexpr std::uint64_t sweep_pool_size = 1000;

op_result fil_sweep(std::uint64_t n, bool dense) {
    std::uint64_t const size = n < sweep_pool_size ? n : sweep_pool_size;
    std::uint64_t const sweeps = n / size;
    one_pool p(size);
    for (std::uint64_t k = 0; k < size; ++k) {
        int const i = static_cast<int>(k);
        check(weft_fil_create(p.pool, i, dense ? 0 : i), "weft_fil_create");
    }
    // A first sweep classifies the pool (once after each change, O(size)) and
    // warms the caches: the timed ones are what every further sweep costs.
    check(weft_fil_run_sets(&p.set, 1), "weft_fil_run_sets");
    p.state.sum = 0;
    p.state.sweeps_left = sweeps;
    std::uint64_t const t0 = now_ns();
    check(weft_fil_run_sets(&p.set, 1), "weft_fil_run_sets");
    std::uint64_t const t1 = now_ns();
    op_result r{double(t1 - t0), sweeps * size, {}};
    char const* const name = dense ? "fil_sweep_dense" : "fil_sweep_general";
    int const want = dense ? WEFT_FIL_PATH_DENSE_1D : WEFT_FIL_PATH_GENERAL;
    if (p.state.sum != sweeps * (size * (size - 1) / 2) || p.state.sweeps_left != 0)
        r.warning = std::string(name) + ": the sweeps did not run every filament once each";
    else if (size > 1 && weft_fil_pool_path(p.pool) != want)
        r.warning = std::string(name) + ": the pool ran on path " + std::to_string(weft_fil_pool_path(p.pool)) +
                    ", not " + std::to_string(want);
    return r;
}

op_result fil_sweep_general(std::uint64_t n, int) { return fil_sweep(n, false); }
op_result fil_sweep_dense(std::uint64_t n, int) { return fil_sweep(n, true); }

void return_at_once(void const*, void* result) { *static_cast<int*>(result) = 1; }

void fork_join_loop(void const* args, void* result) {
    auto const n = *static_cast<std::uint64_t const*>(args);
    std::uint64_t done = 0;
    for (std::uint64_t k = 0; k < n; ++k) {
        int child = 0;
        check(weft_fil_fork(&return_at_once, nullptr, 0, &child), "weft_fil_fork");
        check(weft_fil_join(), "weft_fil_join");
        done += static_cast<std::uint64_t>(child);
    }
    *static_cast<std::uint64_t*>(result) = done;
}

op_result fil_fork_join(std::uint64_t n, int) {
    weft_fil_fj_options_t opts{};
    opts.no_pruning = 1;
    std::uint64_t done = 0;
    std::uint64_t const t0 = now_ns();
    check(weft_fil_fj_run(&fork_join_loop, &n, sizeof n, &done, &opts), "weft_fil_fj_run");
    std::uint64_t const t1 = now_ns();
    op_result r{double(t1 - t0), n, {}};
    if (done != n) r.warning = "fil_fork_join: a child did not run before its join returned";
    return r;
}

long fib_joined(int k) {
    if (k < 2) return k;
    auto [a, b] = weft::join([=] { return fib_joined(k - 1); }, [=] { return fib_joined(k - 2); });
    return a + b;
}

// fib(k) makes fib(k + 1) - 1 joins (one per call with k >= 2): the largest k
// whose joins fit in n, at least 2.
struct fib_size {
    int k = 2;
    std::uint64_t joins = 1;  // fib(3) - 1
    std::uint64_t value = 1;  // fib(2)
};
fib_size fib_for(std::uint64_t n) {
    fib_size s;
    std::uint64_t f_k = 1, f_k1 = 2;  // fib(k), fib(k + 1) for k = 2
    while (true) {
        std::uint64_t const next = f_k + f_k1;  // fib(k + 2)
        if (next - 1 > n) return s;
        ++s.k;
        s.joins = next - 1;
        s.value = f_k1;
        f_k = f_k1;
        f_k1 = next;
    }
}

op_result join_fib(std::uint64_t n, bool pruning) {
    fib_size const s = fib_for(n);
    weft::fj_options o;
    o.pruning = pruning;
    std::uint64_t const t0 = now_ns();
    long const v = weft::fork_join(o, [k = s.k] { return fib_joined(k); });
    std::uint64_t const t1 = now_ns();
    op_result r{double(t1 - t0), s.joins, {}};
    if (static_cast<std::uint64_t>(v) != s.value)
        r.warning = std::string(pruning ? "join_pruned" : "join_forked") + ": fib(" + std::to_string(s.k) +
                    ") returned " + std::to_string(v) + ", not " + std::to_string(s.value);
    return r;
}

op_result join_forked(std::uint64_t n, int) { return join_fib(n, false); }
op_result join_pruned(std::uint64_t n, int) { return join_fib(n, true); }

struct register_filament_ops {
    register_filament_ops() {
        auto add = [](char const* id, char const* unit, int order, op_result (*fn)(std::uint64_t, int)) {
            op_registrar{micro_op{.id = id, .kind = id, .family = "weft", .unit = unit, .order = order, .run = fn}};
        };
        add("fil_create", "filament", 10, &fil_create);
        add("fil_sweep_general", "filament", 11, &fil_sweep_general);
        add("fil_sweep_dense", "filament", 12, &fil_sweep_dense);
        add("fil_fork_join", "fork+join", 13, &fil_fork_join);
        add("join_forked", "join", 14, &join_forked);
        add("join_pruned", "join", 15, &join_pruned);
    }
} const filament_ops;

}  // namespace
}  // namespace weft::bench::micro
