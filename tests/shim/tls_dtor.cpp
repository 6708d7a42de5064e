// C++ thread_local objects with destructors are each thread's own and are
// destroyed when their thread ends (by return or by pthread_exit), before its
// join returns, with the thread's own values, as on glibc's threads.
#include <pthread.h>
#include <sched.h>

#include <atomic>

#include "check.h"

namespace {

constexpr int threads = 24;
std::atomic<int> destroyed{0};
long seen_at_destruction[threads];

struct tracked {
    long id = -1;
    long uses = 0;
    ~tracked() {
        if (id >= 0 && id < threads) seen_at_destruction[id] = uses;
        destroyed.fetch_add(1);
    }
};

thread_local tracked mine;

void* use(void* a) {
    long id = reinterpret_cast<long>(a);
    mine.id = id;
    for (int i = 0; i <= id; ++i) {
        ++mine.uses;
        sched_yield();  // the others touch theirs meanwhile
    }
    if (id % 2 == 1) pthread_exit(nullptr);  // destructors run on pthread_exit too
    return nullptr;
}

}  // namespace

int main() {
    pthread_t ts[threads];
    for (long i = 0; i < threads; ++i) CHECK_EQ(pthread_create(&ts[i], nullptr, use, reinterpret_cast<void*>(i)), 0);
    for (int i = 0; i < threads; ++i) CHECK_EQ(pthread_join(ts[i], nullptr), 0);
    CHECK_EQ(destroyed.load(), threads);
    for (long i = 0; i < threads; ++i) CHECK_EQ(seen_at_destruction[i], i + 1);
    CHECK_EQ(mine.uses, 0);  // main's own, untouched
    CHECKS_DONE("tls_dtor");
}
