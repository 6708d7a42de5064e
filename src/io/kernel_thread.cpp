#include "io/kernel_thread.hpp"

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace weft::detail::io {

void start_kernel_thread(void* (*body)(void*), void* arg, const char* what) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_t t;
    int rc = pthread_create(&t, &attr, body, arg);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (rc != 0) {
        std::fprintf(stderr, "weft: cannot start %s: %s\n", what, std::strerror(rc));
        std::abort();
    }
}

}  // namespace weft::detail::io
