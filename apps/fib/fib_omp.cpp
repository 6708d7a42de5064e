// fib on OpenMP tasks, a task at every call (the same code as the filaments
// version: the Filaments paper's comparison is of the runtimes, not of cut-offs).
#include <omp.h>

#include "apps/fib/fib_instance.hpp"

namespace weft::apps::fib {
namespace {

std::int64_t omp_rec(int n) {
    if (n < 2) return n;
    std::int64_t a, b;
#pragma omp task shared(a) firstprivate(n)
    a = omp_rec(n - 1);
    b = omp_rec(n - 2);
#pragma omp taskwait
    return a + b;
}

void run(instance& self, int workers) {
    auto& p = static_cast<problem&>(self);
    std::int64_t r = 0;
#pragma omp parallel num_threads(workers) shared(r, p)
#pragma omp single
    r = omp_rec(p.n);
    p.result = r;
}

peer_registrar const reg{"fib", version::omp, run};

}  // namespace
}  // namespace weft::apps::fib
