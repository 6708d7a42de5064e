/* Decision tree: Narlikar & Blelloch's decision tree builder ("Pthreads for
 * Dynamic and Irregular Parallelism", section 4: ID3 with C4.5's binary splits
 * on continuous attributes, 133,999 instances of 4 continuous attributes and a
 * true/false class), as a plain Pthreads program (apps/pthreads/pthreads_app.h).
 *
 * A node with fewer than --min-node instances, or of one class, is a leaf.
 * Otherwise its instances are sorted by each attribute (a quicksort on a copy
 * of the node's index array, with ties broken by instance number so the order
 * is unique), every threshold between two distinct values that leaves at least
 * MIN_LEAF instances on each side is scored by C4.5's gain ratio, and the best
 * (the first found, attributes in order, on a tie) splits the node into
 * "value <= threshold" and the rest; no split with a positive gain makes a leaf.
 * Each node allocates its children's index arrays with malloc and frees them
 * once both children are built, so the heap holds what the traversal order
 * keeps alive (the paper's Figure 9: depth first stays near the serial
 * program's, breadth first grows). Three versions:
 *   serial  the recursion on one thread;
 *   fine    the paper's: above --grain instances (default 2000, the paper's
 *           cut-off) a thread per child node, a thread per attribute to sort
 *           and score it, and a thread per recursive call of the quicksort;
 *   coarse  a thread per core, level by level (the paper wrote none: "a
 *           coarse-grained implementation ... would be highly complex"): the
 *           (node, attribute) sorts of a level are dealt to the threads by
 *           their cost, largest first, to the least loaded; the nodes' splits
 *           likewise; barriers between the phases.
 * Every sort yields the unique order and every score is computed by the same
 * function from it, so each version's tree equals the serial one's exactly;
 * the program compares the trees node by node.
 *
 * The data set is generated (docs/design/pthreads-apps.md, "dtree"). */
#include "apps/pthreads/pthreads_app.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "--version serial|coarse|fine [--instances N (100..10000000, default 133999)] "
    "[--min-node M (2..N, default 64)] [--grain G (fine only, 2..N, default 2000)] "
    "[--threads P (coarse only, 1..4096, default processors online)] [--seed S (default 1)] [--no-check]";

enum {
    ATTRS = 4,
    MIN_LEAF = 2,   /* C4.5's fewest instances on either side of a split */
    CLUSTERS = 6,   /* per class, in the generator */
    QUANTUM = 4096, /* attribute values are multiples of 1/QUANTUM: ties occur */
    INSERTION_SORT = 16
};

struct dataset {
    size_t n;
    double (*x)[ATTRS];
    unsigned char *label;
};

struct node {
    size_t n, positives;
    int attribute; /* -1: a leaf */
    double threshold;
    struct node *left, *right;
};

struct split {
    int attribute; /* -1: none with a positive gain */
    double threshold, gain, ratio;
};

struct params {
    const struct dataset *d;
    size_t min_node, grain;
};

/* ---- the input ---- */

/* Irwin-Hall: the sum of four uniforms less 2, roughly normal with variance
 * 1/3, in exact arithmetic (no libm, so the input is the same on every machine). */
static double bump(uint64_t *rng) {
    double s = 0;
    for (int k = 0; k < 4; ++k) s += app_rng_uniform(rng);
    return s - 2.0;
}

static struct dataset generate(size_t n, uint64_t *rng) {
    /* Each class is a mixture of CLUSTERS blobs in [0, 1]^4 with centres and
     * widths from the generator; the classes overlap, so the tree is deep and
     * uneven where they do. */
    double centre[2][CLUSTERS][ATTRS], width[2][CLUSTERS];
    for (int c = 0; c < 2; ++c)
        for (int k = 0; k < CLUSTERS; ++k) {
            for (int a = 0; a < ATTRS; ++a) centre[c][k][a] = 0.15 + 0.7 * app_rng_uniform(rng);
            width[c][k] = 0.04 + 0.16 * app_rng_uniform(rng);
        }
    struct dataset d = {n, app_alloc(n * sizeof *d.x), app_alloc(n)};
    for (size_t i = 0; i < n; ++i) {
        int c = app_rng_uniform(rng) < 0.45; /* 45% true */
        int k = (int)(app_rng_next(rng) % CLUSTERS);
        d.label[i] = (unsigned char)c;
        for (int a = 0; a < ATTRS; ++a) {
            double v = centre[c][k][a] + width[c][k] * bump(rng);
            v = v < 0 ? 0 : v > 1 ? 1 : v;
            d.x[i][a] = floor(v * QUANTUM) / QUANTUM;
        }
    }
    return d;
}

/* ---- sorting a node's instances by one attribute ---- */

static int before(const struct dataset *d, int a, uint32_t i, uint32_t j) {
    return d->x[i][a] < d->x[j][a] || (d->x[i][a] == d->x[j][a] && i < j);
}

/* Partitions idx[0..n) about a median-of-three pivot; returns the pivot's place. */
static size_t partition(const struct dataset *d, int a, uint32_t *idx, size_t n) {
    size_t mid = n / 2;
    uint32_t t;
#define SWAP(p, q) (t = idx[p], idx[p] = idx[q], idx[q] = t)
    if (before(d, a, idx[mid], idx[0])) SWAP(mid, 0);
    if (before(d, a, idx[n - 1], idx[0])) SWAP(n - 1, 0);
    if (before(d, a, idx[n - 1], idx[mid])) SWAP(n - 1, mid);
    SWAP(mid, n - 1); /* the median is the pivot, at the end */
    uint32_t pivot = idx[n - 1];
    size_t store = 0;
    for (size_t i = 0; i + 1 < n; ++i)
        if (before(d, a, idx[i], pivot)) {
            SWAP(i, store);
            ++store;
        }
    SWAP(store, n - 1);
#undef SWAP
    return store;
}

static void insertion_sort(const struct dataset *d, int a, uint32_t *idx, size_t n) {
    for (size_t i = 1; i < n; ++i) {
        uint32_t v = idx[i];
        size_t j = i;
        for (; j > 0 && before(d, a, v, idx[j - 1]); --j) idx[j] = idx[j - 1];
        idx[j] = v;
    }
}

struct sort_task {
    const struct dataset *d;
    int attribute;
    uint32_t *idx;
    size_t n, grain; /* grain 0: serial */
};

static void *sort_thread(void *arg);

static void sort_by(const struct sort_task *s) {
    if (s->n <= INSERTION_SORT) {
        insertion_sort(s->d, s->attribute, s->idx, s->n);
        return;
    }
    size_t p = partition(s->d, s->attribute, s->idx, s->n);
    struct sort_task low = {s->d, s->attribute, s->idx, p, s->grain};
    struct sort_task high = {s->d, s->attribute, s->idx + p + 1, s->n - p - 1, s->grain};
    if (s->grain != 0 && s->n >= s->grain) {
        pthread_t t;
        app_spawn(&t, sort_thread, &low);
        sort_by(&high);
        app_join(t);
    } else {
        sort_by(&low);
        sort_by(&high);
    }
}

static void *sort_thread(void *arg) {
    sort_by(arg);
    return NULL;
}

/* ---- scoring the thresholds on one attribute ---- */

static double entropy(size_t positives, size_t n) {
    if (positives == 0 || positives == n) return 0;
    double p = (double)positives / (double)n, q = 1.0 - p;
    return -(p * log2(p) + q * log2(q));
}

/* The best threshold on attribute a, given the node's instances sorted by it:
 * C4.5's, the highest information gain, with its gain ratio. */
static struct split best_on(const struct dataset *d, int a, const uint32_t *sorted, size_t n, size_t positives) {
    struct split best = {-1, 0, 0, 0};
    double info = entropy(positives, n);
    size_t left_pos = 0, best_nl = 0;
    for (size_t i = 0; i + 1 < n; ++i) {
        left_pos += d->label[sorted[i]];
        size_t nl = i + 1, nr = n - nl;
        if (d->x[sorted[i]][a] == d->x[sorted[i + 1]][a] || nl < MIN_LEAF || nr < MIN_LEAF) continue;
        double fl = (double)nl / (double)n, fr = (double)nr / (double)n;
        double gain = info - (fl * entropy(left_pos, nl) + fr * entropy(positives - left_pos, nr));
        if (gain > 1e-12 && gain > best.gain) {
            best = (struct split){a, d->x[sorted[i]][a], gain, 0};
            best_nl = nl;
        }
    }
    if (best.attribute >= 0) {
        double fl = (double)best_nl / (double)n, fr = 1.0 - fl;
        best.ratio = best.gain / -(fl * log2(fl) + fr * log2(fr));
    }
    return best;
}

/* Sorts a copy of the node's instances by attribute a and scores it; the copy
 * is the node's own allocation, freed once scored. */
static struct split score_attribute(const struct params *p, int a, const uint32_t *idx, size_t n, size_t positives,
                                    size_t grain) {
    uint32_t *sorted = app_alloc(n * sizeof *sorted);
    memcpy(sorted, idx, n * sizeof *sorted);
    struct sort_task s = {p->d, a, sorted, n, grain};
    sort_by(&s);
    struct split best = best_on(p->d, a, sorted, n, positives);
    free(sorted);
    return best;
}

/* C4.5's choice among the attributes' best splits: the highest gain ratio
 * among those whose gain is at least the average (gain ratio alone favours
 * splitting off a few instances), the first in attribute order on a tie. */
static struct split best_of(const struct split *per_attribute) {
    struct split best = {-1, 0, 0, 0};
    double sum = 0;
    int candidates = 0;
    for (int a = 0; a < ATTRS; ++a)
        if (per_attribute[a].attribute >= 0) {
            sum += per_attribute[a].gain;
            ++candidates;
        }
    for (int a = 0; a < ATTRS; ++a)
        if (per_attribute[a].attribute >= 0 && per_attribute[a].gain * candidates >= sum &&
            per_attribute[a].ratio > best.ratio)
            best = per_attribute[a];
    return best;
}

static size_t count_positives(const struct dataset *d, const uint32_t *idx, size_t n) {
    size_t pos = 0;
    for (size_t i = 0; i < n; ++i) pos += d->label[idx[i]];
    return pos;
}

static struct node *new_node(const struct dataset *d, const uint32_t *idx, size_t n) {
    struct node *nd = app_alloc(sizeof *nd);
    *nd = (struct node){n, count_positives(d, idx, n), -1, 0, NULL, NULL};
    return nd;
}

static int splittable(const struct params *p, const struct node *nd) {
    return nd->n >= p->min_node && nd->positives != 0 && nd->positives != nd->n;
}

/* Allocates the children's index arrays (instance order kept) and fills them. */
static void divide(const struct dataset *d, const struct split *s, const uint32_t *idx, size_t n, uint32_t **left,
                   size_t *nl, uint32_t **right, size_t *nr) {
    size_t l = 0;
    for (size_t i = 0; i < n; ++i) l += d->x[idx[i]][s->attribute] <= s->threshold;
    *left = app_alloc(l * sizeof **left);
    *right = app_alloc((n - l) * sizeof **right);
    *nl = l;
    *nr = n - l;
    size_t li = 0, ri = 0;
    for (size_t i = 0; i < n; ++i) {
        if (d->x[idx[i]][s->attribute] <= s->threshold)
            (*left)[li++] = idx[i];
        else
            (*right)[ri++] = idx[i];
    }
}

/* ---- serial ---- */

static struct node *build_serial(const struct params *p, const uint32_t *idx, size_t n) {
    struct node *nd = new_node(p->d, idx, n);
    if (!splittable(p, nd)) return nd;
    struct split per[ATTRS];
    for (int a = 0; a < ATTRS; ++a) per[a] = score_attribute(p, a, idx, n, nd->positives, 0);
    struct split s = best_of(per);
    if (s.attribute < 0) return nd;
    nd->attribute = s.attribute;
    nd->threshold = s.threshold;
    uint32_t *left, *right;
    size_t nl, nr;
    divide(p->d, &s, idx, n, &left, &nl, &right, &nr);
    nd->left = build_serial(p, left, nl);
    nd->right = build_serial(p, right, nr);
    free(left);
    free(right);
    return nd;
}

/* ---- fine: a thread per node and per attribute above the grain ---- */

struct fine_score {
    const struct params *p;
    int attribute;
    const uint32_t *idx;
    size_t n, positives;
    struct split result;
};

static void *fine_score_thread(void *arg) {
    struct fine_score *f = arg;
    f->result = score_attribute(f->p, f->attribute, f->idx, f->n, f->positives, f->p->grain);
    return NULL;
}

struct fine_build {
    const struct params *p;
    const uint32_t *idx;
    size_t n;
    struct node *result;
};

static struct node *build_fine(const struct params *p, const uint32_t *idx, size_t n);

static void *fine_build_thread(void *arg) {
    struct fine_build *f = arg;
    f->result = build_fine(f->p, f->idx, f->n);
    return NULL;
}

static struct node *build_fine(const struct params *p, const uint32_t *idx, size_t n) {
    if (n < p->grain) return build_serial(p, idx, n);
    struct node *nd = new_node(p->d, idx, n);
    if (!splittable(p, nd)) return nd;
    struct fine_score score[ATTRS];
    pthread_t ids[ATTRS];
    for (int a = 0; a < ATTRS; ++a) {
        score[a] = (struct fine_score){p, a, idx, n, nd->positives, {-1, 0, 0, 0}};
        if (a > 0) app_spawn(&ids[a], fine_score_thread, &score[a]);
    }
    fine_score_thread(&score[0]);
    struct split per[ATTRS];
    for (int a = 0; a < ATTRS; ++a) {
        if (a > 0) app_join(ids[a]);
        per[a] = score[a].result;
    }
    struct split s = best_of(per);
    if (s.attribute < 0) return nd;
    nd->attribute = s.attribute;
    nd->threshold = s.threshold;
    uint32_t *left, *right;
    size_t nl, nr;
    divide(p->d, &s, idx, n, &left, &nl, &right, &nr);
    struct fine_build child = {p, left, nl, NULL};
    pthread_t t;
    app_spawn(&t, fine_build_thread, &child);
    nd->right = build_fine(p, right, nr);
    app_join(t);
    nd->left = child.result;
    free(left);
    free(right);
    return nd;
}

/* ---- coarse: a thread per core, level by level ---- */

/* A node of the level being built, with the instance array its parent
 * allocated for it (freed once the node has divided them among its children). */
struct level_node {
    struct node *node;
    uint32_t *idx;
    int split; /* splittable: its attributes are scored */
    struct split per[ATTRS];
    uint32_t *child_idx[2]; /* the arrays it allocates for its children */
};

struct level {
    struct level_node *nodes;
    size_t count, capacity;
};

struct coarse_shared {
    const struct params *p;
    long threads;
    pthread_barrier_t barrier;
    struct level now, next;
    long *score_owner;  /* per (node, attribute): the thread that scores it */
    long *divide_owner; /* per node: the thread that divides it */
};

struct coarse_arg {
    struct coarse_shared *s;
    long id;
};

/* Deals items of the given costs to threads: the largest first, each to the
 * least loaded thread (lowest number on a tie). */
static void deal(const double *cost, size_t items, long threads, long *owner, double *load, size_t *order) {
    for (long t = 0; t < threads; ++t) load[t] = 0;
    for (size_t i = 0; i < items; ++i) order[i] = i;
    for (size_t i = 1; i < items; ++i) { /* insertion sort by cost, descending */
        size_t v = order[i], j = i;
        for (; j > 0 && cost[order[j - 1]] < cost[v]; --j) order[j] = order[j - 1];
        order[j] = v;
    }
    for (size_t i = 0; i < items; ++i) {
        long best = 0;
        for (long t = 1; t < threads; ++t)
            if (load[t] < load[best]) best = t;
        owner[order[i]] = best;
        load[best] += cost[order[i]];
    }
}

/* Thread 0, between barriers: who scores and who divides what on this level. */
static void plan_level(struct coarse_shared *s) {
    const struct level *lv = &s->now;
    size_t items = lv->count * ATTRS;
    double *cost = app_alloc(items * sizeof *cost), *load = app_alloc((size_t)s->threads * sizeof *load);
    size_t *order = app_alloc(items * sizeof *order);
    free(s->score_owner);
    free(s->divide_owner);
    s->score_owner = app_alloc(items * sizeof *s->score_owner);
    s->divide_owner = app_alloc(lv->count * sizeof *s->divide_owner);
    for (size_t i = 0; i < lv->count; ++i) {
        double n = (double)lv->nodes[i].node->n;
        for (int a = 0; a < ATTRS; ++a) cost[i * ATTRS + a] = lv->nodes[i].split ? n * log2(n + 1) : 0;
    }
    deal(cost, items, s->threads, s->score_owner, load, order);
    for (size_t i = 0; i < lv->count; ++i) cost[i] = lv->nodes[i].split ? (double)lv->nodes[i].node->n : 0;
    deal(cost, lv->count, s->threads, s->divide_owner, load, order);
    free(order);
    free(load);
    free(cost);
}

static void push_node(const struct params *p, struct level *lv, struct node *nd, uint32_t *idx) {
    if (lv->count == lv->capacity) {
        lv->capacity = 2 * lv->capacity + 16;
        struct level_node *grown = realloc(lv->nodes, lv->capacity * sizeof *grown);
        if (grown == NULL) app_fail("out of memory growing a level to %zu nodes", lv->capacity);
        lv->nodes = grown;
    }
    lv->nodes[lv->count++] = (struct level_node){nd, idx, splittable(p, nd), {{-1, 0, 0, 0}}, {NULL, NULL}};
}

/* Thread 0, between barriers: the children become the next level; this
 * level's instance arrays, now divided, are freed. */
static void advance_level(struct coarse_shared *s) {
    s->next.count = 0;
    for (size_t i = 0; i < s->now.count; ++i) {
        struct level_node *ln = &s->now.nodes[i];
        if (ln->node->attribute >= 0) {
            push_node(s->p, &s->next, ln->node->left, ln->child_idx[0]);
            push_node(s->p, &s->next, ln->node->right, ln->child_idx[1]);
        }
        free(ln->idx);
    }
    struct level t = s->now;
    s->now = s->next;
    s->next = t;
}

static void *coarse_worker(void *arg) {
    struct coarse_arg *ca = arg;
    struct coarse_shared *s = ca->s;
    const struct params *p = s->p;
    while (s->now.count > 0) {
        if (ca->id == 0) plan_level(s);
        app_barrier_wait(&s->barrier); /* the level planned */
        for (size_t i = 0; i < s->now.count * ATTRS; ++i) {
            struct level_node *ln = &s->now.nodes[i / ATTRS];
            int a = (int)(i % ATTRS);
            if (s->score_owner[i] == ca->id && ln->split)
                ln->per[a] = score_attribute(p, a, ln->idx, ln->node->n, ln->node->positives, 0);
        }
        app_barrier_wait(&s->barrier); /* every attribute scored */
        for (size_t i = 0; i < s->now.count; ++i) {
            struct level_node *ln = &s->now.nodes[i];
            if (s->divide_owner[i] != ca->id || !ln->split) continue;
            struct split best = best_of(ln->per);
            if (best.attribute < 0) continue;
            ln->node->attribute = best.attribute;
            ln->node->threshold = best.threshold;
            size_t nl, nr;
            divide(p->d, &best, ln->idx, ln->node->n, &ln->child_idx[0], &nl, &ln->child_idx[1], &nr);
            ln->node->left = new_node(p->d, ln->child_idx[0], nl);
            ln->node->right = new_node(p->d, ln->child_idx[1], nr);
        }
        app_barrier_wait(&s->barrier); /* every node divided */
        if (ca->id == 0) advance_level(s);
        app_barrier_wait(&s->barrier); /* the next level set up */
    }
    return NULL;
}

static struct node *build_coarse(const struct params *p, const uint32_t *idx, size_t n, long threads) {
    struct coarse_shared s = {p, threads, {{0}}, {NULL, 0, 0}, {NULL, 0, 0}, NULL, NULL};
    app_barrier_init(&s.barrier, (unsigned)threads);
    uint32_t *root_idx = app_alloc(n * sizeof *root_idx);
    memcpy(root_idx, idx, n * sizeof *root_idx);
    struct node *root = new_node(p->d, idx, n);
    push_node(p, &s.now, root, root_idx);
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
    free(s.now.nodes);
    free(s.next.nodes);
    free(s.score_owner);
    free(s.divide_owner);
    return root;
}

/* ---- the result ---- */

static void free_tree(struct node *nd) {
    if (nd == NULL) return;
    free_tree(nd->left);
    free_tree(nd->right);
    free(nd);
}

struct tree_stats {
    size_t nodes, leaves, depth;
    uint64_t checksum; /* FNV-1a over the nodes in preorder */
};

static void summarize(const struct node *nd, size_t depth, struct tree_stats *st) {
    struct {
        int64_t n, positives, attribute;
        double threshold;
    } rec = {(int64_t)nd->n, (int64_t)nd->positives, nd->attribute, nd->threshold};
    st->checksum = st->checksum * 0x100000001b3ULL ^ app_checksum(&rec, sizeof rec);
    ++st->nodes;
    if (depth > st->depth) st->depth = depth;
    if (nd->attribute < 0) {
        ++st->leaves;
        return;
    }
    summarize(nd->left, depth + 1, st);
    summarize(nd->right, depth + 1, st);
}

/* The first node (in preorder, counting from 0 at *at) where the trees differ, or -1. */
static long first_difference(const struct node *a, const struct node *b, long *at) {
    long here = (*at)++;
    if (a->n != b->n || a->positives != b->positives || a->attribute != b->attribute ||
        memcmp(&a->threshold, &b->threshold, sizeof a->threshold) != 0)
        return here;
    if (a->attribute < 0) return -1;
    long d = first_difference(a->left, b->left, at);
    return d >= 0 ? d : first_difference(a->right, b->right, at);
}

static size_t correct(const struct dataset *d, const struct node *root) {
    size_t right = 0;
    for (size_t i = 0; i < d->n; ++i) {
        const struct node *nd = root;
        while (nd->attribute >= 0) nd = d->x[i][nd->attribute] <= nd->threshold ? nd->left : nd->right;
        right += (2 * nd->positives > nd->n) == d->label[i];
    }
    return right;
}

int main(int argc, char **argv) {
    app_init("dtree", NULL);
    struct app_common common = {APP_SERIAL, 0, 1, 1};
    long instances = 133999, min_node = 64, grain = -1, threads = -1;
    for (int i = 1; i < argc; ++i) {
        if (app_parse_common(usage, argc, argv, &i, &common)) continue;
        const char *f = argv[i];
        if (strcmp(f, "--instances") == 0) {
            instances = app_parse_long(usage, f, app_flag_value(usage, argc, argv, &i), 100, 10000000);
        } else if (strcmp(f, "--min-node") == 0) {
            min_node = app_parse_long(usage, f, app_flag_value(usage, argc, argv, &i), 2, 10000000);
        } else if (strcmp(f, "--grain") == 0) {
            grain = app_parse_long(usage, f, app_flag_value(usage, argc, argv, &i), 2, 10000000);
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
    if (min_node > instances)
        app_bad_argument(usage, "--min-node %ld: expected 2 to the number of instances, %ld", min_node, instances);
    if (grain > instances)
        app_bad_argument(usage, "--grain %ld: expected 2 to the number of instances, %ld", grain, instances);
    if (grain < 0) grain = 2000;
    if (threads < 0) threads = app_online_cpus();

    uint64_t rng = (uint64_t)common.seed;
    struct dataset d = generate((size_t)instances, &rng);
    uint64_t input_sum = app_checksum(d.x, d.n * sizeof *d.x) ^ app_checksum(d.label, d.n);
    uint32_t *all = app_alloc(d.n * sizeof *all);
    for (size_t i = 0; i < d.n; ++i) all[i] = (uint32_t)i;
    struct params p = {&d, (size_t)min_node, (size_t)grain};
    printf("dtree: %zu instances, %d continuous attributes, %zu true; leaves below %ld instances\n", d.n, ATTRS,
           count_positives(&d, all, d.n), min_node);

    double start = app_now();
    struct node *tree = version == APP_SERIAL ? build_serial(&p, all, d.n)
                        : version == APP_FINE ? build_fine(&p, all, d.n)
                                              : build_coarse(&p, all, d.n, threads);
    double seconds = app_now() - start;
    app_report_time(version, seconds);

    struct tree_stats st = {0, 0, 0, 0xcbf29ce484222325ULL};
    summarize(tree, 0, &st);
    if (common.check && version != APP_SERIAL) {
        struct node *ref = build_serial(&p, all, d.n);
        long at = 0, diff = first_difference(ref, tree, &at);
        if (diff >= 0)
            app_fail("%s tree differs from the serial version's at node %ld (preorder)", app_version_name(version),
                     diff);
        free_tree(ref);
    }
    printf("dtree: tree of %zu nodes, %zu leaves, depth %zu; training accuracy %.4f%%\n", st.nodes, st.leaves, st.depth,
           100.0 * (double)correct(&d, tree) / (double)d.n);
    char sizes[64];
    snprintf(sizes, sizeof sizes, "%zu instances", d.n);
    app_report_result(&common, sizes, input_sum, "tree", st.checksum);
    free_tree(tree);
    free(all);
    free(d.label);
    free(d.x);
    return 0;
}
