/* create_join: the cost of a pthread_create + pthread_join pair, as a plain
 * Pthreads program. `weft-bench micro` runs it under libweft-pthread (one
 * worker) for its figure shim_create_join_ns, beside weft's own create_join.
 *
 *   create_join N     N/10 pairs untimed (stacks, code warm), then N timed
 *
 * Each thread returns its argument; the sum is checked. Prints one line:
 * "ops=N elapsed_ns=T". */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "common.h"

static void* return_arg(void* arg) { return arg; }

/* n pairs; returns 0, or 1 after saying what went wrong. */
static int pairs(uint64_t n) {
    uintptr_t sum = 0;
    for (uint64_t i = 0; i < n; ++i) {
        pthread_t t;
        int rc = pthread_create(&t, NULL, return_arg, (void*)(uintptr_t)i);
        if (rc != 0) {
            fprintf(stderr, "create_join: pthread_create failed: %s\n", strerror(rc));
            return 1;
        }
        void* ret = NULL;
        if ((rc = pthread_join(t, &ret)) != 0) {
            fprintf(stderr, "create_join: pthread_join failed: %s\n", strerror(rc));
            return 1;
        }
        sum += (uintptr_t)ret;
    }
    if (n > 0 && sum != (uintptr_t)(n * (n - 1) / 2)) {
        fprintf(stderr, "create_join: threads returned wrong values (sum %ju)\n", (uintmax_t)sum);
        return 1;
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s N   (N pthread_create + pthread_join pairs, timed)\n", argv[0]);
        return 2;
    }
    uint64_t n = parse_size(argv[0], "N", argv[1], 1000000000);
    if (pairs(n / 10 + 1) != 0) return 1;
    double t0 = seconds_now();
    if (pairs(n) != 0) return 1;
    double t = seconds_now() - t0;
    printf("ops=%ju elapsed_ns=%.0f\n", (uintmax_t)n, t * 1e9);
    return 0;
}
