/* Barnes-Hut: Narlikar & Blelloch's Barnes-Hut benchmark ("Pthreads for
 * Dynamic and Irregular Parallelism", section 4, after SPLASH-2's Barnes:
 * 100K bodies of a Plummer model, 4 time steps of which the first 2 are not
 * timed; each step builds an octree, computes the force on every body by
 * walking it, and updates the bodies), as a plain Pthreads program
 * (apps/pthreads/pthreads_app.h). Three versions:
 *   serial  one thread;
 *   fine    the paper's: the tree built with a thread per subtree (per child
 *           octant) of at least --grain bodies; the forces and the update with
 *           a thread per such subtree too, down to subtrees of fewer than
 *           --grain bodies (default 32: about 8 leaves), each one thread's;
 *   coarse  SPLASH-2's: a thread per core for the whole run; per step a
 *           bounding box from per-thread ranges, the top two levels of the
 *           tree partitioned by thread 0 and their subtrees dealt to the
 *           threads by size, forces and update on costzones (contiguous runs
 *           of bodies in tree order with equal interaction counts from the
 *           previous step), barriers between the phases.
 * The tree is built by partitioning the bodies recursively (a cell with more
 * than LEAF bodies splits into octants, bodies kept in their array order), so
 * its shape and each leaf's order depend on the positions only; a body's
 * acceleration is summed in one traversal order. The versions' bodies are
 * therefore equal to the serial run's bit for bit, which the program checks.
 *
 * The Plummer model is generated (docs/design/pthreads-apps.md, "barnes"). */
#include "apps/pthreads/pthreads_app.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "--version serial|coarse|fine [--bodies N (16..10000000, default 100000)] [--steps S (3..1000, default 4; "
    "the first 2 not timed)] [--grain G (fine only, 1..N bodies, default 32)] [--threads P (coarse only, 1..4096, "
    "default processors online)] [--seed S (default 1)] [--no-check]";

enum {
    LEAF = 8,       /* bodies a leaf holds at most (above MAX_DEPTH) */
    MAX_DEPTH = 40, /* a cell this deep is a leaf, however many bodies (coincident bodies) */
    UNTIMED = 2,
    TOP_LEVELS = 2 /* coarse: levels thread 0 partitions; their subtrees are dealt */
};

/* Up to DIRECT_CHECK bodies, the check also compares the tree's accelerations
 * with direct summation (docs/design/pthreads-apps.md says why this bound). */
enum {
    DIRECT_CHECK = 8192
};
static const double DIRECT_TOLERANCE = 0.05;

static const double DT = 0.025, EPS2 = 0.05 * 0.05, THETA2 = 1.0; /* SPLASH-2's dtime, eps, tol */

struct body {
    double pos[3], vel[3], acc[3];
    double mass;
    long cost; /* interactions in the last force phase (costzones) */
};

struct cell {
    double centre[3], half; /* the cube */
    double mass, com[3];    /* its bodies' mass and centre of mass */
    size_t n;               /* bodies in the subtree */
    const uint32_t *bodies; /* a leaf's n bodies (NULL: internal) */
    struct cell *child[8];
};

struct sim {
    size_t n;
    struct body *b;
    uint32_t *order[2]; /* the build's partition buffers */
    size_t grain;
};

/* ---- the input ---- */

/* x^(1/3) for x in (0, 1] by Newton's iteration in plain arithmetic (no libm: the
 * input must be the same on every machine; sqrt is correctly rounded, cbrt and
 * pow are not required to be). */
static double cube_root(double x) {
    double y = 1.0;
    for (int k = 0; k < 200; ++k) {
        double next = (2.0 * y + x / (y * y)) / 3.0;
        if (next == y) break;
        y = next;
    }
    return y;
}

static void random_direction(uint64_t *rng, double out[3], double length) {
    double v[3], r2;
    do {
        for (int k = 0; k < 3; ++k) v[k] = 2.0 * app_rng_uniform(rng) - 1.0;
        r2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    } while (r2 > 1.0 || r2 < 1e-6);
    double scale = length / sqrt(r2);
    for (int k = 0; k < 3; ++k) out[k] = v[k] * scale;
}

/* Aarseth, Henon & Wielen's Plummer model as SPLASH-2's Barnes makes it:
 * radii from the inverse of the cumulative mass (the outer 0.1% cut), speeds
 * by von Neumann rejection from the isotropic distribution, centred. */
static struct body *plummer(size_t n, uint64_t *rng) {
    struct body *b = app_alloc(n * sizeof *b);
    double cm_pos[3] = {0, 0, 0}, cm_vel[3] = {0, 0, 0};
    for (size_t i = 0; i < n; ++i) {
        double m = 0.999 * app_rng_uniform(rng);
        if (m < 1e-9) m = 1e-9;
        double c = cube_root(m);
        double r = 1.0 / sqrt(1.0 / (c * c) - 1.0);
        random_direction(rng, b[i].pos, r);
        double x, y;
        do {
            x = app_rng_uniform(rng);
            y = 0.1 * app_rng_uniform(rng);
        } while (y > x * x * (1.0 - x * x) * (1.0 - x * x) * (1.0 - x * x) * sqrt(1.0 - x * x)); /* x^2 (1-x^2)^3.5 */
        double speed = x * sqrt(2.0) / sqrt(sqrt(1.0 + r * r));
        random_direction(rng, b[i].vel, speed);
        b[i].mass = 1.0 / (double)n;
        b[i].cost = 1;
        for (int k = 0; k < 3; ++k) {
            cm_pos[k] += b[i].pos[k];
            cm_vel[k] += b[i].vel[k];
            b[i].acc[k] = 0;
        }
    }
    for (size_t i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k) {
            b[i].pos[k] -= cm_pos[k] / (double)n;
            b[i].vel[k] -= cm_vel[k] / (double)n;
        }
    return b;
}

/* ---- the tree ---- */

static int octant(const double centre[3], const double p[3]) {
    return (p[0] > centre[0]) | (p[1] > centre[1]) << 1 | (p[2] > centre[2]) << 2;
}

static struct cell *new_cell(const double centre[3], double half) {
    struct cell *c = app_alloc(sizeof *c);
    memset(c, 0, sizeof *c);
    for (int k = 0; k < 3; ++k) c->centre[k] = centre[k];
    c->half = half;
    return c;
}

/* The root cube: the bodies' bounding box's centre, its largest side. */
static struct cell *root_of(const double lo[3], const double hi[3]) {
    double centre[3], half = 0;
    for (int k = 0; k < 3; ++k) {
        centre[k] = 0.5 * (lo[k] + hi[k]);
        double h = 0.5 * (hi[k] - lo[k]);
        if (h > half) half = h;
    }
    return new_cell(centre, half * 1.0001 + 1e-12);
}

static void bounding_box(const struct body *b, size_t first, size_t end, double lo[3], double hi[3]) {
    for (int k = 0; k < 3; ++k) lo[k] = hi[k] = b[first].pos[k];
    for (size_t i = first; i < end; ++i)
        for (int k = 0; k < 3; ++k) {
            if (b[i].pos[k] < lo[k]) lo[k] = b[i].pos[k];
            if (b[i].pos[k] > hi[k]) hi[k] = b[i].pos[k];
        }
}

/* Splits cell c's n bodies (in src) into its octants: stable, into dst; makes
 * the nonempty children. Returns 0 when c is a leaf (its bodies stay in src). */
static int split_cell(const struct sim *s, struct cell *c, const uint32_t *src, uint32_t *dst, int depth,
                      size_t start[8]) {
    if (c->n <= LEAF || depth >= MAX_DEPTH) {
        c->bodies = src;
        return 0;
    }
    size_t count[8] = {0};
    for (size_t i = 0; i < c->n; ++i) ++count[octant(c->centre, s->b[src[i]].pos)];
    size_t at[8];
    for (int o = 0, sum = 0; o < 8; sum += (int)count[o], ++o) at[o] = start[o] = (size_t)sum;
    for (size_t i = 0; i < c->n; ++i) dst[at[octant(c->centre, s->b[src[i]].pos)]++] = src[i];
    double h = c->half / 2;
    for (int o = 0; o < 8; ++o) {
        if (count[o] == 0) continue;
        double centre[3] = {c->centre[0] + (o & 1 ? h : -h), c->centre[1] + (o & 2 ? h : -h),
                            c->centre[2] + (o & 4 ? h : -h)};
        c->child[o] = new_cell(centre, h);
        c->child[o]->n = count[o];
    }
    return 1;
}

/* The mass and centre of mass of c from its children or bodies, in order. */
static void summarize_cell(const struct sim *s, struct cell *c) {
    double m = 0, p[3] = {0, 0, 0};
    if (c->bodies != NULL) {
        for (size_t i = 0; i < c->n; ++i) {
            const struct body *b = &s->b[c->bodies[i]];
            m += b->mass;
            for (int k = 0; k < 3; ++k) p[k] += b->mass * b->pos[k];
        }
    } else {
        for (int o = 0; o < 8; ++o) {
            const struct cell *ch = c->child[o];
            if (ch == NULL) continue;
            m += ch->mass;
            for (int k = 0; k < 3; ++k) p[k] += ch->mass * ch->com[k];
        }
    }
    c->mass = m;
    for (int k = 0; k < 3; ++k) c->com[k] = p[k] / m;
}

struct build_task {
    const struct sim *s;
    struct cell *c;
    uint32_t *src, *dst;
    int depth;
    size_t grain; /* 0: serial */
};

static void *build_thread(void *arg);

/* Builds c's subtree from its bodies src[0..n), using dst[0..n) to partition. */
static void build(const struct build_task *t) {
    size_t start[8];
    if (split_cell(t->s, t->c, t->src, t->dst, t->depth, start)) {
        struct build_task sub[8];
        pthread_t ids[8];
        int spawned[8] = {0}, parallel = t->grain != 0 && t->c->n >= t->grain, last = -1;
        for (int o = 0; o < 8; ++o) {
            if (t->c->child[o] == NULL) continue;
            sub[o] =
                (struct build_task){t->s, t->c->child[o], t->dst + start[o], t->src + start[o], t->depth + 1, t->grain};
            last = o;
        }
        for (int o = 0; o < 8; ++o) {
            if (t->c->child[o] == NULL) continue;
            if (parallel && o != last) {
                app_spawn(&ids[o], build_thread, &sub[o]);
                spawned[o] = 1;
            } else {
                build(&sub[o]);
            }
        }
        for (int o = 0; o < 8; ++o)
            if (spawned[o]) app_join(ids[o]);
    }
    summarize_cell(t->s, t->c);
}

static void *build_thread(void *arg) {
    build(arg);
    return NULL;
}

static void free_tree(struct cell *c) {
    for (int o = 0; o < 8; ++o)
        if (c->child[o] != NULL) free_tree(c->child[o]);
    free(c);
}

/* ---- forces and update ---- */

static void add_pull(const double from[3], double mass, const double at[3], double acc[3]) {
    double d[3] = {from[0] - at[0], from[1] - at[1], from[2] - at[2]};
    double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + EPS2;
    double inv = 1.0 / sqrt(r2), f = mass * inv * inv * inv;
    for (int k = 0; k < 3; ++k) acc[k] += f * d[k];
}

/* Body i's acceleration from cell c's subtree; returns the interactions. */
static long pull_of(const struct sim *s, const struct cell *c, uint32_t i, double acc[3]) {
    const double *p = s->b[i].pos;
    if (c->bodies != NULL) {
        for (size_t j = 0; j < c->n; ++j)
            if (c->bodies[j] != i) add_pull(s->b[c->bodies[j]].pos, s->b[c->bodies[j]].mass, p, acc);
        return (long)c->n;
    }
    double d[3] = {c->com[0] - p[0], c->com[1] - p[1], c->com[2] - p[2]};
    double size = 2.0 * c->half;
    if (size * size < THETA2 * (d[0] * d[0] + d[1] * d[1] + d[2] * d[2])) {
        add_pull(c->com, c->mass, p, acc);
        return 1;
    }
    long count = 0;
    for (int o = 0; o < 8; ++o)
        if (c->child[o] != NULL) count += pull_of(s, c->child[o], i, acc);
    return count;
}

static void force_on(const struct sim *s, const struct cell *root, uint32_t i) {
    double acc[3] = {0, 0, 0};
    s->b[i].cost = pull_of(s, root, i, acc);
    for (int k = 0; k < 3; ++k) s->b[i].acc[k] = acc[k];
}

static void update(struct body *b) {
    for (int k = 0; k < 3; ++k) {
        b->vel[k] += b->acc[k] * DT;
        b->pos[k] += b->vel[k] * DT;
    }
}

/* What a phase does to each body of a subtree. */
enum phase {
    FORCES,
    UPDATE
};

static void visit_bodies(const struct sim *s, const struct cell *root, const struct cell *c, enum phase ph) {
    if (c->bodies != NULL) {
        for (size_t j = 0; j < c->n; ++j) {
            if (ph == FORCES)
                force_on(s, root, c->bodies[j]);
            else
                update(&s->b[c->bodies[j]]);
        }
        return;
    }
    for (int o = 0; o < 8; ++o)
        if (c->child[o] != NULL) visit_bodies(s, root, c->child[o], ph);
}

static void run_step_serial(const struct sim *s) {
    double lo[3], hi[3];
    bounding_box(s->b, 0, s->n, lo, hi);
    struct cell *root = root_of(lo, hi);
    root->n = s->n;
    for (size_t i = 0; i < s->n; ++i) s->order[0][i] = (uint32_t)i;
    build(&(struct build_task){s, root, s->order[0], s->order[1], 0, 0});
    visit_bodies(s, root, root, FORCES);
    visit_bodies(s, root, root, UPDATE);
    free_tree(root);
}

/* ---- fine: a thread per subtree of at least grain bodies ---- */

struct fine_visit {
    const struct sim *s;
    const struct cell *root, *c;
    enum phase ph;
};

static void *fine_visit_thread(void *arg);

static void fine_visit(const struct fine_visit *v) {
    if (v->c->bodies != NULL || v->c->n < v->s->grain) {
        visit_bodies(v->s, v->root, v->c, v->ph);
        return;
    }
    struct fine_visit sub[8];
    pthread_t ids[8];
    int last = -1;
    for (int o = 0; o < 8; ++o)
        if (v->c->child[o] != NULL) last = o;
    for (int o = 0; o < 8; ++o) {
        if (v->c->child[o] == NULL) continue;
        sub[o] = (struct fine_visit){v->s, v->root, v->c->child[o], v->ph};
        if (o != last) app_spawn(&ids[o], fine_visit_thread, &sub[o]);
    }
    fine_visit(&sub[last]);
    for (int o = 0; o < last; ++o)
        if (v->c->child[o] != NULL) app_join(ids[o]);
}

static void *fine_visit_thread(void *arg) {
    fine_visit(arg);
    return NULL;
}

static void run_step_fine(const struct sim *s) {
    double lo[3], hi[3];
    bounding_box(s->b, 0, s->n, lo, hi);
    struct cell *root = root_of(lo, hi);
    root->n = s->n;
    for (size_t i = 0; i < s->n; ++i) s->order[0][i] = (uint32_t)i;
    build(&(struct build_task){s, root, s->order[0], s->order[1], 0, s->grain});
    fine_visit(&(struct fine_visit){s, root, root, FORCES});
    fine_visit(&(struct fine_visit){s, root, root, UPDATE});
    free_tree(root);
}

/* ---- coarse: a thread per core, SPLASH-2's phases and costzones ---- */

struct coarse_shared {
    const struct sim *s;
    long threads, steps;
    pthread_barrier_t barrier;
    double (*lo)[3], (*hi)[3]; /* per thread's bounding box */
    struct cell *root;
    struct build_task *tops; /* the subtrees below the top levels */
    size_t top_count;
    long *top_owner;
    struct cell **top_internal; /* the top levels' internal cells, parents after children */
    size_t internal_count;
    uint32_t *tree_order; /* the bodies in tree order */
    size_t *zone;         /* thread t's bodies: tree_order[zone[t] .. zone[t+1]) */
};

struct coarse_arg {
    struct coarse_shared *sh;
    long id;
};

/* Thread 0: splits the root down TOP_LEVELS levels, listing the subtrees
 * below and the internal cells above (children before parents). */
static void split_top(struct coarse_shared *sh, struct cell *c, uint32_t *src, uint32_t *dst, int depth) {
    size_t start[8];
    if (depth == TOP_LEVELS || !split_cell(sh->s, c, src, dst, depth, start)) {
        sh->tops[sh->top_count++] = (struct build_task){sh->s, c, src, dst, depth, 0};
        return;
    }
    for (int o = 0; o < 8; ++o)
        if (c->child[o] != NULL) split_top(sh, c->child[o], dst + start[o], src + start[o], depth + 1);
    sh->top_internal[sh->internal_count++] = c;
}

static void collect_order(const struct cell *c, uint32_t *out, size_t *at) {
    if (c->bodies != NULL) {
        for (size_t j = 0; j < c->n; ++j) out[(*at)++] = c->bodies[j];
        return;
    }
    for (int o = 0; o < 8; ++o)
        if (c->child[o] != NULL) collect_order(c->child[o], out, at);
}

/* Costzones: the bodies in tree order cut into runs of equal total cost. */
static void make_zones(struct coarse_shared *sh) {
    const struct sim *s = sh->s;
    size_t at = 0;
    collect_order(sh->root, sh->tree_order, &at);
    double total = 0;
    for (size_t i = 0; i < s->n; ++i) total += (double)s->b[i].cost;
    double sum = 0;
    size_t i = 0;
    sh->zone[0] = 0;
    for (long t = 1; t < sh->threads; ++t) {
        double target = total * (double)t / (double)sh->threads;
        while (i < s->n && sum + (double)s->b[sh->tree_order[i]].cost <= target)
            sum += (double)s->b[sh->tree_order[i++]].cost;
        sh->zone[t] = i;
    }
    sh->zone[sh->threads] = s->n;
}

static void deal_tops(struct coarse_shared *sh) {
    double *load = app_alloc((size_t)sh->threads * sizeof *load);
    for (long t = 0; t < sh->threads; ++t) load[t] = 0;
    /* Largest first to the least loaded; at most 8^TOP_LEVELS subtrees. */
    int *taken = app_alloc(sh->top_count * sizeof *taken);
    memset(taken, 0, sh->top_count * sizeof *taken);
    for (size_t k = 0; k < sh->top_count; ++k) {
        size_t big = 0;
        int found = 0;
        for (size_t j = 0; j < sh->top_count; ++j)
            if (!taken[j] && (!found || sh->tops[j].c->n > sh->tops[big].c->n)) big = j, found = 1;
        taken[big] = 1;
        long best = 0;
        for (long t = 1; t < sh->threads; ++t)
            if (load[t] < load[best]) best = t;
        sh->top_owner[big] = best;
        load[best] += (double)sh->tops[big].c->n;
    }
    free(taken);
    free(load);
}

static void *coarse_worker(void *arg) {
    struct coarse_arg *a = arg;
    struct coarse_shared *sh = a->sh;
    const struct sim *s = sh->s;
    long id = a->id, P = sh->threads;
    size_t first = (size_t)id * s->n / (size_t)P, end = (size_t)(id + 1) * s->n / (size_t)P;
    for (long step = 0; step < sh->steps; ++step) {
        bounding_box(s->b, first, end, sh->lo[id], sh->hi[id]);
        for (size_t i = first; i < end; ++i) s->order[0][i] = (uint32_t)i;
        app_barrier_wait(&sh->barrier); /* boxes and the identity order ready */
        if (id == 0) {
            double lo[3], hi[3];
            for (int k = 0; k < 3; ++k) {
                lo[k] = sh->lo[0][k];
                hi[k] = sh->hi[0][k];
                for (long t = 1; t < P; ++t) {
                    if (sh->lo[t][k] < lo[k]) lo[k] = sh->lo[t][k];
                    if (sh->hi[t][k] > hi[k]) hi[k] = sh->hi[t][k];
                }
            }
            sh->root = root_of(lo, hi);
            sh->root->n = s->n;
            sh->top_count = sh->internal_count = 0;
            split_top(sh, sh->root, s->order[0], s->order[1], 0);
            deal_tops(sh);
        }
        app_barrier_wait(&sh->barrier); /* the top levels split and dealt */
        for (size_t k = 0; k < sh->top_count; ++k)
            if (sh->top_owner[k] == id) build(&sh->tops[k]);
        app_barrier_wait(&sh->barrier); /* every subtree built */
        if (id == 0) {
            for (size_t k = 0; k < sh->internal_count; ++k) summarize_cell(s, sh->top_internal[k]);
            make_zones(sh);
        }
        app_barrier_wait(&sh->barrier); /* the tree complete, the zones made */
        for (size_t i = sh->zone[id]; i < sh->zone[id + 1]; ++i) force_on(s, sh->root, sh->tree_order[i]);
        app_barrier_wait(&sh->barrier); /* every force computed */
        for (size_t i = sh->zone[id]; i < sh->zone[id + 1]; ++i) update(&s->b[sh->tree_order[i]]);
        app_barrier_wait(&sh->barrier); /* every body moved */
        if (id == 0) free_tree(sh->root);
    }
    return NULL;
}

static void run_coarse(const struct sim *s, long steps, long threads) {
    size_t max_tops = 1;
    for (int l = 0; l < TOP_LEVELS; ++l) max_tops *= 8;
    struct coarse_shared sh;
    memset(&sh, 0, sizeof sh);
    sh.s = s;
    sh.threads = threads;
    sh.steps = steps;
    app_barrier_init(&sh.barrier, (unsigned)threads);
    sh.lo = app_alloc((size_t)threads * sizeof *sh.lo);
    sh.hi = app_alloc((size_t)threads * sizeof *sh.hi);
    sh.tops = app_alloc(max_tops * sizeof *sh.tops);
    sh.top_owner = app_alloc(max_tops * sizeof *sh.top_owner);
    sh.top_internal = app_alloc(max_tops * sizeof *sh.top_internal);
    sh.tree_order = app_alloc(s->n * sizeof *sh.tree_order);
    sh.zone = app_alloc((size_t)(threads + 1) * sizeof *sh.zone);
    pthread_t *ids = app_alloc((size_t)threads * sizeof *ids);
    struct coarse_arg *args = app_alloc((size_t)threads * sizeof *args);
    for (long t = 0; t < threads; ++t) {
        args[t] = (struct coarse_arg){&sh, t};
        app_spawn(&ids[t], coarse_worker, &args[t]);
    }
    for (long t = 0; t < threads; ++t) app_join(ids[t]);
    pthread_barrier_destroy(&sh.barrier);
    free(args);
    free(ids);
    free(sh.zone);
    free(sh.tree_order);
    free(sh.top_internal);
    free(sh.top_owner);
    free(sh.tops);
    free(sh.hi);
    free(sh.lo);
}

static void run_steps(const struct sim *s, enum app_version v, long steps, long threads) {
    if (v == APP_COARSE) {
        run_coarse(s, steps, threads);
        return;
    }
    for (long k = 0; k < steps; ++k) (v == APP_FINE ? run_step_fine : run_step_serial)(s);
}

/* The tree's accelerations on bodies b against direct summation: the relative
 * L2 distance over all bodies. */
static double error_vs_direct(const struct body *b, size_t n, uint32_t *order[2]) {
    struct sim s = {n, app_alloc(n * sizeof *b), {order[0], order[1]}, 0};
    memcpy(s.b, b, n * sizeof *b);
    double lo[3], hi[3];
    bounding_box(s.b, 0, n, lo, hi);
    struct cell *root = root_of(lo, hi);
    root->n = n;
    for (size_t i = 0; i < n; ++i) s.order[0][i] = (uint32_t)i;
    build(&(struct build_task){&s, root, s.order[0], s.order[1], 0, 0});
    visit_bodies(&s, root, root, FORCES);
    free_tree(root);
    double diff = 0, norm = 0;
    for (size_t i = 0; i < n; ++i) {
        double acc[3] = {0, 0, 0};
        for (size_t j = 0; j < n; ++j)
            if (j != i) add_pull(b[j].pos, b[j].mass, b[i].pos, acc);
        for (int k = 0; k < 3; ++k) {
            diff += (s.b[i].acc[k] - acc[k]) * (s.b[i].acc[k] - acc[k]);
            norm += acc[k] * acc[k];
        }
    }
    free(s.b);
    return sqrt(diff / norm);
}

/* The result: every body's position and velocity. */
static uint64_t state_checksum(const struct body *b, size_t n) {
    uint64_t h = 0;
    for (size_t i = 0; i < n; ++i) h = h * 0x100000001b3ULL ^ app_checksum(b[i].pos, 6 * sizeof(double));
    return h;
}

int main(int argc, char **argv) {
    app_init("barnes", NULL);
    struct app_common common = {APP_SERIAL, 0, 1, 1};
    long bodies = 100000, steps = 4, grain = -1, threads = -1;
    for (int i = 1; i < argc; ++i) {
        if (app_parse_common(usage, argc, argv, &i, &common)) continue;
        const char *f = argv[i];
        if (strcmp(f, "--bodies") == 0) {
            bodies = app_parse_long(usage, f, app_flag_value(usage, argc, argv, &i), 16, 10000000);
        } else if (strcmp(f, "--steps") == 0) {
            steps = app_parse_long(usage, f, app_flag_value(usage, argc, argv, &i), UNTIMED + 1, 1000);
        } else if (strcmp(f, "--grain") == 0) {
            grain = app_parse_long(usage, f, app_flag_value(usage, argc, argv, &i), 1, 10000000);
        } else if (strcmp(f, "--threads") == 0) {
            threads = app_parse_long(usage, f, app_flag_value(usage, argc, argv, &i), 1, 4096);
        } else {
            app_bad_argument(usage, "unknown argument '%s'", f);
        }
    }
    app_require_version(usage, &common);
    enum app_version version = common.version;
    if (threads >= 0 && version != APP_COARSE) app_bad_argument(usage, "--threads applies to --version coarse only");
    if (grain >= 0 && version != APP_FINE) app_bad_argument(usage, "--grain applies to --version fine only");
    if (grain > bodies) app_bad_argument(usage, "--grain %ld: expected 1 to the number of bodies, %ld", grain, bodies);
    if (threads > bodies)
        app_bad_argument(usage, "--threads %ld: expected 1 to the number of bodies, %ld", threads, bodies);
    if (grain < 0) grain = 32;
    if (threads < 0) threads = app_online_cpus();

    uint64_t rng = (uint64_t)common.seed;
    struct body *initial = plummer((size_t)bodies, &rng);
    uint64_t input_sum = app_checksum(initial, (size_t)bodies * sizeof *initial);
    struct sim s = {(size_t)bodies,
                    app_alloc((size_t)bodies * sizeof(struct body)),
                    {app_alloc((size_t)bodies * sizeof(uint32_t)), app_alloc((size_t)bodies * sizeof(uint32_t))},
                    (size_t)grain};
    memcpy(s.b, initial, (size_t)bodies * sizeof *initial);
    printf("barnes: %ld bodies (Plummer model), %ld steps of which the first %d not timed\n", bodies, steps, UNTIMED);

    run_steps(&s, version, UNTIMED, threads);
    app_reset_thread_counts();
    double start = app_now();
    run_steps(&s, version, steps - UNTIMED, threads);
    double seconds = app_now() - start;
    app_report_time(version, seconds);

    if (common.check && bodies <= DIRECT_CHECK) {
        double err = error_vs_direct(initial, s.n, s.order);
        printf("barnes: first step's accelerations against direct summation: relative L2 distance %.2e\n", err);
        if (!(err <= DIRECT_TOLERANCE))
            app_fail("the tree's accelerations are %.3g from direct summation's (relative L2), more than %.0e", err,
                     DIRECT_TOLERANCE);
    }
    if (common.check && version != APP_SERIAL) {
        struct sim ref = {s.n, initial, {s.order[0], s.order[1]}, 0};
        run_steps(&ref, APP_SERIAL, steps, 1);
        for (size_t i = 0; i < s.n; ++i)
            if (memcmp(ref.b[i].pos, s.b[i].pos, 6 * sizeof(double)) != 0)
                app_fail(
                    "%s bodies differ from the serial version's at body %zu: position (%.17g, %.17g, %.17g), "
                    "serial (%.17g, %.17g, %.17g)",
                    app_version_name(version), i, s.b[i].pos[0], s.b[i].pos[1], s.b[i].pos[2], ref.b[i].pos[0],
                    ref.b[i].pos[1], ref.b[i].pos[2]);
    }
    char sizes[64];
    snprintf(sizes, sizeof sizes, "%ld bodies, %ld steps", bodies, steps);
    app_report_result(&common, sizes, input_sum, "bodies", state_checksum(s.b, s.n));
    free(s.order[1]);
    free(s.order[0]);
    free(s.b);
    free(initial);
    return 0;
}
