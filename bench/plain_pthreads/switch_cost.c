/* switch_cost — what a switch and a thread cost a Pthreads program, run under
 * libweft-pthread with and without a TLS block per thread (WEFT_SHIM_TLS=on /
 * off; docs/design/shim.md, "Thread-local storage and errno"). A plain C program with
 * <pthread.h> only.
 *
 *   switch_cost yield N    two threads sched_yield to each other N times each
 *                          (run it with WEFT_WORKERS=1): ns per yield, each a
 *                          switch between the two threads
 *   switch_cost create N   N pthread_create + pthread_join pairs, one at a time:
 *                          ns per pair
 *
 * Prints one JSON object: {"op": ..., "n": N, "ns_per_op": ...}. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long n_ops;
static __thread long yields; /* per thread: the program's TLS, touched every round */

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void* yielder(void* a) {
    (void)a;
    long own = 0;
    for (long i = 0; i < n_ops; ++i) {
        ++yields; /* shared between the two threads without TLS blocks: not checked */
        ++own;
        sched_yield();
    }
    return (void*)own;
}

static void* nothing(void* a) { return a; }

int main(int argc, char** argv) {
    if (argc != 3 || (strcmp(argv[1], "yield") != 0 && strcmp(argv[1], "create") != 0) || atol(argv[2]) <= 0) {
        fprintf(stderr, "usage: switch_cost yield|create N (N > 0)\n");
        return 2;
    }
    n_ops = atol(argv[2]);
    long long t0 = now_ns(), ops = 0;
    if (strcmp(argv[1], "yield") == 0) {
        pthread_t a, b;
        void *ra, *rb;
        if (pthread_create(&a, NULL, yielder, NULL) != 0 || pthread_create(&b, NULL, yielder, NULL) != 0) return 1;
        pthread_join(a, &ra);
        pthread_join(b, &rb);
        if ((long)ra != n_ops || (long)rb != n_ops) {
            fprintf(stderr, "switch_cost: a thread counted %ld and %ld yields, not %ld each\n", (long)ra, (long)rb,
                    n_ops);
            return 1;
        }
        ops = 2 * n_ops;
    } else {
        for (long i = 0; i < n_ops; ++i) {
            pthread_t t;
            if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0) return 1;
        }
        ops = n_ops;
    }
    printf("{\"op\": \"%s\", \"n\": %ld, \"ns_per_op\": %.1f}\n", argv[1], n_ops, (double)(now_ns() - t0) / ops);
    return 0;
}
