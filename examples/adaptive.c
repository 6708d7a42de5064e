/* adaptive.c: the active worker count following the load of the machine.
 * Runs a parallel computation (a tree of threads summing a range) for a few
 * seconds and prints, every half second, how many workers are active. Start
 * a CPU-bound program beside it and watch the count drop, stop it and watch
 * the count come back:
 *     ./adaptive &  yes > /dev/null &  sleep 3; kill %2
 *     WEFT_ADAPT=asat ./adaptive        # Severance & Enbody's timed barrier
 *     WEFT_ADAPT=off ./adaptive         # every worker, whatever the load
 * Two of them at once split the cores through the machine-wide budget. */
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <weft/weft.h>

static void *sum(void *arg) {
    int64_t *range = arg; /* [lo, hi) in, the sum out in range[0] */
    int64_t lo = range[0], hi = range[1];
    if (hi - lo <= 20000) {
        int64_t s = 0;
        for (int64_t i = lo; i < hi; ++i) s += i % 7;
        range[0] = s;
        return NULL;
    }
    int64_t mid = lo + (hi - lo) / 2, left[2] = {lo, mid}, right[2] = {mid, hi};
    weft_thread_t t;
    weft_thread_create(&t, NULL, sum, left);
    sum(right);
    weft_thread_join(t, NULL);
    range[0] = left[0] + right[0];
    return NULL;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(void) {
    weft_adapt_info_t info;
    if (weft_init(NULL) != 0) return 2; /* from the environment: WEFT_WORKERS, WEFT_ADAPT, ... */
    weft_adapt_get(&info);
    printf("WEFT_ADAPT=%s, at most %d workers, a reading every %d ms\n", info.mode, info.workers, info.interval_ms);
    double start = now_s(), next_print = start;
    int64_t expected = 0;
    for (int64_t i = 0; i < 4000000; ++i) expected += i % 7;
    while (now_s() - start < 6.0) {
        int64_t range[2] = {0, 4000000};
        sum(range);
        if (range[0] != expected) {
            fprintf(stderr, "wrong sum %lld (expected %lld)\n", (long long)range[0], (long long)expected);
            return 1;
        }
        if (now_s() >= next_print) {
            weft_adapt_get(&info);
            printf("%4.1f s: %d of %d workers active (budget share %d of %d process(es))\n", now_s() - start,
                   info.active_workers, info.workers, info.budget_share, info.budget_members);
            fflush(stdout);
            next_print += 0.5;
        }
    }
    weft_stats_t s;
    weft_stats_get(&s);
    printf("%llu readings, %llu workers dropped, %llu added\n", (unsigned long long)s.adapt_readings,
           (unsigned long long)s.workers_dropped, (unsigned long long)s.workers_added);
    return weft_finalize();
}
