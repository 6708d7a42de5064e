// The matmul algorithm on oneTBB: each fork is a task_group::run, each join a
// task_group::wait; temporaries from malloc, counted to report the heap peak.
#include <tbb/global_control.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <atomic>
#include <cstdlib>

#include "harness.hpp"
#include "matmul.hpp"

namespace weft::bench::matmul {
namespace {

struct tbb_exec {
    std::atomic<std::size_t> heap{0};
    std::atomic<std::size_t> peak{0};
    template <class... F>
    void fork_join(F&&... f) {
        tbb::task_group g;
        (g.run([&f] { f(); }), ...);
        g.wait();
    }
    void* allocate(std::size_t bytes) {
        std::size_t now = heap.fetch_add(bytes) + bytes;
        std::size_t p = peak.load();
        while (now > p && !peak.compare_exchange_weak(p, now)) {
        }
        return std::malloc(bytes);
    }
    void release(void* p, std::size_t bytes) {
        heap.fetch_sub(bytes);
        std::free(p);
    }
};

}  // namespace

peer_result run_tbb(problem const& p, apps::matmul::view c, int workers) {
    tbb_exec ex;
    tbb::task_arena arena(workers);
    std::uint64_t t0 = now_ns();
    arena.execute([&] { apps::matmul::multiply(ex, p.a, p.b, c, p.n, p.leaf); });
    std::uint64_t t1 = now_ns();
    return {static_cast<double>(t1 - t0) / 1e9, ex.peak.load()};
}

}  // namespace weft::bench::matmul
