// fib on oneTBB, tbb::parallel_invoke at every call (the same code as the
// filaments version), in an arena of `workers` threads.
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>

#include "apps/fib/fib_instance.hpp"

namespace weft::apps::fib {
namespace {

std::int64_t tbb_rec(int n) {
    if (n < 2) return n;
    std::int64_t a, b;
    tbb::parallel_invoke([&] { a = tbb_rec(n - 1); }, [&] { b = tbb_rec(n - 2); });
    return a + b;
}

void run(instance& self, int workers) {
    auto& p = static_cast<problem&>(self);
    tbb::task_arena arena(workers);
    arena.execute([&] { p.result = tbb_rec(p.n); });
}

peer_registrar const reg{"fib", version::tbb, run};

}  // namespace
}  // namespace weft::apps::fib
