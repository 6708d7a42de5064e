/* dcmm: Narlikar & Blelloch's divide-and-conquer matrix multiply (Figure 4 of
 * "Pthreads for Dynamic and Irregular Parallelism") written as a plain Pthreads
 * program: a pthread_create for every recursive call, default attributes, a
 * temporary from malloc per level. `weft-bench shim` runs this one binary on
 * glibc's threads and under libweft-pthread (LD_PRELOAD), unchanged.
 *
 *   dcmm N LEAF [serial]   C = A * B for N x N doubles, serial kernel at LEAF;
 *                          "serial": every call a plain call, no thread
 *
 * Prints one line: n, leaf, time_s (the multiply alone), checksum (the sum of
 * C), max_live_threads (the most of its threads live at once: from just
 * before its pthread_create to the end of its function, as weft counts its
 * threads) and peak_heap_bytes (the most bytes of its temporaries live at
 * once, each counted once its allocation has returned, as weft's heap
 * high-water mark counts: under dfs a large allocation first waits behind
 * dummy threads, and counting it before the call counted that wait as held
 * memory). The recursion is apps/matmul/matmul.hpp's:
 * 8 multiplies into C's quadrants and a temporary T, then C += T by 4
 * recursive adds, each call a thread of its own. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "common.h"

static size_t leaf;
static int serial;
static atomic_long live_threads, max_live;
static atomic_size_t heap_now, heap_peak;

static void raise_to(atomic_long* max, long v) {
    long m = atomic_load(max);
    while (v > m && !atomic_compare_exchange_weak(max, &m, v)) {
    }
}

static void* temporary(size_t bytes) {
    void* t = aligned_alloc(64, bytes);
    if (t == NULL) {
        fprintf(stderr, "dcmm: out of memory for a temporary of %zu bytes\n", bytes);
        exit(1);
    }
    size_t now = atomic_fetch_add(&heap_now, bytes) + bytes;
    size_t p = atomic_load(&heap_peak);
    while (now > p && !atomic_compare_exchange_weak(&heap_peak, &p, now)) {
    }
    return t;
}

static void release(void* p, size_t bytes) {
    atomic_fetch_sub(&heap_now, bytes);
    free(p);
}

static struct view quadrant(struct view m, size_t h, int r, int c) {
    struct view q = {m.p + r * h * m.stride + c * h, m.stride};
    return q;
}

struct call {
    struct view a, b, c; /* multiply: C = A * B; add: C += A (b unused) */
    size_t n;
    pthread_t thread;
    void* (*fn)(void*);
};

static void* multiply(void* arg);
static void* add(void* arg);

/* A call's thread: the call, then it is no longer live. */
static void* run_call(void* arg) {
    struct call* x = arg;
    x->fn(x);
    atomic_fetch_sub(&live_threads, 1);
    return NULL;
}

/* Runs calls[0..k) each on a thread of its own (in serial mode, in turn) and
 * waits for them all. */
static void fork_join(void* (*fn)(void*), struct call* calls, int k) {
    for (int i = 0; i < k; ++i) {
        if (serial) {
            fn(&calls[i]);
            continue;
        }
        calls[i].fn = fn;
        raise_to(&max_live, atomic_fetch_add(&live_threads, 1) + 1);
        int rc = pthread_create(&calls[i].thread, NULL, run_call, &calls[i]);
        if (rc != 0) {
            fprintf(stderr, "dcmm: pthread_create failed: %s\n", strerror(rc));
            exit(1);
        }
    }
    if (!serial)
        for (int i = 0; i < k; ++i) pthread_join(calls[i].thread, NULL);
}

static void* add(void* arg) {
    struct call* x = arg;
    if (x->n <= leaf) {
        for (size_t i = 0; i < x->n; ++i) {
            double* ci = at(x->c, i, 0);
            const double* ti = at(x->a, i, 0);
            for (size_t j = 0; j < x->n; ++j) ci[j] += ti[j];
        }
    } else {
        size_t h = x->n / 2;
        struct call calls[4];
        for (int q = 0; q < 4; ++q)
            calls[q] = (struct call){quadrant(x->a, h, q / 2, q % 2), {0}, quadrant(x->c, h, q / 2, q % 2), h, 0, NULL};
        fork_join(add, calls, 4);
    }
    return NULL;
}

static void* multiply(void* arg) {
    struct call* x = arg;
    if (x->n <= leaf) {
        leaf_multiply(x->a, x->b, x->c, x->n);
    } else {
        size_t n = x->n, h = n / 2, bytes = n * n * sizeof(double);
        struct view t = {temporary(bytes), n};
        struct view a = x->a, b = x->b, c = x->c;
        /* C11 += A1k * Bk1 ...: the k = 0 products go to C, the k = 1 ones to T. */
        struct call calls[8] = {
            {quadrant(a, h, 0, 0), quadrant(b, h, 0, 0), quadrant(c, h, 0, 0), h, 0, NULL},
            {quadrant(a, h, 0, 0), quadrant(b, h, 0, 1), quadrant(c, h, 0, 1), h, 0, NULL},
            {quadrant(a, h, 1, 0), quadrant(b, h, 0, 0), quadrant(c, h, 1, 0), h, 0, NULL},
            {quadrant(a, h, 1, 0), quadrant(b, h, 0, 1), quadrant(c, h, 1, 1), h, 0, NULL},
            {quadrant(a, h, 0, 1), quadrant(b, h, 1, 0), quadrant(t, h, 0, 0), h, 0, NULL},
            {quadrant(a, h, 0, 1), quadrant(b, h, 1, 1), quadrant(t, h, 0, 1), h, 0, NULL},
            {quadrant(a, h, 1, 1), quadrant(b, h, 1, 0), quadrant(t, h, 1, 0), h, 0, NULL},
            {quadrant(a, h, 1, 1), quadrant(b, h, 1, 1), quadrant(t, h, 1, 1), h, 0, NULL},
        };
        fork_join(multiply, calls, 8);
        struct call sum = {t, {0}, c, n, 0, NULL};
        fork_join(add, &sum, 1);
        release(t.p, bytes);
    }
    return NULL;
}

int main(int argc, char** argv) {
    if (argc != 3 && !(argc == 4 && strcmp(argv[3], "serial") == 0)) {
        fprintf(stderr,
                "usage: %s N LEAF [serial]   (C = A * B for N x N doubles; N / LEAF a power of two; serial: no "
                "threads)\n",
                argv[0]);
        return 2;
    }
    serial = argc == 4;
    size_t n = parse_size(argv[0], "N", argv[1], 65536);
    leaf = parse_size(argv[0], "LEAF", argv[2], 65536);
    size_t blocks = n / leaf;
    if (n % leaf != 0 || (blocks & (blocks - 1)) != 0) {
        fprintf(stderr, "%s: N / LEAF must be a power of two, got N = %zu, LEAF = %zu\n", argv[0], n, leaf);
        return 2;
    }
    struct view a = {new_matrix(n), n}, b = {new_matrix(n), n}, c = {new_matrix(n), n};
    fill(a, n, 1);
    fill(b, n, 2);
    memset(c.p, 0, n * n * sizeof(double));

    double t0 = seconds_now();
    struct call root = {a, b, c, n, 0, NULL};
    fork_join(multiply, &root, 1);
    double t = seconds_now() - t0;

    printf("dcmm n=%zu leaf=%zu time_s=%.6f checksum=%.17g max_live_threads=%ld peak_heap_bytes=%zu\n", n, leaf, t,
           checksum(c, n), (long)atomic_load(&max_live), (size_t)atomic_load(&heap_peak));
    free(a.p);
    free(b.p);
    free(c.p);
    return 0;
}
