/* 1-D FFT: Narlikar & Blelloch's FFT benchmark ("Pthreads for Dynamic and
 * Irregular Parallelism", section 4: a one-dimensional complex DFT of 2^22
 * points), as a plain Pthreads program (apps/pthreads/pthreads_app.h).
 *
 * The transform is the radix-2 decimation-in-time Cooley-Tukey recursion,
 * out of place: a transform of size m at input stride s is the transforms of
 * its even and odd elements (size m/2, stride 2s), written to the two halves
 * of the output, then m/2 butterflies that combine them. Three versions:
 *   serial  the recursion on one thread;
 *   fine    a thread per sub-transform above the leaf size (the caller runs the
 *           other half itself), and a thread per `leaf` butterflies of each
 *           combine, split in halves the same way: what FFTW's threaded code
 *           does with a thread count of its own choosing;
 *   coarse  a thread per core (SPLASH-2 style): the N/leaf leaf transforms split
 *           in contiguous ranges, a barrier, then each level's N/2 butterflies
 *           split in equal ranges, a barrier after each level.
 * Every version computes each output element with the same floating-point
 * operations in the same order (the leaves are fft_serial, every butterfly is
 * butterflies(), with one twiddle table), so the check against the serial
 * result is exact. Below 2^13 points the serial result is also checked
 * against a naive DFT (relative L2 error at most 1e-10; docs/design/pthreads-apps.md says why).
 *
 * Where the build found FFTW (WEFT_HAVE_FFTW), --version fftw runs FFTW's
 * transform of the same input, the paper's own program: threads off, or with
 * --threads P FFTW's threaded transform on P threads (FFTW's own Pthreads,
 * which the shim makes weft threads). Its result is checked against the serial
 * version's within the same 1e-10 (another algorithm: other rounding). */
#include "apps/pthreads/pthreads_app.h"

#ifdef WEFT_HAVE_FFTW
#include <fftw3.h>
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef WEFT_HAVE_FFTW
#define PEER "fftw"
#define THREADS_VERSIONS "coarse and fftw"
static const char usage[] =
    "--version serial|coarse|fine|fftw [--log2n K (1..26, default 22)] [--leaf L (serial, coarse, fine: power of "
    "two, 2..2^K, default 2^14 or 2^K if smaller)] [--threads P (coarse: 1..4096, default processors online; fftw: "
    "1..4096, default threads off)] [--seed S (default 1)] [--no-check]";
#else
#define PEER NULL
#define THREADS_VERSIONS "coarse"
static const char usage[] =
    "--version serial|coarse|fine [--log2n K (1..26, default 22)] [--leaf L (power of two, 2..2^K, "
    "default 2^14 or 2^K if smaller)] [--threads P (coarse only, 1..4096, default processors online)] "
    "[--seed S (default 1)] [--no-check]";
#endif

typedef struct {
    double re, im;
} cplx;

struct plan {
    size_t n;
    size_t leaf;
    cplx *twiddle; /* twiddle[j] = exp(-2 pi i j / n), j < n/2 */
};

/* Butterflies k0 <= k < k1 of the size-m block out[0..m), whose halves hold
 * the transforms of the even and the odd elements. */
static void butterflies(const struct plan *p, cplx *out, size_t m, size_t k0, size_t k1) {
    size_t half = m / 2, step = p->n / m;
    for (size_t k = k0; k < k1; ++k) {
        cplx e = out[k], o = out[k + half], w = p->twiddle[k * step];
        cplx t = {w.re * o.re - w.im * o.im, w.re * o.im + w.im * o.re};
        out[k] = (cplx){e.re + t.re, e.im + t.im};
        out[k + half] = (cplx){e.re - t.re, e.im - t.im};
    }
}

static void fft_serial(const struct plan *p, const cplx *in, size_t stride, cplx *out, size_t m) {
    if (m == 2) {
        cplx a = in[0], b = in[stride];
        out[0] = (cplx){a.re + b.re, a.im + b.im};
        out[1] = (cplx){a.re - b.re, a.im - b.im};
        return;
    }
    fft_serial(p, in, 2 * stride, out, m / 2);
    fft_serial(p, in + stride, 2 * stride, out + m / 2, m / 2);
    butterflies(p, out, m, 0, m / 2);
}

/* ---- fine: a thread per sub-transform above the leaf ---- */

struct fine_task {
    const struct plan *p;
    const cplx *in;
    size_t stride;
    cplx *out;
    size_t m;
    size_t k0, k1; /* butterfly range, for combine tasks */
};

static void *fine_butterflies(void *arg) {
    struct fine_task *t = arg;
    if (t->k1 - t->k0 <= t->p->leaf) {
        butterflies(t->p, t->out, t->m, t->k0, t->k1);
        return NULL;
    }
    size_t mid = t->k0 + (t->k1 - t->k0) / 2;
    struct fine_task lo = *t, hi = *t;
    lo.k1 = mid;
    hi.k0 = mid;
    pthread_t thread;
    app_spawn(&thread, fine_butterflies, &lo);
    fine_butterflies(&hi);
    app_join(thread);
    return NULL;
}

static void *fine_fft(void *arg) {
    struct fine_task *t = arg;
    if (t->m <= t->p->leaf) {
        fft_serial(t->p, t->in, t->stride, t->out, t->m);
        return NULL;
    }
    struct fine_task even = {t->p, t->in, 2 * t->stride, t->out, t->m / 2, 0, 0};
    struct fine_task odd = {t->p, t->in + t->stride, 2 * t->stride, t->out + t->m / 2, t->m / 2, 0, 0};
    pthread_t thread;
    app_spawn(&thread, fine_fft, &even);
    fine_fft(&odd);
    app_join(thread);
    struct fine_task combine = {t->p, NULL, 0, t->out, t->m, 0, t->m / 2};
    fine_butterflies(&combine);
    return NULL;
}

/* ---- coarse: a thread per core, explicit ranges and barriers ---- */

struct coarse_shared {
    const struct plan *p;
    const cplx *in;
    cplx *out;
    size_t threads;
    pthread_barrier_t barrier;
};

struct coarse_arg {
    struct coarse_shared *s;
    size_t id;
};

static size_t bit_reverse(size_t j, unsigned bits) {
    size_t r = 0;
    for (unsigned b = 0; b < bits; ++b, j >>= 1) r = (r << 1) | (j & 1);
    return r;
}

static void *coarse_worker(void *arg) {
    struct coarse_arg *a = arg;
    struct coarse_shared *s = a->s;
    const struct plan *p = s->p;
    size_t n = p->n, leaves = n / p->leaf, P = s->threads, id = a->id;
    unsigned depth = 0;
    while (((size_t)1 << depth) < leaves) ++depth;
    /* Leaf j of the recursion, at depth `depth`, transforms the elements
     * congruent to bit_reverse(j) modulo 2^depth into out[j*leaf ..). */
    for (size_t j = id * leaves / P; j < (id + 1) * leaves / P; ++j)
        fft_serial(p, s->in + bit_reverse(j, depth), leaves, s->out + j * p->leaf, p->leaf);
    app_barrier_wait(&s->barrier);
    for (size_t m = 2 * p->leaf; m <= n; m *= 2) {
        size_t half = m / 2, b = id * (n / 2) / P, end = (id + 1) * (n / 2) / P;
        while (b < end) {
            size_t block = b / half, k0 = b % half, k1 = k0 + (end - b) < half ? k0 + (end - b) : half;
            butterflies(p, s->out + block * m, m, k0, k1);
            b += k1 - k0;
        }
        app_barrier_wait(&s->barrier);
    }
    return NULL;
}

static void fft_coarse(const struct plan *p, const cplx *in, cplx *out, size_t threads) {
    struct coarse_shared s = {p, in, out, threads, {{0}}};
    app_barrier_init(&s.barrier, (unsigned)threads);
    pthread_t *ids = app_alloc(threads * sizeof *ids);
    struct coarse_arg *args = app_alloc(threads * sizeof *args);
    for (size_t i = 0; i < threads; ++i) {
        args[i] = (struct coarse_arg){&s, i};
        app_spawn(&ids[i], coarse_worker, &args[i]);
    }
    for (size_t i = 0; i < threads; ++i) app_join(ids[i]);
    pthread_barrier_destroy(&s.barrier);
    free(args);
    free(ids);
}

#ifdef WEFT_HAVE_FFTW
/* FFTW's transform (planned with FFTW_ESTIMATE before the timer, so the plan
 * does not depend on timings of this machine); threads < 0: threads off.
 * Returns the seconds fftw_execute took. */
static double fft_fftw(cplx *in, cplx *out, size_t n, long threads) {
    if (threads >= 0) {
        if (fftw_init_threads() == 0) app_fail("fftw_init_threads failed");
        fftw_plan_with_nthreads((int)threads);
    }
    /* cplx is two doubles, real then imaginary: fftw_complex's layout. */
    fftw_plan plan = fftw_plan_dft_1d((int)n, (fftw_complex *)in, (fftw_complex *)out, FFTW_FORWARD, FFTW_ESTIMATE);
    if (plan == NULL) app_fail("fftw_plan_dft_1d(%zu) returned no plan", n);
    double start = app_now();
    fftw_execute(plan);
    double seconds = app_now() - start;
    fftw_destroy_plan(plan);
    if (threads >= 0) fftw_cleanup_threads();
    return seconds;
}
#endif

/* Relative L2 distance between two transforms. */
static double relative_distance(const cplx *got, const cplx *want, size_t n) {
    double diff = 0, norm = 0;
    for (size_t k = 0; k < n; ++k) {
        diff +=
            (got[k].re - want[k].re) * (got[k].re - want[k].re) + (got[k].im - want[k].im) * (got[k].im - want[k].im);
        norm += want[k].re * want[k].re + want[k].im * want[k].im;
    }
    return sqrt(diff / norm);
}

/* ---- checks ---- */

/* Relative L2 distance of the FFT result from the naive DFT, with its own
 * full-circle table of n roots (index j*k mod n). */
static double dft_error(const cplx *in, const cplx *got, size_t n) {
    const double two_pi = 6.283185307179586476925286766559;
    cplx *root = app_alloc(n * sizeof *root);
    for (size_t t = 0; t < n; ++t)
        root[t] = (cplx){cos(two_pi * (double)t / (double)n), -sin(two_pi * (double)t / (double)n)};
    cplx *dft = app_alloc(n * sizeof *dft);
    for (size_t k = 0; k < n; ++k) {
        double re = 0, im = 0;
        for (size_t j = 0; j < n; ++j) {
            cplx w = root[(j * k) % n];
            re += in[j].re * w.re - in[j].im * w.im;
            im += in[j].re * w.im + in[j].im * w.re;
        }
        dft[k] = (cplx){re, im};
    }
    double distance = relative_distance(got, dft, n);
    free(dft);
    free(root);
    return distance;
}

int main(int argc, char **argv) {
    app_init("fft1d", PEER);
    struct app_common common = {APP_SERIAL, 0, 1, 1};
    long log2n = 22, leaf = -1, threads = -1;
    int leaf_given = 0;
    for (int i = 1; i < argc; ++i) {
        if (app_parse_common(usage, argc, argv, &i, &common)) continue;
        const char *f = argv[i];
        if (strcmp(f, "--log2n") == 0) {
            log2n = app_parse_long(usage, f, app_flag_value(usage, argc, argv, &i), 1, 26);
        } else if (strcmp(f, "--leaf") == 0) {
            leaf = app_parse_long(usage, f, app_flag_value(usage, argc, argv, &i), 2, 1L << 26);
            leaf_given = 1;
        } else if (strcmp(f, "--threads") == 0) {
            threads = app_parse_long(usage, f, app_flag_value(usage, argc, argv, &i), 1, 4096);
        } else {
            app_bad_argument(usage, "unknown argument '%s'", f);
        }
    }
    app_require_version(usage, &common);
    enum app_version version = common.version;
    size_t n = (size_t)1 << log2n;
    if (leaf < 0) leaf = n < (1 << 14) ? (long)n : 1 << 14;
    if ((leaf & (leaf - 1)) != 0 || (size_t)leaf > n)
        app_bad_argument(usage, "--leaf %ld: expected a power of two from 2 to n = 2^%ld", leaf, log2n);
    if (threads >= 0 && version != APP_COARSE && version != APP_PEER)
        app_bad_argument(
            usage, "--threads applies to --version " THREADS_VERSIONS " only (fine makes a thread per sub-transform)");
    if (leaf_given && version == APP_PEER)
        app_bad_argument(usage, "--leaf does not apply to --version fftw (FFTW chooses its own)");
    if (threads < 0 && version == APP_COARSE) threads = app_online_cpus();

    /* Input: real and imaginary parts uniform in [-0.5, 0.5), splitmix64 from the seed. */
    cplx *in = app_alloc(n * sizeof *in), *out = app_alloc(n * sizeof *out);
    uint64_t rng = (uint64_t)common.seed;
    for (size_t j = 0; j < n; ++j) {
        in[j].re = app_rng_uniform(&rng) - 0.5;
        in[j].im = app_rng_uniform(&rng) - 0.5;
    }
    uint64_t input_sum = app_checksum(in, n * sizeof *in);

    /* The plan (untimed, as FFTW's planning): the twiddle table. */
    const double two_pi = 6.283185307179586476925286766559;
    struct plan p = {n, (size_t)leaf, app_alloc((n / 2) * sizeof(cplx))};
    for (size_t j = 0; j < n / 2; ++j)
        p.twiddle[j] = (cplx){cos(two_pi * (double)j / (double)n), -sin(two_pi * (double)j / (double)n)};

    double start = app_now(), seconds;
    if (version == APP_SERIAL) {
        fft_serial(&p, in, 1, out, n);
    } else if (version == APP_FINE) {
        struct fine_task root = {&p, in, 1, out, n, 0, 0};
        fine_fft(&root);
    } else if (version == APP_COARSE) {
        fft_coarse(&p, in, out, (size_t)threads);
    }
    seconds = app_now() - start;
#ifdef WEFT_HAVE_FFTW
    if (version == APP_PEER) seconds = fft_fftw(in, out, n, threads);
#endif
    app_report_time(version, seconds);

    uint64_t result_sum = app_checksum(out, n * sizeof *out);
    if (common.check) {
        if (version == APP_PEER) {
            cplx *ref = app_alloc(n * sizeof *ref);
            fft_serial(&p, in, 1, ref, n);
            double distance = relative_distance(out, ref, n);
            if (!(distance <= 1e-10))
                app_fail("%s result at relative L2 distance %.3g from the serial version's, more than 1e-10",
                         app_version_name(version), distance);
            printf("fft1d: within %.2g (relative L2) of the serial version\n", distance);
            free(ref);
        } else if (version != APP_SERIAL) {
            cplx *ref = app_alloc(n * sizeof *ref);
            fft_serial(&p, in, 1, ref, n);
            for (size_t k = 0; k < n; ++k)
                if (memcmp(&ref[k], &out[k], sizeof(cplx)) != 0)
                    app_fail(
                        "%s result differs from the serial version's at element %zu: (%.17g, %.17g), serial "
                        "(%.17g, %.17g)",
                        app_version_name(version), k, out[k].re, out[k].im, ref[k].re, ref[k].im);
            free(ref);
        }
        if (log2n <= 12) {
            double err = dft_error(in, out, n);
            if (!(err <= 1e-10)) app_fail("relative L2 distance from the naive DFT %.3g, more than 1e-10", err);
            printf("fft1d: within %.2g (relative L2) of the naive DFT\n", err);
        }
    }
    char sizes[32];
    snprintf(sizes, sizeof sizes, "n 2^%ld", log2n);
    app_report_result(&common, sizes, input_sum, "result", result_sum);
    free(p.twiddle);
    free(out);
    free(in);
    return 0;
}
