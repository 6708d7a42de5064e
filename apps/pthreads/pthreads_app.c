/* The shared helpers of the plain Pthreads programs (pthreads_app.h). */
#include "pthreads_app.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *app_name = "app";
static const char *app_peer = NULL;
static atomic_long threads_created;
static atomic_long threads_live;
static atomic_long threads_max_live;

void app_init(const char *name, const char *peer) {
    app_name = name;
    app_peer = peer;
}

_Noreturn void app_bad_argument(const char *usage, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", app_name);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: %s %s\n", app_name, usage);
    exit(2);
}

_Noreturn void app_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: FAIL: ", app_name);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

long app_parse_long(const char *usage, const char *flag, const char *text, long min, long max) {
    char *end = NULL;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < min || value > max)
        app_bad_argument(usage, "%s '%s': expected an integer from %ld to %ld", flag, text, min, max);
    return value;
}

enum app_version app_parse_version(const char *usage, const char *text) {
    if (strcmp(text, "serial") == 0) return APP_SERIAL;
    if (strcmp(text, "coarse") == 0) return APP_COARSE;
    if (strcmp(text, "fine") == 0) return APP_FINE;
    if (app_peer != NULL && strcmp(text, app_peer) == 0) return APP_PEER;
    app_bad_argument(usage, "--version '%s': valid versions are serial, coarse, fine%s%s", text, app_peer ? ", " : "",
                     app_peer ? app_peer : "");
}

const char *app_version_name(enum app_version v) {
    return v == APP_SERIAL ? "serial" : v == APP_COARSE ? "coarse" : v == APP_FINE ? "fine" : app_peer;
}

const char *app_flag_value(const char *usage, int argc, char **argv, int *i) {
    if (*i + 1 >= argc) app_bad_argument(usage, "%s needs a value", argv[*i]);
    return argv[++*i];
}

int app_parse_common(const char *usage, int argc, char **argv, int *i, struct app_common *c) {
    const char *flag = argv[*i];
    if (strcmp(flag, "--version") == 0) {
        c->version = app_parse_version(usage, app_flag_value(usage, argc, argv, i));
        c->have_version = 1;
    } else if (strcmp(flag, "--seed") == 0) {
        c->seed = app_parse_long(usage, flag, app_flag_value(usage, argc, argv, i), 0, 0x7fffffffffffffffL);
    } else if (strcmp(flag, "--no-check") == 0) {
        c->check = 0;
    } else {
        return 0;
    }
    return 1;
}

void app_require_version(const char *usage, const struct app_common *c) {
    if (!c->have_version) app_bad_argument(usage, "--version is required");
}

long app_online_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

double app_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t app_rng_next(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double app_rng_uniform(uint64_t *state) { return (double)(app_rng_next(state) >> 11) * 0x1.0p-53; }

uint64_t app_checksum(const void *data, size_t size) {
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < size; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

void app_spawn(pthread_t *thread, void *(*start)(void *), void *arg) {
    long live = atomic_fetch_add(&threads_live, 1) + 1;
    long seen = atomic_load(&threads_max_live);
    while (live > seen && !atomic_compare_exchange_weak(&threads_max_live, &seen, live)) {
    }
    int rc = pthread_create(thread, NULL, start, arg);
    if (rc != 0) app_fail("pthread_create: %s (%ld threads alive)", strerror(rc), live - 1);
    atomic_fetch_add(&threads_created, 1);
}

void app_join(pthread_t thread) {
    int rc = pthread_join(thread, NULL);
    if (rc != 0) app_fail("pthread_join: %s", strerror(rc));
    atomic_fetch_sub(&threads_live, 1);
}

long app_threads_created(void) { return atomic_load(&threads_created); }
long app_threads_max_live(void) { return atomic_load(&threads_max_live); }

void app_reset_thread_counts(void) {
    if (atomic_load(&threads_live) != 0)
        app_fail("app_reset_thread_counts with %ld threads alive", atomic_load(&threads_live));
    atomic_store(&threads_created, 0);
    atomic_store(&threads_max_live, 0);
}

void app_barrier_init(pthread_barrier_t *barrier, unsigned count) {
    int rc = pthread_barrier_init(barrier, NULL, count);
    if (rc != 0) app_fail("pthread_barrier_init(%u): %s", count, strerror(rc));
}

void app_barrier_wait(pthread_barrier_t *barrier) {
    int rc = pthread_barrier_wait(barrier);
    if (rc != 0 && rc != PTHREAD_BARRIER_SERIAL_THREAD) app_fail("pthread_barrier_wait: %s", strerror(rc));
}

void *app_alloc(size_t size) {
    void *p = malloc(size);
    if (p == NULL) app_fail("out of memory allocating %zu bytes", size);
    return p;
}

void app_report_time(enum app_version v, double seconds) {
    printf("%s: version %s: time %.6f s, threads created %ld, most alive at once %ld\n", app_name, app_version_name(v),
           seconds, app_threads_created(), app_threads_max_live());
}

void app_report_result(const struct app_common *c, const char *sizes, uint64_t input_sum, const char *what,
                       uint64_t result_sum) {
    printf("%s: %s, seed %ld, input checksum 0x%016llx, %s checksum 0x%016llx%s\n", app_name, sizes, c->seed,
           (unsigned long long)input_sum, what, (unsigned long long)result_sum,
           !c->check                  ? " (unchecked)"
           : c->version == APP_SERIAL ? ""
           : c->version == APP_PEER   ? ", within tolerance of the serial version's"
                                      : ", same as the serial version's");
}
