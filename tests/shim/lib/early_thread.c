/* A library that starts a thread from its constructor, as a library's own
 * worker pool may: linked after libweft-pthread (or with the shim preloaded),
 * its constructor runs before the shim's, so the thread is one of glibc's
 * kernel threads, not a weft thread. early.c checks that it keeps working
 * once the runtime runs: it takes a mutex weft threads contend for, and main
 * joins it. The constructor first sets a thread-specific value, as GLib's
 * constructor does: under the shim that starts weft's runtime before the
 * shim's own initializers have run, and main must still see the value. */
#include <pthread.h>
#include <unistd.h>

pthread_mutex_t early_mutex = PTHREAD_MUTEX_INITIALIZER;
long early_counter;
pthread_t early_thread;
int early_create_rc = -1;
pthread_key_t early_key;
int early_key_rc = -1;
int early_value;

static void* serve(void* a) {
    (void)a;
    usleep(20000); /* main runs meanwhile: the runtime is up when it goes on */
    for (int i = 0; i < 1000; ++i) {
        pthread_mutex_lock(&early_mutex);
        ++early_counter;
        pthread_mutex_unlock(&early_mutex);
    }
    return (void*)42;
}

__attribute__((constructor)) static void start_early_thread(void) {
    early_key_rc = pthread_key_create(&early_key, NULL);
    if (early_key_rc == 0) early_key_rc = pthread_setspecific(early_key, &early_value);
    early_create_rc = pthread_create(&early_thread, NULL, serve, NULL);
}
