// 2-D FFT of an n x n complex array, n a power of two (Lowenthal et al. §4.4: "a
// sequential FFT on each row, then a transpose, and finally a sequential FFT on
// each column"; the transpose "does not parallelize efficiently and hence is
// executed sequentially").
//
// Every version runs the same four steps with the same basic blocks:
//   1. an iterative radix-2 FFT (bit-reversal, then log2 n butterfly passes
//      with a shared twiddle table) on every row;
//   2. a transpose (blocked, in place, sequential in every version);
//   3. the row FFT again on every row (the columns of the input);
//   4. the transpose back, so the result is in natural (row, column) order.
// They differ in how steps 1 and 3 run:
//   serial     a loop over the rows;
//   filaments  one pool set with one iterative filament per row (i, 0), the
//              rows placed on the workers' pools in contiguous strips (so each
//              pool is a dense 1-D range, run as a plain loop: §3.1); it sweeps
//              twice, and its after function, run by one worker while the
//              others wait at the barrier, is the sequential transpose. The
//              set runs in forward order: between its two sweeps the transpose
//              has touched the whole array, so a backward sweep (§3.1's
//              back-and-forth) would find nothing in cache and only defeat the
//              hardware prefetcher;
//   coarse     one kernel thread per worker, each an equal block of rows, with
//              a sweep_barrier whose completion step (one thread) transposes.
// The per-row arithmetic is the same function everywhere, so every version's
// output equals the serial one bit for bit.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace weft::apps::fft2d {

struct cplx {
    double re, im;
};

// What every row FFT of an n-point transform shares: the twiddles
// w^k = exp(-2 pi i k / n), k < n/2, and the bit-reversal permutation.
struct plan {
    explicit plan(std::size_t n_) : n(n_), twiddle(n_ / 2), rev(n_) {
        unsigned bits = 0;
        while ((std::size_t{1} << bits) < n) ++bits;
        const double pi = std::acos(-1.0);
        for (std::size_t k = 0; k < n / 2; ++k) {
            double a = -2.0 * pi * static_cast<double>(k) / static_cast<double>(n);
            twiddle[k] = {std::cos(a), std::sin(a)};
        }
        for (std::size_t i = 0; i < n; ++i) {
            std::size_t r = 0;
            for (unsigned b = 0; b < bits; ++b) r |= ((i >> b) & 1u) << (bits - 1 - b);
            rev[i] = static_cast<std::uint32_t>(r);
        }
    }
    std::size_t n;
    std::vector<cplx> twiddle;
    std::vector<std::uint32_t> rev;
};

// The forward FFT of one row of p.n points, in place (noinline: one copy of the
// arithmetic, whichever version calls it).
__attribute__((noinline)) inline void fft_row(const plan& p, cplx* x) {
    const std::size_t n = p.n;
    for (std::size_t i = 0; i < n; ++i)
        if (std::size_t r = p.rev[i]; i < r) std::swap(x[i], x[r]);
    const cplx* w = p.twiddle.data();
    for (std::size_t half = 1, stride = n / 2; half < n; half *= 2, stride /= 2) {
        for (std::size_t base = 0; base < n; base += 2 * half) {
            cplx* lo = x + base;
            cplx* hi = lo + half;
            for (std::size_t k = 0; k < half; ++k) {
                const cplx t = w[k * stride];
                const double re = hi[k].re * t.re - hi[k].im * t.im;
                const double im = hi[k].re * t.im + hi[k].im * t.re;
                hi[k] = {lo[k].re - re, lo[k].im - im};
                lo[k] = {lo[k].re + re, lo[k].im + im};
            }
        }
    }
}

// Transposes the n x n array a in place, in tiles of 32 x 32 (sequential).
__attribute__((noinline)) inline void transpose(cplx* a, std::size_t n) {
    constexpr std::size_t tile = 32;
    for (std::size_t ib = 0; ib < n; ib += tile)
        for (std::size_t jb = ib; jb < n; jb += tile) {
            const std::size_t ie = ib + tile < n ? ib + tile : n, je = jb + tile < n ? jb + tile : n;
            for (std::size_t i = ib; i < ie; ++i)
                for (std::size_t j = (ib == jb ? i + 1 : jb); j < je; ++j) std::swap(a[i * n + j], a[j * n + i]);
        }
}

// Deterministic input: a few waves plus xorshift noise.
inline void fill(cplx* a, std::size_t n) {
    std::uint32_t x = 2463534242u;
    for (std::size_t i = 0; i < n * n; ++i) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        a[i] = {static_cast<double>(x % 2000) / 1000.0 - 1.0, static_cast<double>((x >> 11) % 2000) / 1000.0 - 1.0};
    }
}

// The serial version.
void serial(const plan& p, cplx* a);
// The filaments version (the running weft runtime's workers).
void filaments(const plan& p, cplx* a);
// The coarse-grain version: `workers` kernel threads.
void coarse(const plan& p, cplx* a, int workers);

}  // namespace weft::apps::fft2d
