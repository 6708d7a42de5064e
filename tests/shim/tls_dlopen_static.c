/* Threads created one after another after a dlopen of a module with static TLS
 * (lib/tls_static_module.c, initial-exec) each start with the module's
 * initial value, as a new thread does on glibc: each reuses the block of the
 * one before (src/shim/tls_block.cpp), whose copy it changed, so the reuse
 * must copy the new module's image too, not only those of the modules loaded
 * at start. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>

#include "check.h"

enum {
    threads = 16
};

static long (*bump)(void);

static void* use_module(void* a) {
    (void)a;
    long first = bump();
    bump();
    return (void*)first;
}

int main(void) {
    const char* path = SHIM_TLS_STATIC_MODULE; /* built by CMakeLists.txt */
    void* h = dlopen(path, RTLD_NOW);
    if (h == NULL) fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    CHECK(h != NULL);
    bump = (long (*)(void))dlsym(h, "static_bump");
    CHECK(bump != NULL);
    for (int i = 0; i < threads; ++i) {
        pthread_t t;
        void* r;
        CHECK_EQ(pthread_create(&t, NULL, use_module, NULL), 0);
        CHECK_EQ(pthread_join(t, &r), 0);
        CHECK_EQ((long)r, 2001);
    }
    CHECK_EQ(bump(), 2001); /* main's own copy, untouched */
    CHECKS_DONE("tls_dlopen_static");
}
