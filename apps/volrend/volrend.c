/* Volume rendering: Narlikar & Blelloch's volume rendering benchmark ("Pthreads
 * for Dynamic and Irregular Parallelism", section 4, after SPLASH-2's volrend:
 * a 256^3 volume ray-cast into a 375x375 image for a sequence of viewpoints,
 * the image cut into 4x4-pixel tiles), as a plain Pthreads program
 * (apps/pthreads/pthreads_app.h). Three versions:
 *   serial  the tiles in order on one thread;
 *   fine    per frame, a thread per group of G consecutive tiles (default 64,
 *           --tiles-per-thread: the paper's Figure 11 varies it from 1 to 1024),
 *           created and joined: the scheduler balances the uneven tiles;
 *   coarse  a thread per core for the whole run (SPLASH-2's scheme): each owns a
 *           contiguous range of the tiles as a task queue and, when it runs out,
 *           steals tiles from the others' queues; barriers between frames.
 * A pixel is computed by the same function from the same inputs in every
 * version, so the check against the serial images is exact.
 *
 * The volume is generated (docs/design/pthreads-apps.md, "volrend"): a head-like ellipsoid,
 * a dense shell (skull) around softer tissue holding a few dense spheres, in
 * empty space, with per-voxel noise; rays through air cost little, rays through
 * the head much more, and early ray termination in the shell varies it again.
 * Empty space is skipped with a grid of 8^3-voxel blocks that records whether
 * any sample in the block can be visible (the first level of SPLASH-2's octree).
 * The preprocessing (volume, block grid) is not timed, as in the paper. */
#include "apps/pthreads/pthreads_app.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "--version serial|coarse|fine [--volume D (16..512, default 256)] [--image W (4..4096, default 375)] "
    "[--frames F (1..1000, default 4)] [--tiles-per-thread G (fine only, 1..number of tiles, default 64)] "
    "[--threads P (coarse only, 1..4096, default processors online)] [--seed S (default 1)] [--no-check]";

enum {
    TILE = 4,
    BLOCK = 8,
    VISIBLE_FROM = 40
};

struct volume {
    long size; /* voxels on a side */
    unsigned char *density;
    long blocks;            /* blocks on a side */
    unsigned char *visible; /* per block: can a sample in it have nonzero opacity */
    float opacity[256], intensity[256];
};

struct camera {
    double origin[3];               /* where pixel (0, 0)'s ray starts */
    double right[3], up[3], dir[3]; /* per-pixel steps and the unit ray direction */
};

struct scene {
    const struct volume *vol;
    long width, tiles_x, tiles;
    long frames;
    struct camera *cameras;
    float *images; /* frames x width x width */
};

/* ---- the input ---- */

static void generate_volume(struct volume *v, long size, uint64_t *rng) {
    v->size = size;
    v->density = app_alloc((size_t)(size * size * size));
    double c = (size - 1) / 2.0;
    /* Four dense spheres inside the head, placed by the generator. */
    double blob[4][4];
    for (int b = 0; b < 4; ++b) {
        for (int k = 0; k < 3; ++k) blob[b][k] = (app_rng_uniform(rng) - 0.5) * 0.8;
        blob[b][3] = 0.05 + 0.1 * app_rng_uniform(rng); /* radius squared */
    }
    for (long z = 0; z < size; ++z)
        for (long y = 0; y < size; ++y)
            for (long x = 0; x < size; ++x) {
                double u = (x - c) / c, w = (y - c) / c, s = (z - c) / c;
                double r2 = u * u / 0.72 + w * w / 0.9 + s * s / 0.64; /* the head's ellipsoid */
                unsigned noise = (unsigned)(app_rng_next(rng) >> 59);  /* 0..31 */
                unsigned d = 0;
                if (r2 <= 1.0) {
                    d = r2 > 0.8 ? 190 + noise : 50 + noise; /* skull : tissue */
                    for (int b = 0; b < 4; ++b) {
                        double du = u - blob[b][0], dw = w - blob[b][1], ds = s - blob[b][2];
                        if (r2 <= 0.8 && du * du + dw * dw + ds * ds <= blob[b][3]) d = 140 + noise;
                    }
                }
                v->density[(z * size + y) * size + x] = (unsigned char)d;
            }
    /* Transfer function: below VISIBLE_FROM transparent; above, more opaque
     * and brighter with density. */
    for (int d = 0; d < 256; ++d) {
        v->opacity[d] = d < VISIBLE_FROM ? 0.0f : (float)(d - VISIBLE_FROM) / (255 - VISIBLE_FROM) * 0.03f;
        v->intensity[d] = (float)d / 255.0f;
    }
    /* Block b holds the samples whose lower voxel corner is in it; those read
     * voxels up to one past the block, which the scan includes. */
    v->blocks = (size + BLOCK - 1) / BLOCK;
    v->visible = app_alloc((size_t)(v->blocks * v->blocks * v->blocks));
    for (long bz = 0; bz < v->blocks; ++bz)
        for (long by = 0; by < v->blocks; ++by)
            for (long bx = 0; bx < v->blocks; ++bx) {
                unsigned char max = 0;
                for (long z = bz * BLOCK; z <= (bz + 1) * BLOCK && z < size; ++z)
                    for (long y = by * BLOCK; y <= (by + 1) * BLOCK && y < size; ++y)
                        for (long x = bx * BLOCK; x <= (bx + 1) * BLOCK && x < size; ++x)
                            if (v->density[(z * size + y) * size + x] > max)
                                max = v->density[(z * size + y) * size + x];
                v->visible[(bz * v->blocks + by) * v->blocks + bx] = max >= VISIBLE_FROM;
            }
}

/* Frame f looks at the volume's centre from an angle of f * 0.3 radians about
 * the vertical axis; the image spans 1.5 times the volume's side. */
static struct camera make_camera(long size, long width, long frame) {
    double a = 0.3 * (double)frame, c = (size - 1) / 2.0, pixel = 1.5 * (double)size / (double)width;
    struct camera cam = {{0}, {cos(a) * pixel, 0, -sin(a) * pixel}, {0, pixel, 0}, {sin(a), 0, cos(a)}};
    for (int k = 0; k < 3; ++k)
        cam.origin[k] = c - 2.0 * size * cam.dir[k] - (width - 1) / 2.0 * (cam.right[k] + cam.up[k]);
    return cam;
}

/* ---- the kernel: one ray ---- */

static float sample(const struct volume *v, const double p[3]) {
    long x = (long)p[0], y = (long)p[1], z = (long)p[2], n = v->size;
    if (x >= n - 1) x = n - 2;
    if (y >= n - 1) y = n - 2;
    if (z >= n - 1) z = n - 2;
    double fx = p[0] - x, fy = p[1] - y, fz = p[2] - z;
    const unsigned char *d = v->density + (z * n + y) * n + x;
    double c00 = d[0] + fx * (d[1] - d[0]), c01 = d[n] + fx * (d[n + 1] - d[n]);
    double c10 = d[n * n] + fx * (d[n * n + 1] - d[n * n]);
    double c11 = d[n * n + n] + fx * (d[n * n + n + 1] - d[n * n + n]);
    double c0 = c00 + fy * (c01 - c00), c1 = c10 + fy * (c11 - c10);
    return (float)(c0 + fz * (c1 - c0));
}

static float cast_ray(const struct volume *v, const struct camera *cam, long px, long py) {
    double o[3], t0 = 0, t1 = 1e300, hi = (double)(v->size - 1);
    for (int k = 0; k < 3; ++k) {
        o[k] = cam->origin[k] + px * cam->right[k] + py * cam->up[k];
        double d = cam->dir[k];
        if (fabs(d) < 1e-12) {
            if (o[k] < 0 || o[k] > hi) return 0.0f;
            continue;
        }
        double a = (0 - o[k]) / d, b = (hi - o[k]) / d;
        if (a > b) {
            double t = a;
            a = b;
            b = t;
        }
        t0 = a > t0 ? a : t0;
        t1 = b < t1 ? b : t1;
    }
    float color = 0.0f, alpha = 0.0f;
    for (double t = ceil(t0); t <= t1 && alpha < 0.95f;) {
        double p[3] = {o[0] + t * cam->dir[0], o[1] + t * cam->dir[1], o[2] + t * cam->dir[2]};
        long bx = (long)p[0] / BLOCK, by = (long)p[1] / BLOCK, bz = (long)p[2] / BLOCK;
        if (!v->visible[(bz * v->blocks + by) * v->blocks + bx]) {
            /* Skip to the first whole step past this block's far faces. */
            double exit = 1e300;
            long b[3] = {bx, by, bz};
            for (int k = 0; k < 3; ++k) {
                double d = cam->dir[k];
                if (fabs(d) < 1e-12) continue;
                double face = (double)((d > 0 ? b[k] + 1 : b[k]) * BLOCK);
                double e = (face - o[k]) / d;
                exit = e < exit ? e : exit;
            }
            double next = floor(exit) + 1.0;
            t = next > t + 1.0 ? next : t + 1.0;
            continue;
        }
        float s = sample(v, p);
        int d = (int)s;
        float a = v->opacity[d];
        color += (1.0f - alpha) * a * v->intensity[d];
        alpha += (1.0f - alpha) * a;
        t += 1.0;
    }
    return color;
}

static void render_tile(const struct scene *s, long frame, long tile) {
    long x0 = (tile % s->tiles_x) * TILE, y0 = (tile / s->tiles_x) * TILE;
    float *image = s->images + frame * s->width * s->width;
    for (long y = y0; y < y0 + TILE && y < s->width; ++y)
        for (long x = x0; x < x0 + TILE && x < s->width; ++x)
            image[y * s->width + x] = cast_ray(s->vol, &s->cameras[frame], x, y);
}

static void render_serial(const struct scene *s) {
    for (long f = 0; f < s->frames; ++f)
        for (long t = 0; t < s->tiles; ++t) render_tile(s, f, t);
}

/* ---- fine: a thread per group of tiles ---- */

struct fine_arg {
    const struct scene *s;
    long frame, first, end;
};

static void *fine_tiles(void *arg) {
    struct fine_arg *a = arg;
    for (long t = a->first; t < a->end; ++t) render_tile(a->s, a->frame, t);
    return NULL;
}

static void render_fine(const struct scene *s, long per_thread) {
    long threads = (s->tiles + per_thread - 1) / per_thread;
    pthread_t *ids = app_alloc((size_t)threads * sizeof *ids);
    struct fine_arg *args = app_alloc((size_t)threads * sizeof *args);
    for (long f = 0; f < s->frames; ++f) {
        for (long k = 0; k < threads; ++k) {
            long end = (k + 1) * per_thread;
            args[k] = (struct fine_arg){s, f, k * per_thread, end < s->tiles ? end : s->tiles};
            app_spawn(&ids[k], fine_tiles, &args[k]);
        }
        for (long k = 0; k < threads; ++k) app_join(ids[k]);
    }
    free(args);
    free(ids);
}

/* ---- coarse: a thread per core, task queues with stealing ---- */

struct tile_queue {
    pthread_mutex_t lock;
    long next, end; /* the owner takes from next, thieves from end */
};

struct coarse_shared {
    const struct scene *s;
    long threads;
    struct tile_queue *queues;
    pthread_barrier_t barrier;
};

struct coarse_arg {
    struct coarse_shared *c;
    long id;
};

static long take_tile(struct tile_queue *q, int own) {
    long tile = -1;
    pthread_mutex_lock(&q->lock);
    if (q->next < q->end) tile = own ? q->next++ : --q->end;
    pthread_mutex_unlock(&q->lock);
    return tile;
}

static void *coarse_worker(void *arg) {
    struct coarse_arg *a = arg;
    struct coarse_shared *c = a->c;
    const struct scene *s = c->s;
    struct tile_queue *mine = &c->queues[a->id];
    for (long f = 0; f < s->frames; ++f) {
        pthread_mutex_lock(&mine->lock);
        mine->next = a->id * s->tiles / c->threads;
        mine->end = (a->id + 1) * s->tiles / c->threads;
        pthread_mutex_unlock(&mine->lock);
        app_barrier_wait(&c->barrier); /* every queue refilled before anyone steals */
        long tile;
        while ((tile = take_tile(mine, 1)) >= 0) render_tile(s, f, tile);
        for (long k = 1; k < c->threads; ++k) {
            struct tile_queue *victim = &c->queues[(a->id + k) % c->threads];
            while ((tile = take_tile(victim, 0)) >= 0) render_tile(s, f, tile);
        }
        app_barrier_wait(&c->barrier); /* the frame is done before the queues are refilled */
    }
    return NULL;
}

static void render_coarse(const struct scene *s, long threads) {
    struct coarse_shared c = {s, threads, app_alloc((size_t)threads * sizeof(struct tile_queue)), {{0}}};
    app_barrier_init(&c.barrier, (unsigned)threads);
    for (long k = 0; k < threads; ++k) {
        pthread_mutex_init(&c.queues[k].lock, NULL);
        c.queues[k].next = c.queues[k].end = 0;
    }
    pthread_t *ids = app_alloc((size_t)threads * sizeof *ids);
    struct coarse_arg *args = app_alloc((size_t)threads * sizeof *args);
    for (long k = 0; k < threads; ++k) {
        args[k] = (struct coarse_arg){&c, k};
        app_spawn(&ids[k], coarse_worker, &args[k]);
    }
    for (long k = 0; k < threads; ++k) app_join(ids[k]);
    for (long k = 0; k < threads; ++k) pthread_mutex_destroy(&c.queues[k].lock);
    pthread_barrier_destroy(&c.barrier);
    free(args);
    free(ids);
    free(c.queues);
}

int main(int argc, char **argv) {
    app_init("volrend", NULL);
    struct app_common common = {APP_SERIAL, 0, 1, 1};
    long size = 256, width = 375, frames = 4, per_thread = -1, threads = -1;
    for (int i = 1; i < argc; ++i) {
        if (app_parse_common(usage, argc, argv, &i, &common)) continue;
        const char *f = argv[i];
        if (strcmp(f, "--volume") == 0) {
            size = app_parse_long(usage, f, app_flag_value(usage, argc, argv, &i), 16, 512);
        } else if (strcmp(f, "--image") == 0) {
            width = app_parse_long(usage, f, app_flag_value(usage, argc, argv, &i), 4, 4096);
        } else if (strcmp(f, "--frames") == 0) {
            frames = app_parse_long(usage, f, app_flag_value(usage, argc, argv, &i), 1, 1000);
        } else if (strcmp(f, "--tiles-per-thread") == 0) {
            per_thread = app_parse_long(usage, f, app_flag_value(usage, argc, argv, &i), 1, 1L << 20);
        } else if (strcmp(f, "--threads") == 0) {
            threads = app_parse_long(usage, f, app_flag_value(usage, argc, argv, &i), 1, 4096);
        } else {
            app_bad_argument(usage, "unknown argument '%s'", f);
        }
    }
    app_require_version(usage, &common);
    enum app_version version = common.version;
    long tiles_x = (width + TILE - 1) / TILE, tiles = tiles_x * tiles_x;
    if (per_thread >= 0 && version != APP_FINE)
        app_bad_argument(usage, "--tiles-per-thread applies to --version fine only");
    if (per_thread > tiles)
        app_bad_argument(usage, "--tiles-per-thread %ld: expected 1 to the number of tiles, %ld", per_thread, tiles);
    if (threads >= 0 && version != APP_COARSE)
        app_bad_argument(usage, "--threads applies to --version coarse only (fine: --tiles-per-thread)");
    if (per_thread < 0) per_thread = 64 < tiles ? 64 : tiles;
    if (threads < 0) threads = app_online_cpus();

    uint64_t rng = (uint64_t)common.seed;
    struct volume vol;
    generate_volume(&vol, size, &rng);
    uint64_t input_sum = app_checksum(vol.density, (size_t)(size * size * size));
    struct scene s = {&vol,
                      width,
                      tiles_x,
                      tiles,
                      frames,
                      app_alloc((size_t)frames * sizeof(struct camera)),
                      app_alloc((size_t)(frames * width * width) * sizeof(float))};
    for (long f = 0; f < frames; ++f) s.cameras[f] = make_camera(size, width, f);
    printf("volrend: %ld^3 volume, %ldx%ld image, %ld tiles of 4x4, %ld frames\n", size, width, width, tiles, frames);

    double start = app_now();
    if (version == APP_SERIAL)
        render_serial(&s);
    else if (version == APP_FINE)
        render_fine(&s, per_thread);
    else
        render_coarse(&s, threads);
    double seconds = app_now() - start;
    app_report_time(version, seconds);

    size_t pixels = (size_t)(frames * width * width);
    if (common.check && version != APP_SERIAL) {
        struct scene ref = s;
        ref.images = app_alloc(pixels * sizeof(float));
        render_serial(&ref);
        for (size_t i = 0; i < pixels; ++i)
            if (memcmp(&ref.images[i], &s.images[i], sizeof(float)) != 0)
                app_fail("%s image differs from the serial version's at frame %zu, pixel (%zu, %zu): %.9g, serial %.9g",
                         app_version_name(version), i / (size_t)(width * width), i % (size_t)width,
                         i / (size_t)width % (size_t)width, s.images[i], ref.images[i]);
        free(ref.images);
    }
    char sizes[64];
    snprintf(sizes, sizeof sizes, "%ld^3 volume, %ldx%ld image, %ld frames", size, width, width, frames);
    app_report_result(&common, sizes, input_sum, "image", app_checksum(s.images, pixels * sizeof(float)));
    free(s.images);
    free(s.cameras);
    free(vol.visible);
    free(vol.density);
    return 0;
}
