/* A program with thread-local storage of its own (__thread): under the shim,
 * weft threads on one worker would share it, and the shim must say so at
 * its first pthread_create (shim.tls_detect.warning checks the message names this program). */
#include <pthread.h>

#include "check.h"

__thread int per_thread = 7;

static void* read_own(void* a) {
    (void)a;
    return (void*)(long)per_thread;
}

int main(void) {
    pthread_t t;
    void* r;
    CHECK_EQ(pthread_create(&t, NULL, read_own, NULL), 0);
    CHECK_EQ(pthread_join(t, &r), 0);
    CHECK_EQ((long)r, 7);
    CHECKS_DONE("tls_detect");
}
