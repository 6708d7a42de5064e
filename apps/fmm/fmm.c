/* Fast multipole method: Narlikar & Blelloch's FMM benchmark ("Pthreads for
 * Dynamic and Irregular Parallelism", section 4: the uniform FMM on 10,000
 * uniformly distributed particles, a tree of 4 levels, 5 terms in the
 * multipole and local expansions; phase 3 allocates), as a plain Pthreads
 * program (apps/pthreads/pthreads_app.h).
 *
 * It is Greengard & Rokhlin's two-dimensional FMM in complex variables ("A
 * fast algorithm for particle simulations", 1987): charges q_j at z_j in the
 * unit square, the potential Re sum_j q_j log(z - z_j) and the field
 * sum_j q_j / (z - z_j) at every particle, on a uniform quadtree of --levels
 * refinements, expansions to order --terms. The passes:
 *   up     a leaf's multipole expansion from its particles; a box's from its
 *          four children's, shifted (bottom up);
 *   down   a box's local expansion: its parent's, shifted, plus one
 *          multipole-to-local translation per box of its interaction list,
 *          each into a temporary expansion allocated for it (malloc) and
 *          summed in list order (top down): the paper's allocating phase;
 *   leaves each particle: its leaf's local expansion, plus the particles of
 *          the leaf and its eight neighbours directly.
 * Three versions:
 *   serial  one thread;
 *   fine    a thread per box in each pass (a box's thread creates its
 *           children's), and in the downward pass a thread per translation of
 *           the interaction list (up to 27 a box), each allocating its
 *           temporary expansion;
 *   coarse  a thread per core: each level's boxes split into equal contiguous
 *           ranges, a barrier after each level.
 * Each expansion and each particle's sums are computed by the same functions
 * in the same order in every version, so the results equal the serial
 * version's bit for bit; up to 4,096 particles they are also compared with
 * direct summation (docs/design/pthreads-apps.md, "fmm", states the tolerance). */
#include "apps/pthreads/pthreads_app.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "--version serial|coarse|fine [--particles N (16..10000000, default 10000)] [--levels L (2..10, default 4)] "
    "[--terms P (1..30, default 5)] [--threads T (coarse only, 1..4096, default processors online)] "
    "[--seed S (default 1)] [--no-check]";

enum {
    DIRECT_CHECK = 4096,
    MAX_TERMS = 30
};

static const double DIRECT_TOLERANCE = 5e-3;

struct fmm {
    size_t n;
    int levels, terms;
    const double complex *z;
    const double *q;
    /* Particles by leaf: leaf b's are order[first[b] .. first[b+1]). */
    uint32_t *order;
    size_t *first;
    /* Per level l (0..levels), 4^l boxes in row-major order, each terms+1 coefficients. */
    double complex *multipole[11], *local[11];
    double binomial[2 * MAX_TERMS + 1][2 * MAX_TERMS + 1];
    double *potential;
    double complex *field;
};

static long side(int level) { return 1L << level; }

static double complex centre(int level, long box) {
    double h = 1.0 / (double)side(level);
    return ((double)(box % side(level)) + 0.5) * h + I * (((double)(box / side(level)) + 0.5) * h);
}

static double complex *coeffs(double complex *base, const struct fmm *f, long box) {
    return base + (size_t)box * (size_t)(f->terms + 1);
}

/* ---- the expansions (Greengard & Rokhlin's lemmas) ---- */

/* A leaf's multipole expansion about its centre: a_0 = sum q, a_k = -sum q dz^k / k. */
static void particles_to_multipole(const struct fmm *f, long leaf) {
    double complex *a = coeffs(f->multipole[f->levels], f, leaf), c = centre(f->levels, leaf);
    for (int k = 0; k <= f->terms; ++k) a[k] = 0;
    for (size_t j = f->first[leaf]; j < f->first[leaf + 1]; ++j) {
        uint32_t i = f->order[j];
        double complex dz = f->z[i] - c, power = dz;
        a[0] += f->q[i];
        for (int k = 1; k <= f->terms; ++k) {
            a[k] -= f->q[i] * power / k;
            power *= dz;
        }
    }
}

/* A box's multipole expansion from its four children's, each shifted to its centre. */
static void children_to_multipole(const struct fmm *f, int level, long box) {
    double complex *b = coeffs(f->multipole[level], f, box), c = centre(level, box);
    long x = box % side(level), y = box / side(level);
    for (int l = 0; l <= f->terms; ++l) b[l] = 0;
    for (int k = 0; k < 4; ++k) {
        long child = (2 * y + k / 2) * side(level + 1) + 2 * x + k % 2;
        const double complex *a = coeffs(f->multipole[level + 1], f, child);
        double complex z0 = centre(level + 1, child) - c;
        b[0] += a[0];
        double complex z0l = 1;
        for (int l = 1; l <= f->terms; ++l) {
            z0l *= z0;
            double complex sum = -a[0] * z0l / l, z0lk = 1; /* z0^(l-k), from k = l down */
            for (int m = l; m >= 1; --m) {
                sum += a[m] * z0lk * f->binomial[l - 1][m - 1];
                z0lk *= z0;
            }
            b[l] += sum;
        }
    }
}

/* The local expansion about centre c of the multipole expansion a about a
 * well-separated centre (z0 = a's centre - c), into out. */
static void multipole_to_local(const struct fmm *f, const double complex *a, double complex z0, double complex *out) {
    double complex inv = 1.0 / z0, sign_pow[MAX_TERMS + 1]; /* (-1)^k a_k / z0^k */
    double complex p = 1;
    for (int k = 1; k <= f->terms; ++k) {
        p *= -inv;
        sign_pow[k] = a[k] * p;
    }
    double complex b0 = a[0] * clog(-z0);
    for (int k = 1; k <= f->terms; ++k) b0 += sign_pow[k];
    out[0] = b0;
    double complex invl = 1;
    for (int l = 1; l <= f->terms; ++l) {
        invl *= inv;
        double complex sum = -a[0] / l;
        for (int k = 1; k <= f->terms; ++k) sum += sign_pow[k] * f->binomial[l + k - 1][k - 1];
        out[l] = sum * invl;
    }
}

/* A box's local expansion: its parent's shifted to its centre (zero at level 2). */
static void parent_to_local(const struct fmm *f, int level, long box) {
    double complex *b = coeffs(f->local[level], f, box);
    if (level == 2) {
        for (int l = 0; l <= f->terms; ++l) b[l] = 0;
        return;
    }
    long parent = (box / side(level) / 2) * side(level - 1) + (box % side(level)) / 2;
    const double complex *a = coeffs(f->local[level - 1], f, parent);
    double complex d = centre(level, box) - centre(level - 1, parent);
    for (int l = 0; l <= f->terms; ++l) {
        double complex sum = 0, dk = 1; /* d^(k-l) */
        for (int k = l; k <= f->terms; ++k) {
            sum += a[k] * f->binomial[k][l] * dk;
            dk *= d;
        }
        b[l] = sum;
    }
}

/* The boxes of box's interaction list at level (>= 2): the children of its
 * parent's neighbours (and parent) that are not its neighbours; row-major order. */
static int interaction_list(int level, long box, long list[27]) {
    long s = side(level), x = box % s, y = box / s, px = x / 2, py = y / 2;
    int count = 0;
    for (long cy = 2 * (py - 1); cy < 2 * (py + 2); ++cy)
        for (long cx = 2 * (px - 1); cx < 2 * (px + 2); ++cx) {
            if (cx < 0 || cy < 0 || cx >= s || cy >= s) continue;
            if (labs(cx - x) <= 1 && labs(cy - y) <= 1) continue;
            list[count++] = cy * s + cx;
        }
    return count;
}

/* One translation of the interaction list into a temporary expansion, which
 * the caller sums and frees. */
static double complex *translate(const struct fmm *f, int level, long box, long source) {
    double complex *tmp = app_alloc((size_t)(f->terms + 1) * sizeof *tmp);
    multipole_to_local(f, coeffs(f->multipole[level], f, source), centre(level, source) - centre(level, box), tmp);
    return tmp;
}

static void add_translations(const struct fmm *f, int level, long box, double complex **tmp, int count) {
    double complex *b = coeffs(f->local[level], f, box);
    for (int k = 0; k < count; ++k) {
        for (int l = 0; l <= f->terms; ++l) b[l] += tmp[k][l];
        free(tmp[k]);
    }
}

/* The potential and field at each particle of a leaf: its local expansion and
 * the particles of the leaf and its neighbours (row-major), directly. */
static void evaluate_leaf(const struct fmm *f, long leaf) {
    const double complex *b = coeffs(f->local[f->levels], f, leaf);
    double complex c = centre(f->levels, leaf);
    long s = side(f->levels), x = leaf % s, y = leaf / s;
    for (size_t j = f->first[leaf]; j < f->first[leaf + 1]; ++j) {
        uint32_t i = f->order[j];
        double complex dz = f->z[i] - c, phi = b[f->terms], e = f->terms * b[f->terms];
        for (int l = f->terms - 1; l >= 0; --l) phi = phi * dz + b[l]; /* Horner */
        for (int l = f->terms - 1; l >= 1; --l) e = e * dz + l * b[l];
        double pot = creal(phi);
        for (long ny = y - 1; ny <= y + 1; ++ny)
            for (long nx = x - 1; nx <= x + 1; ++nx) {
                if (nx < 0 || ny < 0 || nx >= s || ny >= s) continue;
                long nb = ny * s + nx;
                for (size_t m = f->first[nb]; m < f->first[nb + 1]; ++m) {
                    uint32_t k = f->order[m];
                    if (k == i) continue;
                    double complex d = f->z[i] - f->z[k];
                    pot += 0.5 * f->q[k] * log(creal(d) * creal(d) + cimag(d) * cimag(d));
                    e += f->q[k] / d;
                }
            }
        f->potential[i] = pot;
        f->field[i] = e;
    }
}

/* ---- serial ---- */

static void down_box_serial(const struct fmm *f, int level, long box) {
    parent_to_local(f, level, box);
    long list[27];
    double complex *tmp[27];
    int count = interaction_list(level, box, list);
    for (int k = 0; k < count; ++k) tmp[k] = translate(f, level, box, list[k]);
    add_translations(f, level, box, tmp, count);
}

static void run_serial(const struct fmm *f) {
    for (long b = 0; b < side(f->levels) * side(f->levels); ++b) particles_to_multipole(f, b);
    for (int l = f->levels - 1; l >= 2; --l)
        for (long b = 0; b < side(l) * side(l); ++b) children_to_multipole(f, l, b);
    for (int l = 2; l <= f->levels; ++l)
        for (long b = 0; b < side(l) * side(l); ++b) down_box_serial(f, l, b);
    for (long b = 0; b < side(f->levels) * side(f->levels); ++b) evaluate_leaf(f, b);
}

/* ---- fine: a thread per box, and per translation ---- */

struct fine_box {
    const struct fmm *f;
    int level;
    long box;
};

static void *up_thread(void *arg);
static void *down_thread(void *arg);

/* Runs start on each of box's four children: three in new threads, one here. */
static void on_children(const struct fine_box *b, void *(*start)(void *)) {
    struct fine_box kids[4];
    pthread_t ids[3];
    long s = side(b->level), x = b->box % s, y = b->box / s;
    for (int k = 0; k < 4; ++k) {
        kids[k] = (struct fine_box){b->f, b->level + 1, (2 * y + k / 2) * 2 * s + 2 * x + k % 2};
        if (k < 3) app_spawn(&ids[k], start, &kids[k]);
    }
    start(&kids[3]);
    for (int k = 0; k < 3; ++k) app_join(ids[k]);
}

static void *up_thread(void *arg) {
    struct fine_box *b = arg;
    if (b->level == b->f->levels) {
        particles_to_multipole(b->f, b->box);
        return NULL;
    }
    on_children(b, up_thread);
    if (b->level >= 2) children_to_multipole(b->f, b->level, b->box);
    return NULL;
}

struct fine_translation {
    const struct fmm *f;
    int level;
    long box, source;
    double complex *result;
};

static void *translation_thread(void *arg) {
    struct fine_translation *t = arg;
    t->result = translate(t->f, t->level, t->box, t->source);
    return NULL;
}

static void *down_thread(void *arg) {
    struct fine_box *b = arg;
    const struct fmm *f = b->f;
    if (b->level >= 2) {
        parent_to_local(f, b->level, b->box);
        long list[27];
        int count = interaction_list(b->level, b->box, list);
        struct fine_translation t[27];
        pthread_t ids[27];
        double complex *tmp[27];
        for (int k = 0; k < count; ++k) {
            t[k] = (struct fine_translation){f, b->level, b->box, list[k], NULL};
            app_spawn(&ids[k], translation_thread, &t[k]);
        }
        for (int k = 0; k < count; ++k) {
            app_join(ids[k]);
            tmp[k] = t[k].result;
        }
        add_translations(f, b->level, b->box, tmp, count);
    }
    if (b->level == f->levels)
        evaluate_leaf(f, b->box);
    else
        on_children(b, down_thread);
    return NULL;
}

static void run_fine(const struct fmm *f) {
    struct fine_box root = {f, 0, 0};
    up_thread(&root);
    down_thread(&root);
}

/* ---- coarse: a thread per core, each level's boxes in equal ranges ---- */

struct coarse_shared {
    const struct fmm *f;
    long threads;
    pthread_barrier_t barrier;
};

struct coarse_arg {
    struct coarse_shared *s;
    long id;
};

static void *coarse_worker(void *arg) {
    struct coarse_arg *a = arg;
    const struct fmm *f = a->s->f;
    long P = a->s->threads, id = a->id;
#define RANGE(level) long boxes = side(level) * side(level), first = id * boxes / P, end = (id + 1) * boxes / P
    {
        RANGE(f->levels);
        for (long b = first; b < end; ++b) particles_to_multipole(f, b);
    }
    app_barrier_wait(&a->s->barrier);
    for (int l = f->levels - 1; l >= 2; --l) {
        RANGE(l);
        for (long b = first; b < end; ++b) children_to_multipole(f, l, b);
        app_barrier_wait(&a->s->barrier); /* a level's expansions before its parents' */
    }
    for (int l = 2; l <= f->levels; ++l) {
        RANGE(l);
        for (long b = first; b < end; ++b) down_box_serial(f, l, b);
        app_barrier_wait(&a->s->barrier); /* a level's local expansions before its children's */
    }
    {
        RANGE(f->levels);
        for (long b = first; b < end; ++b) evaluate_leaf(f, b);
    }
#undef RANGE
    return NULL;
}

static void run_coarse(const struct fmm *f, long threads) {
    struct coarse_shared s;
    memset(&s, 0, sizeof s);
    s.f = f;
    s.threads = threads;
    app_barrier_init(&s.barrier, (unsigned)threads);
    pthread_t *ids = app_alloc((size_t)threads * sizeof *ids);
    struct coarse_arg *args = app_alloc((size_t)threads * sizeof *args);
    for (long t = 0; t < threads; ++t) {
        args[t] = (struct coarse_arg){&s, t};
        app_spawn(&ids[t], coarse_worker, &args[t]);
    }
    for (long t = 0; t < threads; ++t) app_join(ids[t]);
    pthread_barrier_destroy(&s.barrier);
    free(args);
    free(ids);
}

/* ---- setup and checks ---- */

static void setup(struct fmm *f, size_t n, int levels, int terms, const double complex *z, const double *q) {
    memset(f, 0, sizeof *f);
    f->n = n;
    f->levels = levels;
    f->terms = terms;
    f->z = z;
    f->q = q;
    long leaves = side(levels) * side(levels);
    /* Particles by leaf, a stable counting sort. */
    f->first = app_alloc((size_t)(leaves + 1) * sizeof *f->first);
    memset(f->first, 0, (size_t)(leaves + 1) * sizeof *f->first);
    long *leaf_of = app_alloc(n * sizeof *leaf_of);
    for (size_t i = 0; i < n; ++i) {
        long x = (long)(creal(z[i]) * (double)side(levels)), y = (long)(cimag(z[i]) * (double)side(levels));
        leaf_of[i] = y * side(levels) + x;
        ++f->first[leaf_of[i] + 1];
    }
    for (long b = 0; b < leaves; ++b) f->first[b + 1] += f->first[b];
    size_t *at = app_alloc((size_t)leaves * sizeof *at);
    memcpy(at, f->first, (size_t)leaves * sizeof *at);
    f->order = app_alloc(n * sizeof *f->order);
    for (size_t i = 0; i < n; ++i) f->order[at[leaf_of[i]]++] = (uint32_t)i;
    free(at);
    free(leaf_of);
    for (int l = 0; l <= levels; ++l) {
        size_t size = (size_t)(side(l) * side(l)) * (size_t)(terms + 1) * sizeof(double complex);
        f->multipole[l] = app_alloc(size);
        f->local[l] = app_alloc(size);
        memset(f->multipole[l], 0, size);
        memset(f->local[l], 0, size);
    }
    for (int a = 0; a <= 2 * MAX_TERMS; ++a)
        for (int b = 0; b <= a; ++b)
            f->binomial[a][b] = b == 0 || b == a ? 1 : f->binomial[a - 1][b - 1] + f->binomial[a - 1][b];
    f->potential = app_alloc(n * sizeof *f->potential);
    f->field = app_alloc(n * sizeof *f->field);
}

static void teardown(struct fmm *f) {
    for (int l = 0; l <= f->levels; ++l) {
        free(f->multipole[l]);
        free(f->local[l]);
    }
    free(f->field);
    free(f->potential);
    free(f->order);
    free(f->first);
}

/* The relative L2 distance of the potentials and of the fields from direct summation. */
static void error_vs_direct(const struct fmm *f, double *pot_err, double *field_err) {
    double dp = 0, np = 0, de = 0, ne = 0;
    for (size_t i = 0; i < f->n; ++i) {
        double pot = 0;
        double complex e = 0;
        for (size_t k = 0; k < f->n; ++k) {
            if (k == i) continue;
            double complex d = f->z[i] - f->z[k];
            pot += 0.5 * f->q[k] * log(creal(d) * creal(d) + cimag(d) * cimag(d));
            e += f->q[k] / d;
        }
        dp += (f->potential[i] - pot) * (f->potential[i] - pot);
        np += pot * pot;
        double complex diff = f->field[i] - e;
        de += creal(diff) * creal(diff) + cimag(diff) * cimag(diff);
        ne += creal(e) * creal(e) + cimag(e) * cimag(e);
    }
    *pot_err = sqrt(dp / np);
    *field_err = sqrt(de / ne);
}

/* The results' checksum: the program's last line, and what the check compares. */
static uint64_t result_checksum(const struct fmm *f) {
    return app_checksum(f->potential, f->n * sizeof *f->potential) ^ app_checksum(f->field, f->n * sizeof *f->field);
}

/* The serial version's result checksum, computed before the measured run's
 * expansions exist so that the check's own copy of them never adds to the
 * measured run's heap high-water mark (the figure Narlikar & Blelloch's
 * Figure 9 compares with the serial program's). */
static uint64_t serial_checksum(size_t n, int levels, int terms, const double complex *z, const double *q) {
    struct fmm ref;
    setup(&ref, n, levels, terms, z, q);
    run_serial(&ref);
    uint64_t sum = result_checksum(&ref);
    teardown(&ref);
    return sum;
}

/* Called when the checksums differ: the serial result again (the heap no
 * longer matters) and the first particle where the two differ. */
static void fail_against_serial(const struct fmm *f, enum app_version version) {
    struct fmm ref;
    setup(&ref, f->n, f->levels, f->terms, f->z, f->q);
    run_serial(&ref);
    for (size_t i = 0; i < f->n; ++i)
        if (memcmp(&ref.potential[i], &f->potential[i], sizeof(double)) != 0 ||
            memcmp(&ref.field[i], &f->field[i], sizeof(double complex)) != 0)
            app_fail("%s result differs from the serial version's at particle %zu: potential %.17g, serial %.17g",
                     app_version_name(version), i, f->potential[i], ref.potential[i]);
    app_fail("%s result's checksum differs from the serial version's, though no particle's result does",
             app_version_name(version));
}

int main(int argc, char **argv) {
    app_init("fmm", NULL);
    struct app_common common = {APP_SERIAL, 0, 1, 1};
    long particles = 10000, levels = 4, terms = 5, threads = -1;
    for (int i = 1; i < argc; ++i) {
        if (app_parse_common(usage, argc, argv, &i, &common)) continue;
        const char *flag = argv[i];
        if (strcmp(flag, "--particles") == 0) {
            particles = app_parse_long(usage, flag, app_flag_value(usage, argc, argv, &i), 16, 10000000);
        } else if (strcmp(flag, "--levels") == 0) {
            levels = app_parse_long(usage, flag, app_flag_value(usage, argc, argv, &i), 2, 10);
        } else if (strcmp(flag, "--terms") == 0) {
            terms = app_parse_long(usage, flag, app_flag_value(usage, argc, argv, &i), 1, MAX_TERMS);
        } else if (strcmp(flag, "--threads") == 0) {
            threads = app_parse_long(usage, flag, app_flag_value(usage, argc, argv, &i), 1, 4096);
        } else {
            app_bad_argument(usage, "unknown argument '%s'", flag);
        }
    }
    app_require_version(usage, &common);
    enum app_version version = common.version;
    if (threads >= 0 && version != APP_COARSE) app_bad_argument(usage, "--threads applies to --version coarse only");
    if (threads < 0) threads = app_online_cpus();

    /* Uniform in the unit square (multiples of 2^-53 in [0, 1)), charges uniform in [-1, 1). */
    uint64_t rng = (uint64_t)common.seed;
    size_t n = (size_t)particles;
    double complex *z = app_alloc(n * sizeof *z);
    double *q = app_alloc(n * sizeof *q);
    for (size_t i = 0; i < n; ++i) {
        double x = app_rng_uniform(&rng), y = app_rng_uniform(&rng);
        z[i] = x + I * y;
        q[i] = 2.0 * app_rng_uniform(&rng) - 1.0;
    }
    uint64_t input_sum = app_checksum(z, n * sizeof *z) ^ app_checksum(q, n * sizeof *q);
    int check_serial = common.check && version != APP_SERIAL;
    uint64_t serial_sum = check_serial ? serial_checksum(n, (int)levels, (int)terms, z, q) : 0;
    struct fmm f;
    setup(&f, n, (int)levels, (int)terms, z, q);
    printf("fmm: %zu particles, %ld levels (%ld leaf boxes, %.1f particles a leaf), %ld terms\n", n, levels,
           side((int)levels) * side((int)levels), (double)n / (double)(side((int)levels) * side((int)levels)), terms);

    double start = app_now();
    if (version == APP_SERIAL)
        run_serial(&f);
    else if (version == APP_FINE)
        run_fine(&f);
    else
        run_coarse(&f, threads);
    double seconds = app_now() - start;
    app_report_time(version, seconds);

    if (common.check && n <= DIRECT_CHECK) {
        double pot_err, field_err;
        error_vs_direct(&f, &pot_err, &field_err);
        printf("fmm: against direct summation: relative L2 distance %.2e (potential), %.2e (field)\n", pot_err,
               field_err);
        if (!(pot_err <= DIRECT_TOLERANCE && field_err <= DIRECT_TOLERANCE))
            app_fail(
                "the FMM's potential or field is further than %.0e from direct summation's (relative L2): "
                "%.3g, %.3g",
                DIRECT_TOLERANCE, pot_err, field_err);
    }
    if (check_serial && result_checksum(&f) != serial_sum) fail_against_serial(&f, version);
    char sizes[96];
    snprintf(sizes, sizeof sizes, "%zu particles, %ld levels, %ld terms", n, levels, terms);
    app_report_result(&common, sizes, input_sum, "result", result_checksum(&f));
    teardown(&f);
    free(q);
    free(z);
    return 0;
}
