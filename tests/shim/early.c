/* A thread a library started before the shim's constructor ran
 * (lib/early_thread.c) contends for one mutex with weft threads, and main
 * joins it; the thread-specific value that library's constructor set is
 * main's. */
#include <pthread.h>
#include <sched.h>

#include "check.h"

extern pthread_mutex_t early_mutex;
extern long early_counter;
extern pthread_t early_thread;
extern int early_create_rc;
extern pthread_key_t early_key;
extern int early_key_rc;
extern int early_value;

static void* add(void* a) {
    (void)a;
    for (int i = 0; i < 1000; ++i) {
        pthread_mutex_lock(&early_mutex);
        long c = early_counter;
        if (i % 100 == 0) sched_yield();
        early_counter = c + 1;
        pthread_mutex_unlock(&early_mutex);
    }
    return NULL;
}

int main(void) {
    CHECK_EQ(early_create_rc, 0);
    CHECK_EQ(early_key_rc, 0);
    CHECK(pthread_getspecific(early_key) == &early_value);
    pthread_t ts[4];
    for (int i = 0; i < 4; ++i) CHECK_EQ(pthread_create(&ts[i], NULL, add, NULL), 0);
    for (int i = 0; i < 4; ++i) CHECK_EQ(pthread_join(ts[i], NULL), 0);
    void* r;
    CHECK_EQ(pthread_join(early_thread, &r), 0);
    CHECK(r == (void*)42);
    CHECK_EQ(early_counter, 5000);
    CHECKS_DONE("early");
}
