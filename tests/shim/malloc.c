/* The allocation functions as a glibc program uses them (results, errno,
 * alignment, contents kept by realloc), blocks allocated before the shim's
 * constructor and freed on a weft thread, a kernel thread that is not a weft
 * thread allocating alongside weft threads, and threads that allocate and hold
 * memory at once. Under the shim, check_heap.sh reads weft's heap figure
 * (WEFT_STATS) and, under dfs, the quota preemptions they cause. */
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "check.h"

extern void* early_blocks[3];
extern pthread_t early_allocator;
extern int early_allocator_rc;
extern atomic_int early_go;

enum { nthreads = 8, blocks_per_thread = 16, block_bytes = 64 * 1024 };

static pthread_barrier_t all_hold;

/* Holds blocks_per_thread * block_bytes (1 MiB) until every thread holds its
 * own: the program's heap peaks at 8 MiB at least. */
static void* hold(void* arg) {
    long id = (long)arg;
    unsigned char* blocks[blocks_per_thread];
    for (int i = 0; i < blocks_per_thread; ++i) {
        blocks[i] = malloc(block_bytes);
        if (blocks[i] == NULL) return (void*)1;
        memset(blocks[i], (int)(id + i), block_bytes);
    }
    pthread_barrier_wait(&all_hold);
    long bad = 0;
    for (int i = 0; i < blocks_per_thread; ++i) {
        if (blocks[i][block_bytes - 1] != (unsigned char)(id + i)) ++bad;
        free(blocks[i]);
    }
    return (void*)bad;
}

static int aligned(const void* p, size_t a) { return ((uintptr_t)p & (a - 1)) == 0; }

/* Sizes no allocator can satisfy, hidden from the compiler's warnings. */
static volatile size_t huge = SIZE_MAX - 8192;

static void functions(void) {
    unsigned char* p = malloc(100);
    CHECK(p != NULL);
    CHECK(malloc_usable_size(p) >= 100);
    memset(p, 1, 100);
    p = realloc(p, 100000); /* grows (and moves): contents kept */
    CHECK(p != NULL && p[99] == 1);
    p = realloc(p, 10); /* shrinks */
    CHECK(p != NULL && p[9] == 1);
    free(p);
    CHECK((p = realloc(NULL, 50)) != NULL);
    errno = 0;
    CHECK(realloc(p, 0) == NULL); /* glibc: frees it */
    free(NULL);

    int* z = calloc(1000, sizeof(int));
    CHECK(z != NULL);
    int sum = 0;
    for (int i = 0; i < 1000; ++i) sum += z[i];
    CHECK_EQ(sum, 0);
    free(z);

    errno = 0;
    CHECK(calloc(huge / 2, 3) == NULL); /* the product overflows */
    CHECK_EQ(errno, ENOMEM);
    errno = 0;
    CHECK(reallocarray(NULL, huge / 4, 8) == NULL);
    CHECK_EQ(errno, ENOMEM);
    errno = 0;
    CHECK(malloc(huge) == NULL);
    CHECK_EQ(errno, ENOMEM);
    CHECK((p = reallocarray(NULL, 10, 10)) != NULL);
    free(p);

    void* a = (void*)1;
    CHECK_EQ(posix_memalign(&a, 3, 10), EINVAL);
    CHECK_EQ(posix_memalign(&a, 0, 10), EINVAL);
    CHECK_EQ(posix_memalign(&a, 24, 10), EINVAL); /* a multiple of sizeof(void*), not a power of two */
    CHECK(a == (void*)1);                         /* untouched on failure */
    CHECK_EQ(posix_memalign(&a, 4096, huge), ENOMEM);
    CHECK_EQ(posix_memalign(&a, 4096, 5000), 0);
    CHECK(aligned(a, 4096));
    memset(a, 2, 5000);
    a = realloc(a, 20000); /* an aligned block reallocated: contents kept */
    CHECK(a != NULL && ((unsigned char*)a)[4999] == 2);
    free(a);
    CHECK((a = aligned_alloc(64, 640)) != NULL && aligned(a, 64));
    free(a);
    CHECK((a = memalign(128, 1)) != NULL && aligned(a, 128));
    free(a);
    long page = sysconf(_SC_PAGESIZE);
    CHECK((a = valloc(10)) != NULL && aligned(a, (size_t)page));
    free(a);
    CHECK((a = pvalloc(10)) != NULL && aligned(a, (size_t)page));
    CHECK(malloc_usable_size(a) >= (size_t)page);
    free(a);
}

/* "hold": only the threads that hold memory (check_heap.sh's runs, with
 * several workers: an errno check after a call that moved the thread to
 * another worker reads the old worker's errno, docs/shim.md). */
int main(int argc, char** argv) {
    int hold_only = argc > 1 && strcmp(argv[1], "hold") == 0;
    /* Allocated by a library's constructor before the shim's ran. */
    CHECK(early_blocks[0] != NULL && early_blocks[1] != NULL && early_blocks[2] != NULL);
    CHECK(((unsigned char*)early_blocks[0])[999] == 7);
    CHECK(((char*)early_blocks[1])[999] == 0);
    CHECK(aligned(early_blocks[2], 256));
    for (int i = 0; i < 3; ++i) free(early_blocks[i]);
    CHECK_EQ(early_allocator_rc, 0);

    if (!hold_only) functions();

    atomic_store(&early_go, 1); /* the kernel thread allocates alongside */
    CHECK_EQ(pthread_barrier_init(&all_hold, NULL, nthreads), 0);
    pthread_t t[nthreads];
    for (long i = 0; i < nthreads; ++i) CHECK_EQ(pthread_create(&t[i], NULL, hold, (void*)i), 0);
    for (int i = 0; i < nthreads; ++i) {
        void* r;
        CHECK_EQ(pthread_join(t[i], &r), 0);
        CHECK(r == NULL);
    }
    void* r;
    CHECK_EQ(pthread_join(early_allocator, &r), 0);
    CHECK(r == NULL);
    CHECK_EQ(pthread_barrier_destroy(&all_hold), 0);
    CHECKS_DONE("malloc");
}
