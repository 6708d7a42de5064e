/* coarse: the same product as dcmm.c written with a fixed coarse partition, as
 * a programmer who thinks in kernel threads writes it: one thread per core
 * (THREADS), each multiplying a contiguous block of rows of C, tile by tile
 * with the leaf kernel of common.h. `weft-bench shim` runs this one binary on
 * glibc's threads and under libweft-pthread, to show what the shim costs a
 * program that has no fine-grained threads.
 *
 *   coarse N TILE THREADS
 *
 * Prints one line: n, threads, time_s (the multiply alone), checksum (the sum
 * of C), max_live_threads (its threads) and peak_heap_bytes (its temporaries:
 * 0, it has none). */
#include <pthread.h>
#include <string.h>

#include "common.h"

static size_t n, tile, nthreads;
static struct view a, b, c;

struct part {
    size_t first, last; /* rows [first, last) of C, a whole number of tiles */
    pthread_t thread;
};

static void* multiply_rows(void* arg) {
    struct part* p = arg;
    double* t = new_matrix(tile); /* a tile of the product, accumulated into C */
    struct view tv = {t, tile};
    for (size_t i = p->first; i < p->last; i += tile)
        for (size_t j = 0; j < n; j += tile) {
            for (size_t r = 0; r < tile; ++r) memset(at(c, i + r, j), 0, tile * sizeof(double));
            for (size_t k = 0; k < n; k += tile) {
                struct view ai = {at(a, i, k), n}, bk = {at(b, k, j), n};
                leaf_multiply(ai, bk, tv, tile);
                for (size_t r = 0; r < tile; ++r) {
                    double* cr = at(c, i + r, j);
                    for (size_t s = 0; s < tile; ++s) cr[s] += t[r * tile + s];
                }
            }
        }
    free(t);
    return NULL;
}

int main(int argc, char** argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s N TILE THREADS   (C = A * B for N x N doubles, N a multiple of TILE)\n", argv[0]);
        return 2;
    }
    n = parse_size(argv[0], "N", argv[1], 65536);
    tile = parse_size(argv[0], "TILE", argv[2], 65536);
    nthreads = parse_size(argv[0], "THREADS", argv[3], 4096);
    if (n % tile != 0) {
        fprintf(stderr, "%s: N must be a multiple of TILE, got N = %zu, TILE = %zu\n", argv[0], n, tile);
        return 2;
    }
    a = (struct view){new_matrix(n), n};
    b = (struct view){new_matrix(n), n};
    c = (struct view){new_matrix(n), n};
    fill(a, n, 1);
    fill(b, n, 2);

    size_t tiles = n / tile;
    struct part* parts = calloc(nthreads, sizeof *parts);
    if (parts == NULL) return 1;
    double t0 = seconds_now();
    for (size_t w = 0; w < nthreads; ++w) {
        parts[w].first = tiles * w / nthreads * tile;
        parts[w].last = tiles * (w + 1) / nthreads * tile;
        int rc = pthread_create(&parts[w].thread, NULL, multiply_rows, &parts[w]);
        if (rc != 0) {
            fprintf(stderr, "coarse: pthread_create failed: %s\n", strerror(rc));
            return 1;
        }
    }
    for (size_t w = 0; w < nthreads; ++w) pthread_join(parts[w].thread, NULL);
    double t = seconds_now() - t0;

    printf("coarse n=%zu threads=%zu time_s=%.6f checksum=%.17g max_live_threads=%zu peak_heap_bytes=0\n", n, nthreads,
           t, checksum(c, n), nthreads);
    free(parts);
    free(a.p);
    free(b.p);
    free(c.p);
    return 0;
}
