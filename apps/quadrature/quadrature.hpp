// Adaptive quadrature of f(x) = e^x sin x over [1, 35] (Lowenthal et al. §2.3, §4.3).
// An interval's area is estimated by the trapezoid rule; it is halved, and if
// the two halves' areas differ from the whole's by more than the tolerance,
// each half is integrated recursively. f is evaluated once per point and
// each area once: an interval carries f at its ends and its own area (the
// paper's quad(a, b, fa, fb, area)). The oscillations grow as e^x, so most of
// the work is at the right end: a static partition would be badly unbalanced.
//
// Size: the tolerance per interval is 10^-size (absolute; |f| reaches 1.6e15
// on [1, 35], so the useful sizes are small numbers, and each +1 multiplies the
// work by about 10^(1/3): the trapezoid's error is O(h^3)).
//
// Versions (every one splits intervals with `divide`):
//   serial     plain recursion;
//   coarse     the paper's bag of tasks: one central bag of intervals under a
//              mutex; a thread takes an interval, and while it is not close
//              enough, puts the right half back into the bag and keeps the left
//              one; when the bag already holds enough tasks (2 per thread), it
//              integrates the half it keeps by serial recursion (pruning). The
//              run ends when the bag is empty and every thread is idle
//              (a condition variable wakes idle threads);
//   filaments  weft::join at every subdivision (the paper's two fjForks and
//              fjJoin), inside weft::fork_join; the runtime prunes forks to
//              calls while every worker is busy;
//   omp, tbb   an OpenMP task / tbb::parallel_invoke at every subdivision.
// The fork/join versions add the two halves' areas in the serial order, so they
// give the serial result exactly; the bag of tasks adds them in another order,
// so results are compared with a relative tolerance of 1e-9.
// Difference from the paper: a bag task keeps the left half and gives away the
// right one (the heavier here); the paper does not say which.
#pragma once

#include <cmath>

namespace weft::apps::quadrature {

inline constexpr double lo = 1.0, hi = 35.0;

inline double f(double x) { return std::exp(x) * std::sin(x); }

// The tolerance of size `size` (see above).
inline double tolerance(long size) { return std::pow(10.0, -static_cast<double>(size)); }

// One subdivision of [a, b] (f(a) = fa, f(b) = fb, trapezoid area `area`):
// the midpoint m, f(m), the two halves' areas, and whether their sum is
// close enough to `area` to be accepted. An interval too small to halve in
// floating point is accepted too (so that the recursion ends whatever the
// tolerance).
struct halves {
    double m, fm, left, right;
    bool close;
};

inline halves divide(double a, double b, double fa, double fb, double area, double tol) {
    halves h;
    h.m = 0.5 * (a + b);
    h.fm = f(h.m);
    h.left = 0.5 * (fa + h.fm) * (h.m - a);
    h.right = 0.5 * (h.fm + fb) * (b - h.m);
    h.close = std::fabs(h.left + h.right - area) <= tol || !(a < h.m && h.m < b);
    return h;
}

// The serial version's recursion (noinline: see fib::serial).
__attribute__((noinline)) inline double serial_quad(double a, double b, double fa, double fb, double area,
                                                    double tol) {
    const halves h = divide(a, b, fa, fb, area, tol);
    if (h.close) return h.left + h.right;
    return serial_quad(a, h.m, fa, h.fm, h.left, tol) + serial_quad(h.m, b, h.fm, fb, h.right, tol);
}

// The integral over [lo, hi] by each version.
inline double serial(double tol) {
    const double fa = f(lo), fb = f(hi);
    return serial_quad(lo, hi, fa, fb, 0.5 * (fa + fb) * (hi - lo), tol);
}
double coarse(double tol, int workers);
double filaments(double tol);

}  // namespace weft::apps::quadrature
