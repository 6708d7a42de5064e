// quadrature on oneTBB, tbb::parallel_invoke at every subdivision (the same
// code as the filaments version), in an arena of `workers` threads.
#include <tbb/parallel_invoke.h>
#include <tbb/task_arena.h>

#include "apps/quadrature/quadrature_instance.hpp"

namespace weft::apps::quadrature {
namespace {

double tbb_quad(double a, double b, double fa, double fb, double area, double tol) {
    const halves h = divide(a, b, fa, fb, area, tol);
    if (h.close) return h.left + h.right;
    double l, r;
    tbb::parallel_invoke([&] { l = tbb_quad(a, h.m, fa, h.fm, h.left, tol); },
                         [&] { r = tbb_quad(h.m, b, h.fm, fb, h.right, tol); });
    return l + r;
}

void run(instance& self, int workers) {
    auto& p = static_cast<problem&>(self);
    const double fa = f(lo), fb = f(hi), tol = p.tol;
    tbb::task_arena arena(workers);
    arena.execute([&] { p.result = tbb_quad(lo, hi, fa, fb, 0.5 * (fa + fb) * (hi - lo), tol); });
}

peer_registrar const reg{"quadrature", version::tbb, run};

}  // namespace
}  // namespace weft::apps::quadrature
