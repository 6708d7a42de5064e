/* What the plain Pthreads programs of apps/ share (apps/fft1d, apps/spmv,
 * apps/volrend): Narlikar & Blelloch's application suite ("Pthreads for
 * Dynamic and Irregular Parallelism"), written with the standard Pthreads API
 * and the C library only, never a weft header, so that one binary runs on
 * glibc's threads and under libweft-pthread (docs/design/pthreads-apps.md).
 *
 * Every program takes --version serial|coarse|fine, checks its result against
 * the serial version's, prints its time, and exits 1 with a message on stderr
 * for a wrong result, 2 for a bad argument. */
#ifndef WEFT_APPS_PTHREADS_APP_H
#define WEFT_APPS_PTHREADS_APP_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* APP_PEER: another library's version of the same computation, named by the
 * program (fft1d's "fftw"), where the build has that library. */
enum app_version {
    APP_SERIAL,
    APP_COARSE,
    APP_FINE,
    APP_PEER
};

/* The flags every program takes: --version (required), --seed, --no-check. */
struct app_common {
    enum app_version version;
    int have_version;
    long seed; /* default 1 */
    int check; /* compare with the serial version's result (default on) */
};

/* The program's name in messages ("fft1d") and the name --version accepts for
 * APP_PEER (NULL: none); set once by app_init. */
void app_init(const char *name, const char *peer);

/* Exit 2 with "<name>: <message>" and the usage line. */
_Noreturn void app_bad_argument(const char *usage, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Exit 1 with "<name>: FAIL: <message>" (a wrong result, or a failed call). */
_Noreturn void app_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A decimal integer in [min, max] given to flag, or app_bad_argument. */
long app_parse_long(const char *usage, const char *flag, const char *text, long min, long max);
enum app_version app_parse_version(const char *usage, const char *text);
const char *app_version_name(enum app_version v);
/* The value after argv[*i] (advancing *i), or app_bad_argument if there is none. */
const char *app_flag_value(const char *usage, int argc, char **argv, int *i);

/* Takes argv[*i] (and its value, advancing *i) when it is a common flag;
 * returns 0 for any other argument. */
int app_parse_common(const char *usage, int argc, char **argv, int *i, struct app_common *c);
/* After the loop: --version given, or app_bad_argument. */
void app_require_version(const char *usage, const struct app_common *c);

/* Processors online: the coarse versions' default thread count. */
long app_online_cpus(void);

double app_now(void); /* seconds, CLOCK_MONOTONIC */

/* Deterministic inputs: splitmix64 (Steele, Lea & Flood), so every generator
 * gives the same numbers on every machine and run for the same seed. */
uint64_t app_rng_next(uint64_t *state);
/* Uniform in [0, 1), 53 random bits: exact, no libm. */
double app_rng_uniform(uint64_t *state);

/* FNV-1a, 64 bits, over size bytes: the input and result checksums. */
uint64_t app_checksum(const void *data, size_t size);

/* pthread_create/pthread_join that end the program on failure and count the
 * threads: created in all, and the most alive at once (created, not yet joined). */
void app_spawn(pthread_t *thread, void *(*start)(void *), void *arg);
void app_join(pthread_t thread);
long app_threads_created(void);
long app_threads_max_live(void);
/* Starts both counts again from zero (no thread may be alive): for programs
 * whose untimed warm-up creates threads too. */
void app_reset_thread_counts(void);

void app_barrier_init(pthread_barrier_t *barrier, unsigned count);
void app_barrier_wait(pthread_barrier_t *barrier);

void *app_alloc(size_t size); /* malloc, or app_fail */

/* The lines every program prints at the end, in this order: the time and
 * thread counts, then the result's line (the last line, identical for every
 * version of a run whose result is right: tests compare it across runs). */
void app_report_time(enum app_version v, double seconds);
/* The last line: "<name>: <sizes>, seed S, input checksum 0x.., <what> checksum
 * 0x..", and ", same as the serial version's" once the check has passed
 * (", within tolerance of the serial version's" for a peer). */
void app_report_result(const struct app_common *c, const char *sizes, uint64_t input_sum, const char *what,
                       uint64_t result_sum);

#endif
