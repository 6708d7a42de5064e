// The Mandelbrot set (Lowenthal et al. §4.4): for each point of an n x n image of the
// rectangle [-2, 0.6] x [-1.3, 1.3] of the complex plane, the number of
// iterations of z <- z^2 + c (from z = 0) before |z| > 2, at most `max_iter`.
// Points cost very different amounts (points of the set cost max_iter) and
// share no data; adjacent rows cost about the same.
//
// Versions (every one computes a point with `escape`):
//   serial     plain loops over the rows;
//   coarse     one std::thread per worker; row i goes to thread i mod p (the
//              paper's cyclic rows, for balance);
//   filaments  one iterative filament per point, in one pool per worker; the
//              filaments of row i go to pool i mod p, so each pool is a dense
//              block of rows with stride p, which the runtime recognises and
//              runs as a plain loop (§3.1); one sweep, no after function.
// The iteration counts are integers computed by the same arithmetic in every
// version, so every version's image equals the serial one exactly.
#pragma once

#include <cstdint>
#include <vector>

namespace weft::apps::mandelbrot {

inline constexpr int max_iter = 1000;

// The point c of pixel (i, j) (row i, column j) of an n x n image.
inline double re_of(int j, int n) { return -2.0 + 2.6 * j / n; }
inline double im_of(int i, int n) { return 1.3 - 2.6 * i / n; }

// One filament: the iteration count of c = cr + i ci (noinline: one copy of
// the loop, whichever version calls it; inlined, GCC gave each version's copy
// its own register allocation. A point's loop is long beside the one call
// per point that every version makes alike).
__attribute__((noinline)) inline std::int32_t escape(double cr, double ci) {
    double x = 0.0, y = 0.0;
    std::int32_t k = 0;
    while (k < max_iter) {
        const double xx = x * x, yy = y * y;
        if (xx + yy > 4.0) break;
        y = 2.0 * x * y + ci;
        x = xx - yy + cr;
        ++k;
    }
    return k;
}

inline void point(std::int32_t* img, int n, int i, int j) {
    img[static_cast<std::size_t>(i) * n + j] = escape(re_of(j, n), im_of(i, n));
}

inline void serial(std::int32_t* img, int n) {
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) point(img, n, i, j);
}
void coarse(std::int32_t* img, int n, int workers);
void filaments(std::int32_t* img, int n);

}  // namespace weft::apps::mandelbrot
