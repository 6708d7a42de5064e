// quadrature on OpenMP tasks, a task at every subdivision (the same code as
// the filaments version).
#include <omp.h>

#include "apps/quadrature/quadrature_instance.hpp"

namespace weft::apps::quadrature {
namespace {

double omp_quad(double a, double b, double fa, double fb, double area, double tol) {
    const halves h = divide(a, b, fa, fb, area, tol);
    if (h.close) return h.left + h.right;
    double l, r;
#pragma omp task shared(l) firstprivate(a, fa, tol, h)
    l = omp_quad(a, h.m, fa, h.fm, h.left, tol);
    r = omp_quad(h.m, b, h.fm, fb, h.right, tol);
#pragma omp taskwait
    return l + r;
}

void run(instance& self, int workers) {
    auto& p = static_cast<problem&>(self);
    const double fa = f(lo), fb = f(hi), tol = p.tol;
    double r = 0.0;
#pragma omp parallel num_threads(workers) shared(r)
#pragma omp single
    r = omp_quad(lo, hi, fa, fb, 0.5 * (fa + fb) * (hi - lo), tol);
    p.result = r;
}

peer_registrar const reg{"quadrature", version::omp, run};

}  // namespace
}  // namespace weft::apps::quadrature
