/* Under the shim only (glibc accepts it): asynchronous cancellation is
 * refused with ENOTSUP, and the type is unchanged by the refused call. */
#include <pthread.h>

#include "../check.h"

int main(void) {
    int old = -1;
    CHECK_EQ(pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old), ENOTSUP);
    CHECK_EQ(old, -1);
    CHECK_EQ(pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old), 0);
    CHECK_EQ(old, PTHREAD_CANCEL_DEFERRED);
    CHECKS_DONE("cancel_refused");
}
