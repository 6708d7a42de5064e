/* What the two plain Pthreads programs of `weft-bench shim` share (dcmm.c,
 * coarse.c): their inputs, their leaf kernel, their clock and the line they
 * print. Plain C and <pthread.h>: no weft header, so that the same binary runs
 * on glibc's threads and under libweft-pthread. The inputs and the kernel are
 * apps/matmul/matmul.hpp's (fill, leaf_multiply), so the weft-native version
 * computes the same matrix. */
#ifndef WEFT_BENCH_PTHREADS_COMMON_H
#define WEFT_BENCH_PTHREADS_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* A square block of a row-major matrix. */
struct view {
    double* p;
    size_t stride;
};

static inline double* at(struct view m, size_t i, size_t j) { return m.p + i * m.stride + j; }

/* apps/matmul's fill: xorshift, values in [-1, 1). */
static inline void fill(struct view m, size_t n, unsigned seed) {
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            *at(m, i, j) = (double)(x % 1000) / 500.0 - 1.0;
        }
}

/* C = A * B for n x n blocks, i-k-j order (apps/matmul's leaf_multiply). */
static inline void leaf_multiply(struct view a, struct view b, struct view c, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        double* ci = at(c, i, 0);
        for (size_t j = 0; j < n; ++j) ci[j] = 0.0;
        for (size_t k = 0; k < n; ++k) {
            const double aik = *at(a, i, k);
            const double* bk = at(b, k, 0);
            for (size_t j = 0; j < n; ++j) ci[j] += aik * bk[j];
        }
    }
}

static inline double* new_matrix(size_t n) {
    double* p = aligned_alloc(64, n * n * sizeof(double));
    if (p == NULL) {
        fprintf(stderr, "out of memory for a %zu x %zu matrix\n", n, n);
        exit(1);
    }
    return p;
}

static inline double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline double checksum(struct view c, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j) s += *at(c, i, j);
    return s;
}

/* Parses a decimal number in [1, max], or says which argument was wrong and exits 2. */
static inline size_t parse_size(const char* prog, const char* what, const char* text, unsigned long long max) {
    char* end = NULL;
    unsigned long long v = strtoull(text, &end, 10);
    if (*text < '0' || *text > '9' || *end != '\0' || v == 0 || v > max) {
        fprintf(stderr, "%s: %s must be a whole number in [1, %llu], got '%s'\n", prog, what, max, text);
        exit(2);
    }
    return (size_t)v;
}

#endif
