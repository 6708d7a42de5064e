/* A module loaded with dlopen while the threads that use it already run has
 * __thread data each of them sees as its own: its initial value, then its own
 * updates across yields (lib/tls_module.c). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>

#include "check.h"

enum { threads = 24, rounds = 200 };

static pthread_barrier_t loaded;
static long (*bump)(void);
static long* (*address_of)(void);
static long* addresses[threads];

static void* use_module(void* a) {
    long id = (long)a;
    pthread_barrier_wait(&loaded); /* main dlopens the module meanwhile */
    addresses[id] = address_of();
    long last = 0;
    for (int i = 0; i < rounds; ++i) {
        last = bump();
        sched_yield();
    }
    pthread_barrier_wait(&loaded); /* every thread's copy alive at once */
    return (void*)last;
}

int main(void) {
    pthread_t ts[threads];
    void* r;
    const char* path = SHIM_TLS_MODULE; /* lib/tls_module.c, built by CMakeLists.txt */
    CHECK_EQ(pthread_barrier_init(&loaded, NULL, threads + 1), 0);
    for (long i = 0; i < threads; ++i) CHECK_EQ(pthread_create(&ts[i], NULL, use_module, (void*)i), 0);
    void* h = dlopen(path, RTLD_NOW);
    if (h == NULL) fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    CHECK(h != NULL);
    bump = (long (*)(void))dlsym(h, "module_bump");
    address_of = (long* (*)(void))dlsym(h, "module_counter_address");
    CHECK(bump != NULL && address_of != NULL);
    pthread_barrier_wait(&loaded);
    pthread_barrier_wait(&loaded);
    for (int i = 0; i < threads; ++i) {
        CHECK_EQ(pthread_join(ts[i], &r), 0);
        CHECK_EQ((long)r, 1000 + rounds);
    }
    for (int i = 0; i < threads; ++i)
        for (int j = i + 1; j < threads; ++j) CHECK(addresses[i] != addresses[j]);
    CHECK_EQ(bump(), 1001); /* main's own copy, untouched */
    CHECK_EQ(pthread_barrier_destroy(&loaded), 0);
    CHECKS_DONE("tls_dlopen");
}
