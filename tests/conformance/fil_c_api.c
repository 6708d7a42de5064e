/* The paper's C shape (Lowenthal, Freeh & Andrews §2): fInit, fCreatePoolSet, fCreatePools,
 * fCreateFilament, fStart, fReduce, fjFork/fjJoin — compiled as strict C11.
 * fil_c_api_test.cpp calls these functions. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "weft/weft.h"

enum { N = 30 };
static double grid_a[N][N], grid_b[N][N];
static double (*oldg)[N] = grid_a, (*newg)[N] = grid_b;
static weft_fil_red_t maxdiff;
static int iterations;
static int red_failed; /* a weft_fil_red_* call of the after function failed */

static void jacobi(int i, int j, void *arg) {
    (void)arg;
    double v = (oldg[i - 1][j] + oldg[i + 1][j] + oldg[i][j - 1] + oldg[i][j + 1]) * 0.25;
    double d = fabs(v - oldg[i][j]);
    double *local = (double *)weft_fil_local(maxdiff);
    newg[i][j] = v;
    if (d > *local) *local = d;
}

static int convergence_check(void *arg) {
    double md = 0, zero = 0;
    double (*t)[N] = oldg;
    (void)arg;
    if (weft_fil_reduce(maxdiff, WEFT_FIL_MAX, &md) != 0 || weft_fil_red_set(maxdiff, &zero) != 0) {
        red_failed = 1;
        return WEFT_FIL_DONE;
    }
    ++iterations;
    oldg = newg;
    newg = t;
    return md < 1e-4 ? WEFT_FIL_DONE : WEFT_FIL_CONTINUE;
}

/* Returns the iterations, or -1 on an error; *center receives a grid value. */
int fil_c_jacobi(double *center, int *path, int by_rows) {
    weft_fil_poolset_t ps;
    weft_fil_pool_t pools[64];
    int i, j, w = weft_num_workers();
    memset(grid_a, 0, sizeof grid_a);
    memset(grid_b, 0, sizeof grid_b);
    for (j = 0; j < N; ++j) grid_a[0][j] = grid_b[0][j] = 1.0;
    oldg = grid_a;
    newg = grid_b;
    iterations = 0;
    red_failed = 0;
    if (weft_fil_init() != 0) return -1;
    if (weft_fil_red_create(&maxdiff, WEFT_FIL_DOUBLE, 0, NULL) != 0) return -1;
    if (weft_fil_poolset_create(&ps, jacobi, convergence_check, NULL) != 0) return -1;
    if (w > 64 || weft_fil_pools_create(ps, (size_t)N * N, pools) != 0) return -1;
    for (i = 1; i < N - 1; ++i) {
        if (by_rows) {
            /* a row of filaments in one call */
            if (weft_fil_create_range(pools[(i - 1) * w / (N - 2)], i, i + 1, 1, 1, N - 1) != 0) return -1;
        } else {
            for (j = 1; j < N - 1; ++j) weft_fil_create(pools[(i - 1) * w / (N - 2)], i, j);
        }
    }
    if (weft_fil_start() != 0 || red_failed) return -1;
    *center = oldg[N / 2][N / 2];
    *path = weft_fil_pool_path(pools[0]);
    if (weft_fil_poolset_destroy(ps) != 0 || weft_fil_red_destroy(maxdiff) != 0) return -1;
    return iterations;
}

/* Adaptive quadrature with fjFork/fjJoin (Lowenthal, Freeh & Andrews §2.3). */
struct quad_args {
    double a, b, fa, fb, area;
};

static double f(double x) { return exp(x) * sin(x); }

static void quad(const void *argp, void *result) {
    const struct quad_args *q = (const struct quad_args *)argp;
    double m = (q->a + q->b) / 2, fm = f(m);
    double left_area = (fm + q->fa) * (m - q->a) / 2;
    double right_area = (q->fb + fm) * (q->b - m) / 2;
    if (fabs(left_area + right_area - q->area) < 1e-7) {
        *(double *)result = left_area + right_area;
    } else {
        double l = 0, r = 0;
        struct quad_args la = {q->a, m, q->fa, fm, left_area};
        struct quad_args ra = {m, q->b, fm, q->fb, right_area};
        weft_fil_fork(quad, &la, sizeof la, &l);
        weft_fil_fork(quad, &ra, sizeof ra, &r);
        weft_fil_join();
        *(double *)result = l + r;
    }
}

double fil_c_quad(double a, double b, int tree_only) {
    struct quad_args q = {a, b, f(a), f(b), (f(a) + f(b)) * (b - a) / 2};
    double r = 0;
    weft_fil_fj_options_t o;
    memset(&o, 0, sizeof o);
    o.no_receiver_initiated = tree_only;
    if (weft_fil_fj_run(quad, &q, sizeof q, &r, &o) != 0) return -1;
    return r;
}

/* The paper's main for quadrature: fjFork at top level, then fStart. */
double fil_c_quad_start(double a, double b) {
    struct quad_args q = {a, b, f(a), f(b), (f(a) + f(b)) * (b - a) / 2};
    double r = 0;
    if (weft_fil_fork(quad, &q, sizeof q, &r) != 0) return -1;
    if (weft_fil_start() != 0) return -1;
    return r;
}

/* Every built-in operator on both types. */
int fil_c_reduce_ops(void) {
    weft_fil_red_t ri, rd;
    int64_t vi, one = 1;
    double vd;
    int bad = 0;
    if (weft_fil_red_create(&ri, WEFT_FIL_INT64, 0, &one) != 0) return -1;
    if (weft_fil_red_create(&rd, WEFT_FIL_DOUBLE, 0, NULL) != 0) return -1;
    /* Every copy of ri is 1, every copy of rd is 0. */
    bad |= weft_fil_reduce(ri, WEFT_FIL_SUM, &vi) != 0 || vi != weft_num_workers();
    bad |= weft_fil_reduce(ri, WEFT_FIL_PROD, &vi) != 0 || vi != 1;
    bad |= weft_fil_reduce(ri, WEFT_FIL_MIN, &vi) != 0 || vi != 1;
    bad |= weft_fil_reduce(ri, WEFT_FIL_MAX, &vi) != 0 || vi != 1;
    bad |= weft_fil_reduce(ri, WEFT_FIL_LAND, &vi) != 0 || vi != 1;
    bad |= weft_fil_reduce(rd, WEFT_FIL_LOR, &vd) != 0 || vd != 0.0;
    bad |= weft_fil_reduce(rd, WEFT_FIL_SUM, &vd) != 0 || vd != 0.0;
    bad |= weft_fil_reduce(ri, 99, &vi) != EINVAL;
    bad |= weft_fil_red_destroy(ri) != 0;
    bad |= weft_fil_red_destroy(rd) != 0;
    return bad;
}

/* Back-and-forth order on each of the C loop's paths: three pools on worker 0
 * (a column, a row, and filaments out of order), three sweeps. Writes i*100+j
 * of every filament run, in order, to out (room for max); returns how many
 * ran, or -1 on an error. *paths receives the three pools' paths as digits. */
static int *order_out, order_n, order_max;
static int order_sweeps;

static void record(int i, int j, void *arg) {
    (void)arg;
    if (order_n < order_max) order_out[order_n] = i * 100 + j;
    ++order_n;
}

static int three_sweeps(void *arg) {
    (void)arg;
    return ++order_sweeps == 3 ? WEFT_FIL_DONE : WEFT_FIL_CONTINUE;
}

int fil_c_back_and_forth(int *out, int max, int *paths) {
    weft_fil_poolset_t ps;
    weft_fil_pool_t column, row, general;
    int k, rc;
    static const int scattered[3] = {9, 7, 8};
    order_out = out;
    order_n = 0;
    order_max = max;
    order_sweeps = 0;
    if (weft_fil_poolset_create(&ps, record, three_sweeps, NULL) != 0) return -1;
    if (weft_fil_pool_create(ps, 0, 4, &column) != 0 || weft_fil_pool_create(ps, 0, 4, &row) != 0 ||
        weft_fil_pool_create(ps, 0, 4, &general) != 0)
        return -1;
    for (k = 0; k < 3; ++k) weft_fil_create(column, 1 + 2 * k, 7); /* (1,7) (3,7) (5,7) */
    for (k = 0; k < 4; ++k) weft_fil_create(row, 2, k);             /* (2,0) .. (2,3) */
    for (k = 0; k < 3; ++k) weft_fil_create(general, scattered[k], 0);
    rc = weft_fil_run_sets(&ps, 1);
    *paths = weft_fil_pool_path(column) * 100 + weft_fil_pool_path(row) * 10 + weft_fil_pool_path(general);
    weft_fil_poolset_destroy(ps);
    return rc == 0 ? order_n : -1;
}
