/* Sparse matrix-vector product: Narlikar & Blelloch's sparse benchmark
 * ("Pthreads for Dynamic and Irregular Parallelism", section 4: 20 products
 * w = M v with an unsymmetric matrix of 30,169 rows and 151,239 nonzeros from
 * a finite-element mesh), as a plain Pthreads program
 * (apps/pthreads/pthreads_app.h). Each product's result is the next one's
 * vector. Three versions:
 *   serial  the rows in order on one thread;
 *   fine    per product, T threads (default 128) created and joined, rows split
 *           equally by count: the scheduler balances the uneven rows; the
 *           threads create each other as a binary tree (fine_threads);
 *   coarse  a thread per core for the whole run, each with a contiguous range of
 *           rows holding about the same number of nonzeros, a barrier after each
 *           product (as the paper's coarse version).
 * Every row's dot product runs over its nonzeros in the same order in every
 * version, so the check against the serial result is exact.
 *
 * The matrix is generated (docs/design/pthreads-apps.md, "spmv"): the adjacency, plus the
 * diagonal, of a planar mesh on a grid of ceil(sqrt(R)) columns, numbered row
 * by row. A disc (the "basin": centre at half the width and 0.3 of the height,
 * radius a quarter of the width) is refined: each of its grid cells also gets both
 * diagonals (9 nonzeros a row there); outside it each grid edge is dropped with
 * probability 1/4 (about 4 a row). At R = 30,169 that is about 150K nonzeros,
 * spread unevenly over the rows as a mesh refined where the soil is soft is. */
#include "apps/pthreads/pthreads_app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "--version serial|coarse|fine [--rows R (16..10000000, default 30169)] [--products K (1..100000, default 20)] "
    "[--threads T (coarse: threads in all, default processors online; fine: threads per product, default 128; "
    "1..R)] [--seed S (default 1)] [--no-check]";

struct csr {
    size_t rows, nnz;
    size_t *start; /* row i's nonzeros are [start[i], start[i+1]) */
    size_t *column;
    double *value;
};

enum {
    MAX_ROW = 9
}; /* the diagonal and at most 8 neighbours */

static int in_basin(long x2, long y2, long width, long height) {
    /* In half-cell units, so that cell and edge midpoints are integers. */
    long cx = width, cy = 3 * height / 5, r = width / 2;
    return (x2 - cx) * (x2 - cx) + (y2 - cy) * (y2 - cy) <= r * r;
}

static void add_edge(size_t *count, size_t (*adj)[MAX_ROW], size_t a, size_t b) {
    adj[a][count[a]++] = b;
    adj[b][count[b]++] = a;
}

static int compare_size(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static struct csr generate_mesh_matrix(size_t rows, uint64_t *rng) {
    long width = 1;
    while ((size_t)(width * width) < rows) ++width;
    long height = ((long)rows + width - 1) / width;
    size_t *count = app_alloc(rows * sizeof *count);
    size_t(*adj)[MAX_ROW] = app_alloc(rows * sizeof *adj);
    for (size_t v = 0; v < rows; ++v) {
        adj[v][0] = v;
        count[v] = 1;
    }
    for (size_t v = 0; v < rows; ++v) {
        long x = (long)v % width, y = (long)v / width;
        size_t right = v + 1, up = v + (size_t)width;
        /* Grid edges: kept in the basin, dropped with probability 1/4 outside. */
        if (x + 1 < width && right < rows &&
            (in_basin(2 * x + 1, 2 * y, width, height) || (app_rng_next(rng) & 3) != 0))
            add_edge(count, adj, v, right);
        if (up < rows && (in_basin(2 * x, 2 * y + 1, width, height) || (app_rng_next(rng) & 3) != 0))
            add_edge(count, adj, v, up);
        /* Both diagonals of each basin cell whose four corners exist. */
        if (x + 1 < width && up + 1 < rows && in_basin(2 * x + 1, 2 * y + 1, width, height)) {
            add_edge(count, adj, v, up + 1);
            add_edge(count, adj, right, up);
        }
    }
    struct csr m = {rows, 0, app_alloc((rows + 1) * sizeof(size_t)), NULL, NULL};
    for (size_t v = 0; v < rows; ++v) {
        m.start[v] = m.nnz;
        m.nnz += count[v];
    }
    m.start[rows] = m.nnz;
    m.column = app_alloc(m.nnz * sizeof *m.column);
    m.value = app_alloc(m.nnz * sizeof *m.value);
    for (size_t v = 0; v < rows; ++v) {
        qsort(adj[v], count[v], sizeof(size_t), compare_size);
        /* Unsymmetric values: weights uniform in [0.5, 1.5), scaled so that
         * each row sums to 0.9 (the iterated vector neither grows nor vanishes). */
        double sum = 0;
        for (size_t k = 0; k < count[v]; ++k) {
            m.column[m.start[v] + k] = adj[v][k];
            m.value[m.start[v] + k] = 0.5 + app_rng_uniform(rng);
            sum += m.value[m.start[v] + k];
        }
        for (size_t k = 0; k < count[v]; ++k) m.value[m.start[v] + k] *= 0.9 / sum;
    }
    free(adj);
    free(count);
    return m;
}

static void multiply_rows(const struct csr *m, const double *v, double *w, size_t first, size_t end) {
    for (size_t i = first; i < end; ++i) {
        double sum = 0;
        for (size_t k = m->start[i]; k < m->start[i + 1]; ++k) sum += m->value[k] * v[m->column[k]];
        w[i] = sum;
    }
}

/* Returns the vector holding the last product (v or w). */
static double *run_serial(const struct csr *m, double *v, double *w, long products) {
    for (long k = 0; k < products; ++k) {
        multiply_rows(m, v, w, 0, m->rows);
        double *t = v;
        v = w;
        w = t;
    }
    return v;
}

/* ---- fine: T threads per product, equal numbers of rows ---- */

/* Threads [first, end) of a product's T: thread t multiplies rows
 * [t R / T, (t + 1) R / T). The thread running a range of more than one
 * creates a thread for the upper half and goes on with the lower half, so the
 * T threads are created as a binary tree: each of them multiplies one share,
 * and no thread creates more than log2 T (docs/design/pthreads-apps.md, "spmv"). */
struct fine_range {
    const struct csr *m;
    const double *v;
    double *w;
    size_t first, end, threads;
};

static void *fine_threads(void *arg) {
    struct fine_range *r = arg;
    pthread_t ids[64]; /* a split per halving: log2 of at most 10,000,000 threads */
    struct fine_range upper[64];
    int spawned = 0;
    while (r->end - r->first > 1) {
        size_t mid = r->first + (r->end - r->first) / 2;
        upper[spawned] = (struct fine_range){r->m, r->v, r->w, mid, r->end, r->threads};
        app_spawn(&ids[spawned], fine_threads, &upper[spawned]);
        ++spawned;
        r->end = mid;
    }
    size_t rows = r->m->rows, t = r->first;
    multiply_rows(r->m, r->v, r->w, t * rows / r->threads, (t + 1) * rows / r->threads);
    while (spawned > 0) app_join(ids[--spawned]);
    return NULL;
}

static double *run_fine(const struct csr *m, double *v, double *w, long products, size_t threads) {
    for (long k = 0; k < products; ++k) {
        struct fine_range all = {m, v, w, 0, threads, threads};
        pthread_t root;
        app_spawn(&root, fine_threads, &all);
        app_join(root);
        double *tmp = v;
        v = w;
        w = tmp;
    }
    return v;
}

/* ---- coarse: a thread per core, rows split by nonzeros, a barrier per product ---- */

struct coarse_shared {
    const struct csr *m;
    double *v, *w;
    long products;
    pthread_barrier_t barrier;
};

struct coarse_arg {
    struct coarse_shared *s;
    size_t first, end;
};

static void *coarse_worker(void *arg) {
    struct coarse_arg *a = arg;
    double *v = a->s->v, *w = a->s->w;
    for (long k = 0; k < a->s->products; ++k) {
        multiply_rows(a->s->m, v, w, a->first, a->end);
        app_barrier_wait(&a->s->barrier); /* w complete before anyone reads it as v */
        double *t = v;
        v = w;
        w = t;
    }
    return NULL;
}

static double *run_coarse(const struct csr *m, double *v, double *w, long products, size_t threads) {
    struct coarse_shared s = {m, v, w, products, {{0}}};
    app_barrier_init(&s.barrier, (unsigned)threads);
    pthread_t *ids = app_alloc(threads * sizeof *ids);
    struct coarse_arg *args = app_alloc(threads * sizeof *args);
    /* Thread t's rows start at the first row whose nonzeros begin at or past t/threads of them. */
    size_t row = 0;
    for (size_t t = 0; t < threads; ++t) {
        size_t first = row, target = (t + 1) * m->nnz / threads;
        while (row < m->rows && (t + 1 == threads || m->start[row + 1] <= target)) ++row;
        args[t] = (struct coarse_arg){&s, first, row};
    }
    for (size_t t = 0; t < threads; ++t) app_spawn(&ids[t], coarse_worker, &args[t]);
    for (size_t t = 0; t < threads; ++t) app_join(ids[t]);
    pthread_barrier_destroy(&s.barrier);
    free(args);
    free(ids);
    return products % 2 == 0 ? v : w;
}

int main(int argc, char **argv) {
    app_init("spmv", NULL);
    struct app_common common = {APP_SERIAL, 0, 1, 1};
    long rows = 30169, products = 20, threads = -1;
    for (int i = 1; i < argc; ++i) {
        if (app_parse_common(usage, argc, argv, &i, &common)) continue;
        const char *f = argv[i];
        if (strcmp(f, "--rows") == 0) {
            rows = app_parse_long(usage, f, app_flag_value(usage, argc, argv, &i), 16, 10000000);
        } else if (strcmp(f, "--products") == 0) {
            products = app_parse_long(usage, f, app_flag_value(usage, argc, argv, &i), 1, 100000);
        } else if (strcmp(f, "--threads") == 0) {
            threads = app_parse_long(usage, f, app_flag_value(usage, argc, argv, &i), 1, 10000000);
        } else {
            app_bad_argument(usage, "unknown argument '%s'", f);
        }
    }
    app_require_version(usage, &common);
    enum app_version version = common.version;
    if (threads >= 0 && version == APP_SERIAL)
        app_bad_argument(usage, "--threads applies to --version coarse and fine only");
    if (threads > rows) app_bad_argument(usage, "--threads %ld: expected 1 to the number of rows, %ld", threads, rows);
    if (threads < 0) threads = version == APP_FINE ? 128 : app_online_cpus();
    if (threads > rows) threads = rows;

    uint64_t rng = (uint64_t)common.seed;
    struct csr m = generate_mesh_matrix((size_t)rows, &rng);
    double *v0 = app_alloc(m.rows * sizeof *v0);
    for (size_t i = 0; i < m.rows; ++i) v0[i] = app_rng_uniform(&rng);
    uint64_t input_sum = app_checksum(m.start, (m.rows + 1) * sizeof *m.start) ^
                         app_checksum(m.column, m.nnz * sizeof *m.column) ^
                         app_checksum(m.value, m.nnz * sizeof *m.value) ^ app_checksum(v0, m.rows * sizeof *v0);
    printf("spmv: %zu rows, %zu nonzeros (%.2f a row), %ld products\n", m.rows, m.nnz, (double)m.nnz / (double)m.rows,
           products);

    double *v = app_alloc(m.rows * sizeof *v), *w = app_alloc(m.rows * sizeof *w);
    memcpy(v, v0, m.rows * sizeof *v);
    double start = app_now();
    double *result = version == APP_SERIAL ? run_serial(&m, v, w, products)
                     : version == APP_FINE ? run_fine(&m, v, w, products, (size_t)threads)
                                           : run_coarse(&m, v, w, products, (size_t)threads);
    double seconds = app_now() - start;
    app_report_time(version, seconds);

    if (common.check && version != APP_SERIAL) {
        double *rv = app_alloc(m.rows * sizeof *rv), *rw = app_alloc(m.rows * sizeof *rw);
        memcpy(rv, v0, m.rows * sizeof *rv);
        const double *ref = run_serial(&m, rv, rw, products);
        for (size_t i = 0; i < m.rows; ++i)
            if (memcmp(&ref[i], &result[i], sizeof(double)) != 0)
                app_fail("%s result differs from the serial version's at row %zu: %.17g, serial %.17g",
                         app_version_name(version), i, result[i], ref[i]);
        free(rw);
        free(rv);
    }
    char sizes[64];
    snprintf(sizes, sizeof sizes, "%zu rows, %ld products", m.rows, products);
    app_report_result(&common, sizes, input_sum, "result", app_checksum(result, m.rows * sizeof *result));
    free(w);
    free(v);
    free(v0);
    free(m.value);
    free(m.column);
    free(m.start);
    return 0;
}
