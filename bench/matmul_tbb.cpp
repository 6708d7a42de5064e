// The matmul algorithm on oneTBB: each fork is a task_group::run, each join a
// task_group::wait; temporaries from malloc, counted to report the heap peak.
// `workers` threads: a task_arena of that many slots, under a global_control
// that allows that many.
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <atomic>
#include <cstdlib>

#include "harness.hpp"
#include "matmul_peers.hpp"

namespace weft::bench::matmul {
namespace {

struct tbb_exec : counting_heap {
    template <class... F>
    void fork_join(F&&... f) {
        tbb::task_group g;
        (g.run([&f] { f(); }), ...);
        g.wait();
    }
};

}  // namespace

peer_result run_tbb(problem const& p, apps::matmul::view c, int workers) {
    tbb_exec ex;
    // oneTBB runs at most as many threads as the process has CPUs unless the
    // global limit is raised: with more workers than CPUs (weft-bench oversub)
    // the arena's slots would otherwise stay empty.
    tbb::global_control threads(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(workers));
    tbb::task_arena arena(workers);
    std::uint64_t t0 = now_ns();
    arena.execute([&] { apps::matmul::multiply(ex, p.a, p.b, c, p.n, p.leaf); });
    std::uint64_t t1 = now_ns();
    return {static_cast<double>(t1 - t0) / 1e9, ex.peak.load()};
}

}  // namespace weft::bench::matmul
