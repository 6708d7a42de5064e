// Tomcatv-like mesh generation (Lowenthal et al. §4.4: "similar to Jacobi iteration;
// however, it uses 7 n x n matrices (rather than 2), and has two phases per
// iteration"; after SPEC CFP92 tomcatv). An n x n mesh of points (X, Y) with
// fixed boundary is relaxed towards the smooth mesh of the elliptic grid
// equations, a fixed number of iterations, each of two phases:
//   residuals   at every interior point, from X and Y and their 8 neighbours:
//               the metric terms A, B, C, the coefficients AA = -B and
//               DD = 2B + rel*A of the implicit correction, and the residuals
//               RX = A*Xii + B*Xjj - C*Xij (RY likewise for Y);
//   relaxation  on every interior line i: the largest residual of the line
//               (max |RX|, |RY|: the reduction), then the tridiagonal system
//               (AA, DD, AA) along j solved for the corrections in place of RX,
//               RY (D holds the eliminated diagonal's inverses), then X += RX,
//               Y += RY.
// The 7 matrices are X, Y, RX, RY, AA, DD, D. What is SPEC's: the stencil
// arithmetic, the line solve, the max-residual reduction, the correction.
// What is simplified: the initial mesh (a perturbed unit square with a bump on
// one side instead of the airfoil input), a fixed iteration count instead of
// the convergence test, one combined residual instead of RXM and RYM, and the
// layout: SPEC's X(I,J) is column-major and solves along J, across memory
// (vectorised over I); here x[i][j] is row-major and each line i is solved
// along j, the contiguous index, so a line is one filament's private stretch of
// memory. The correction is done per line right after its solve (SPEC's
// separate loop gives the same values).
//
// Every version runs residual_point and relax_line below, so all equal serial
// exactly (the max reduction is exact in any order).
//   serial     the two phases in plain loops;
//   coarse     one std::thread per worker, a contiguous block of rows each, a
//              sweep_barrier after each phase (the second's completion step
//              combines the per-thread maxima);
//   filaments  a sequence of two pool sets, one per phase (§4.4: "Like LU, the
//              Filaments program creates two pool sets, one for each phase"),
//              with the same contiguous blocks of rows per pool: one filament
//              per interior point for the residuals (a dense 2-D pool, run as
//              nested loops, §3.1), one per interior line for the relaxation
//              (its solve is a recurrence along the line, so a line is the
//              finest grain; a dense 1-D pool). The relaxation set's after
//              function reduces the max residual, records it and counts the
//              iterations. Both sets sweep forward only, not back-and-forth
//              (§3.1): see filaments() for the measurement.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace weft::apps::tomcatv {

// Weight of A on the diagonal of the correction system: 2 is line Jacobi for
// the i-direction term; a little more damps the nonlinear iteration.
inline constexpr double rel = 2.2;

// The 7 matrices (n x n, row-major) as raw pointers: what the kernels use.
struct grids {
    int n;
    double *x, *y, *rx, *ry, *aa, *dd, *d;
};

struct mesh {
    mesh(int n, int iterations);
    grids view();
    int n, iterations;
    std::vector<double> x, y, rx, ry, aa, dd, d;
    std::vector<double> residual;  // max |RX|, |RY| of each iteration: the output with X, Y
};

// Phase 1 at interior point (i, j): AA, DD, RX, RY from X, Y (one filament).
inline void residual_point(const grids& g, int i, int j) {
    const std::size_t n = static_cast<std::size_t>(g.n);
    const std::size_t c = static_cast<std::size_t>(i) * n + static_cast<std::size_t>(j);
    const double* x = g.x;
    const double* y = g.y;
    const double xi = x[c + n] - x[c - n], yi = y[c + n] - y[c - n];  // differences along i
    const double xj = x[c + 1] - x[c - 1], yj = y[c + 1] - y[c - 1];  // along j
    const double a = 0.25 * (xj * xj + yj * yj);
    const double b = 0.25 * (xi * xi + yi * yi);
    const double cc = 0.125 * (xi * xj + yi * yj);
    g.aa[c] = -b;
    g.dd[c] = b + b + a * rel;
    const double pxx = x[c + n] - 2.0 * x[c] + x[c - n];
    const double qxx = y[c + n] - 2.0 * y[c] + y[c - n];
    const double pyy = x[c + 1] - 2.0 * x[c] + x[c - 1];
    const double qyy = y[c + 1] - 2.0 * y[c] + y[c - 1];
    const double pxy = x[c + n + 1] - x[c + n - 1] - x[c - n + 1] + x[c - n - 1];
    const double qxy = y[c + n + 1] - y[c + n - 1] - y[c - n + 1] + y[c - n - 1];
    g.rx[c] = a * pxx + b * pyy - cc * pxy;
    g.ry[c] = a * qxx + b * qyy - cc * qxy;
}

// Phase 2 on interior line i (one filament): returns the line's largest
// residual, then solves AA*r[j-1] + DD*r[j] + AA*r[j+1] = R[j] along j for RX
// and RY (Thomas' algorithm, the boundary corrections being 0) and adds the
// corrections to X and Y.
inline double relax_line(const grids& g, int i) {
    const int n = g.n;
    const std::size_t o = static_cast<std::size_t>(i) * static_cast<std::size_t>(n);
    double* rx = g.rx + o;
    double* ry = g.ry + o;
    const double* aa = g.aa + o;
    const double* dd = g.dd + o;
    double* d = g.d + o;
    double res = 0.0;
    for (int j = 1; j < n - 1; ++j) {
        const double r = std::fabs(rx[j]) > std::fabs(ry[j]) ? std::fabs(rx[j]) : std::fabs(ry[j]);
        res = r > res ? r : res;
    }
    d[1] = 1.0 / dd[1];
    for (int j = 2; j < n - 1; ++j) {
        const double r = aa[j] * d[j - 1];
        d[j] = 1.0 / (dd[j] - aa[j - 1] * r);
        rx[j] = rx[j] - rx[j - 1] * r;
        ry[j] = ry[j] - ry[j - 1] * r;
    }
    rx[n - 2] = rx[n - 2] * d[n - 2];
    ry[n - 2] = ry[n - 2] * d[n - 2];
    for (int j = n - 3; j >= 1; --j) {
        rx[j] = (rx[j] - aa[j] * rx[j + 1]) * d[j];
        ry[j] = (ry[j] - aa[j] * ry[j + 1]) * d[j];
    }
    double* x = g.x + o;
    double* y = g.y + o;
    for (int j = 1; j < n - 1; ++j) {
        x[j] += rx[j];
        y[j] += ry[j];
    }
    return res;
}

// The first interior row of part w of `parts` (interior rows 1 .. n-2 cut in
// contiguous blocks; part `parts` gives the end, n - 1).
inline int block_begin(int n, int w, int parts) {
    return 1 + static_cast<int>(static_cast<long long>(n - 2) * w / parts);
}

void serial(mesh& m);
void coarse(mesh& m, int workers);
void filaments(mesh& m);

}  // namespace weft::apps::tomcatv
