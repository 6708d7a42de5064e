// A catch (...) that ends without rethrowing the unwinding of pthread_exit
// ends the process under the shim with a message, as glibc's "FATAL: exception
// not rethrown" does; the thread never goes on past it. Not compared with
// glibc's run: the message differs (the test checks the shim's).
#include <pthread.h>

#include <cstdio>

namespace {

void* swallow(void*) {
    try {
        pthread_exit(nullptr);
    } catch (...) {
        std::fputs("caught\n", stderr);
    }
    std::fputs("unwind_swallowed: the thread went on after its pthread_exit\n", stderr);
    return nullptr;
}

}  // namespace

int main() {
    pthread_t t;
    if (pthread_create(&t, nullptr, swallow, nullptr) != 0) return 1;
    pthread_join(t, nullptr);
    std::puts("unwind_swallowed: the process went on");
    return 0;
}
