/* pthread_kill(t, 0) on a thread that was joined: ESRCH under the shim (a
 * weft thread's handle is stale once joined). Not run on glibc's threads,
 * where the answer is undefined (glibc says 0 while the thread's descriptor
 * waits in its cache). */
#include <pthread.h>
#include <signal.h>

#include "../check.h"

static void* nothing(void* a) { return a; }

int main(void) {
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, nothing, NULL), 0);
    CHECK_EQ(pthread_kill(t, 0), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(pthread_kill(t, 0), ESRCH);
    CHECK_EQ(pthread_kill(t, SIGUSR1), ESRCH);
    CHECKS_DONE("kill_joined");
}
