/* A library that allocates in its constructor, before the shim's constructor
 * has run (linked after libweft-pthread, or with the shim preloaded), and
 * starts a kernel thread there that allocates once the runtime runs: a
 * library's own worker pool, made through glibc's pthread_create. malloc.c
 * frees the early blocks on a weft thread and joins the kernel thread. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

void* early_blocks[3];
pthread_t early_allocator;
int early_allocator_rc = -1;
atomic_int early_go;

/* Allocates, fills, checks and frees blocks of many sizes, with calls of every
 * kind; returns the number of blocks whose contents were wrong. */
static void* churn(void* a) {
    (void)a;
    while (!atomic_load(&early_go)) {
    }
    long bad = 0;
    for (int i = 0; i < 20000; ++i) {
        size_t n = 16 + (size_t)(i % 97) * 40;
        unsigned char* p = (i % 3 == 0) ? calloc(1, n) : malloc(n);
        if (p == NULL) return (void*)-1L;
        memset(p, i & 0xff, n);
        p = realloc(p, 2 * n);
        if (p == NULL) return (void*)-1L;
        if (p[n - 1] != (unsigned char)(i & 0xff)) ++bad;
        free(p);
    }
    return (void*)bad;
}

__attribute__((constructor)) static void allocate_early(void) {
    early_blocks[0] = malloc(1000);
    early_blocks[1] = calloc(10, 100);
    if (posix_memalign(&early_blocks[2], 256, 3000) != 0) early_blocks[2] = NULL;
    if (early_blocks[0] != NULL) memset(early_blocks[0], 7, 1000);
    early_blocks[0] = realloc(early_blocks[0], 5000);
    early_allocator_rc = pthread_create(&early_allocator, NULL, churn, NULL);
}
