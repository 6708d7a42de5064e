// Divide-and-conquer matrix multiply, Narlikar & Blelloch, Figure 4.
//
//   Mult(A, B, C, n):                       C = A * B, n x n
//     if n <= leaf: serial kernel
//     T = allocate n x n
//     fork  Mult(A11,B11,C11) Mult(A11,B12,C12) Mult(A21,B11,C21) Mult(A21,B12,C22)
//           Mult(A12,B21,T11) Mult(A12,B22,T12) Mult(A22,B21,T21) Mult(A22,B22,T22)
//     join
//     Add(T, C, n)                          C += T, itself 4 recursive forks
//     free T
//
// The algorithm is written once, over an `Exec` that says how to fork and join
// and where temporaries come from, so the serial version, the weft version and
// the peers (OpenMP tasks, oneTBB) run exactly the same arithmetic:
//   exec.fork_join(f1, ..., fk)   runs the callables, in parallel if it can
//   exec.allocate(bytes) / exec.release(p, bytes)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace weft::apps::matmul {

// A square block of a row-major matrix.
struct view {
    double* p;
    std::size_t stride;  // elements between rows
    double& at(std::size_t i, std::size_t j) const { return p[i * stride + j]; }
};

// Quadrant (r, c) of an m x m block, h = m / 2.
inline view quadrant(view m, std::size_t h, int r, int c) { return {m.p + r * h * m.stride + c * h, m.stride}; }

// The serial kernel below the leaf size: C = A * B (i-k-j order, so the inner
// loop streams rows of B and C and vectorizes).
inline void leaf_multiply(view a, view b, view c, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        double* ci = &c.at(i, 0);
        for (std::size_t j = 0; j < n; ++j) ci[j] = 0.0;
        for (std::size_t k = 0; k < n; ++k) {
            const double aik = a.at(i, k);
            const double* bk = &b.at(k, 0);
            for (std::size_t j = 0; j < n; ++j) ci[j] += aik * bk[j];
        }
    }
}

// C += T
inline void leaf_add(view t, view c, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        double* ci = &c.at(i, 0);
        const double* ti = &t.at(i, 0);
        for (std::size_t j = 0; j < n; ++j) ci[j] += ti[j];
    }
}

template <class Exec>
void add(Exec& ex, view t, view c, std::size_t n, std::size_t leaf) {
    if (n <= leaf) {
        leaf_add(t, c, n);
        return;
    }
    std::size_t h = n / 2;
    ex.fork_join([&] { add(ex, quadrant(t, h, 0, 0), quadrant(c, h, 0, 0), h, leaf); },
                 [&] { add(ex, quadrant(t, h, 0, 1), quadrant(c, h, 0, 1), h, leaf); },
                 [&] { add(ex, quadrant(t, h, 1, 0), quadrant(c, h, 1, 0), h, leaf); },
                 [&] { add(ex, quadrant(t, h, 1, 1), quadrant(c, h, 1, 1), h, leaf); });
}

// C = A * B for n x n blocks; n / leaf must be a power of two.
template <class Exec>
void multiply(Exec& ex, view a, view b, view c, std::size_t n, std::size_t leaf) {
    if (n <= leaf) {
        leaf_multiply(a, b, c, n);
        return;
    }
    std::size_t h = n / 2;
    std::size_t bytes = n * n * sizeof(double);
    view t{static_cast<double*>(ex.allocate(bytes)), n};
    auto A = [&](int r, int col) { return quadrant(a, h, r, col); };
    auto B = [&](int r, int col) { return quadrant(b, h, r, col); };
    auto C = [&](int r, int col) { return quadrant(c, h, r, col); };
    auto T = [&](int r, int col) { return quadrant(t, h, r, col); };
    ex.fork_join([&] { multiply(ex, A(0, 0), B(0, 0), C(0, 0), h, leaf); },
                 [&] { multiply(ex, A(0, 0), B(0, 1), C(0, 1), h, leaf); },
                 [&] { multiply(ex, A(1, 0), B(0, 0), C(1, 0), h, leaf); },
                 [&] { multiply(ex, A(1, 0), B(0, 1), C(1, 1), h, leaf); },
                 [&] { multiply(ex, A(0, 1), B(1, 0), T(0, 0), h, leaf); },
                 [&] { multiply(ex, A(0, 1), B(1, 1), T(0, 1), h, leaf); },
                 [&] { multiply(ex, A(1, 1), B(1, 0), T(1, 0), h, leaf); },
                 [&] { multiply(ex, A(1, 1), B(1, 1), T(1, 1), h, leaf); });
    add(ex, t, c, n, leaf);
    ex.release(t.p, bytes);
}

// Every matrix and temporary starts on a cache line (all versions alike).
// malloc's 16-byte alignment put each row of a leaf block across a line that
// it shared with the block beside it; two workers computing neighbouring
// blocks at once would fight over those lines (false sharing; a scheduler
// that splits one subtree between workers meets it most: docs/design/dfs.md,
// "Per-worker deques").
inline constexpr std::size_t matrix_alignment = 64;

inline void* allocate_matrix_bytes(std::size_t bytes) {
    std::size_t rounded = (bytes + matrix_alignment - 1) / matrix_alignment * matrix_alignment;
    return std::aligned_alloc(matrix_alignment, rounded);
}

// Serial execution: plain calls, malloc, and the heap high-water mark the
// serial program needs (S1 in the paper's bound).
struct serial_exec {
    std::size_t heap = 0;
    std::size_t heap_peak = 0;
    template <class... F>
    void fork_join(F&&... f) {
        (f(), ...);
    }
    void* allocate(std::size_t bytes) {
        heap += bytes;
        if (heap > heap_peak) heap_peak = heap;
        return allocate_matrix_bytes(bytes);
    }
    void release(void* p, std::size_t bytes) {
        heap -= bytes;
        std::free(p);
    }
};

// Deterministic inputs and a checksum to compare versions.
inline void fill(view m, std::size_t n, unsigned seed) {
    std::uint32_t x = seed * 2654435761u + 1;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            m.at(i, j) = static_cast<double>(x % 1000) / 500.0 - 1.0;
        }
}

// Max |x - y| over two n x n results.
inline double max_abs_diff(view x, view y, std::size_t n) {
    double d = 0;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            double e = x.at(i, j) - y.at(i, j);
            if (e < 0) e = -e;
            if (e > d) d = e;
        }
    return d;
}

}  // namespace weft::apps::matmul
