#include "io/offload.hpp"

#include <pthread.h>
#include <signal.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/outside.hpp"
#include "core/tunables.hpp"
#include "core/wait.hpp"
#include "io/thread_errno.hpp"
#include "sync/primitives.hpp"

namespace weft::detail::io {

namespace {

// The queue of calls no helper has taken yet, and the helpers. Leaked on
// purpose: helpers outlive the runtime and may still be blocked in a call at
// exit.
struct helper_pool {
    std::mutex m;
    std::condition_variable cv;
    offload_job* head = nullptr;
    offload_job* tail = nullptr;
    int idle = 0;
    int threads = 0;
};

helper_pool& pool() {
    static auto* p = new helper_pool;
    return *p;
}

void* helper_main(void*) {
    note_service_thread(false);  // not a thread outside weft that could wake one (deadlock.cpp)
    helper_pool& p = pool();
    for (;;) {
        offload_job* job;
        {
            std::unique_lock<std::mutex> g(p.m);
            ++p.idle;
            p.cv.wait(g, [&] { return p.head != nullptr; });
            --p.idle;
            job = p.head;
            p.head = job->next;
            if (p.head == nullptr) p.tail = nullptr;
        }
        errno = 0;
        long r = job->fn(job->arg);
        job->error = errno;
        // Read the record first: after wake the caller may return, and the
        // job (in its frame) is gone.
        wait_record* rec = job->rec;
        job->result = r;
        // The caller releases the lock only once it is suspended: taking it
        // here keeps the wake from resuming a thread still running.
        spinlock_ref lk(job->lock);
        lk.lock();
        lk.unlock();
        wake(rec);
    }
    return nullptr;
}

void start_helper() {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_t t;
    int rc = pthread_create(&t, &attr, &helper_main, nullptr);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (rc != 0) {
        std::fprintf(stderr, "weft: cannot start a helper thread for a blocking system call: %s\n", std::strerror(rc));
        std::abort();
    }
}

}  // namespace

int thread_errno() { return errno; }
void set_thread_errno(int e) { errno = e; }

void run_offloaded(offload_job* job, const char* what) {
    wait_record rec;
    helper_pool& p = pool();
    bool spawn = false;
    job->rec = &rec;
    spinlock_ref(job->lock).lock();
    {
        std::lock_guard<std::mutex> g(p.m);
        job->next = nullptr;
        if (p.tail != nullptr) p.tail->next = job;
        else p.head = job;
        p.tail = job;
        if (p.idle == 0 && p.threads < tun::io_helpers_max) {
            ++p.threads;
            spawn = true;
        }
    }
    if (spawn) start_helper();
    else p.cv.notify_one();
    kernel_wait_begin();
    (void)wait(&rec, &job->lock, 0, what, job);
    kernel_wait_end();
    if (job->result < 0) set_thread_errno(job->error);
}

}  // namespace weft::detail::io
