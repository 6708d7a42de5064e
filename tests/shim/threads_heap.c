/* Threads alive at once that allocate nothing: under the shim the heap
 * figure (WEFT_STATS, read by check_heap.sh --max-peak) stays the program's
 * own, an array of pthread_t, however many threads are alive; the runtime's
 * per-thread structures (a TLS block each, the handle table's chunks) are not
 * the program's heap (src/core/own_allocation.hpp). */
#include "check.h"

enum {
    nthreads = 512
};

static pthread_barrier_t all_alive;

static void* wait_for_all(void* arg) {
    (void)arg;
    pthread_barrier_wait(&all_alive);
    return NULL;
}

int main(void) {
    pthread_t* ids = malloc(nthreads * sizeof *ids);
    if (ids == NULL) return 1;
    CHECK_EQ(pthread_barrier_init(&all_alive, NULL, nthreads + 1), 0);
    for (int i = 0; i < nthreads; ++i) CHECK_EQ(pthread_create(&ids[i], NULL, wait_for_all, NULL), 0);
    pthread_barrier_wait(&all_alive); /* every thread is alive here */
    for (int i = 0; i < nthreads; ++i) CHECK_EQ(pthread_join(ids[i], NULL), 0);
    CHECK_EQ(pthread_barrier_destroy(&all_alive), 0);
    free(ids);
    printf("threads_heap: %d threads alive at once\n", nthreads);
    printf("threads_heap: %d checks passed\n", shim_checks);
    return 0;
}
