/* Under the shim only (glibc would cancel): pthread_cancel and asynchronous
 * cancellation are refused with ENOTSUP, the thread goes on, and the state is
 * unchanged by the refused call. */
#include <pthread.h>

#include "../check.h"

static void* idle(void* a) { return a; }

int main(void) {
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, idle, (void*)5), 0);
    CHECK_EQ(pthread_cancel(t), ENOTSUP);
    void* r;
    CHECK_EQ(pthread_join(t, &r), 0);
    CHECK(r == (void*)5);
    int old = -1;
    CHECK_EQ(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old), ENOTSUP);
    CHECK_EQ(old, -1);
    CHECK_EQ(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old), 0);
    CHECK_EQ(old, PTHREAD_CANCEL_DEFERRED);
    CHECKS_DONE("cancel_refused");
}
