#include "io/offload.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/primitives.hpp"
#include "core/futex.hpp"
#include "core/outside.hpp"
#include "core/tunables.hpp"
#include "core/wait.hpp"
#include "io/kernel_thread.hpp"
#include "io/thread_errno.hpp"

namespace weft::detail::io {

namespace {

// The queue of calls no helper has taken yet, and the helpers. A spinlock
// and a futex, not std::mutex and std::condition_variable: under
// libweft-pthread the latter's out-of-line members reach the shim, which
// would make a helper wait as a weft thread. Leaked on purpose: helpers
// outlive the runtime and may still be blocked in a call at exit.
struct helper_pool {
    spinlock lock;
    offload_job* head = nullptr;  // guarded by lock
    offload_job* tail = nullptr;
    int idle = 0;      // helpers asleep on `rounds`
    int promised = 0;  // calls queued for idle helpers, not yet taken up (<= idle)
    int threads = 0;
    atomic<std::uint32_t> rounds{0};  // futex: bumped (under lock) to wake an idle helper
};

helper_pool* g_pool = nullptr;
spinlock g_pool_lock;

// The child of a fork has no helpers, and the parent's queue holds calls of
// the parent's threads: a new, empty pool (the old one's lock may be held by
// a thread that did not survive the fork).
void new_pool_in_child() { g_pool = new helper_pool; }

helper_pool& pool() {
    lock_guard<spinlock> g(g_pool_lock);
    if (g_pool == nullptr) {
        g_pool = new helper_pool;
        pthread_atfork(nullptr, nullptr, &new_pool_in_child);
    }
    return *g_pool;
}

// An idle helper sleeps until a call is promised to it (`promised`, one per
// call queued while helpers were idle); a wake-up with nothing promised
// (another helper's) sleeps again.
void wait_for_job(helper_pool& p) {
    std::uint32_t seen;
    {
        lock_guard<spinlock> g(p.lock);
        if (p.head != nullptr) return;
        ++p.idle;
        seen = p.rounds.load(memory_order_relaxed);
    }
    for (;;) {
        futex_wait(&p.rounds, seen);
        lock_guard<spinlock> g(p.lock);
        if (p.promised > 0) {
            --p.promised;
            --p.idle;
            return;
        }
        seen = p.rounds.load(memory_order_relaxed);
    }
}

void* helper_main(void* arg) {
    note_service_thread(false);  // not a thread outside weft that could wake one (deadlock.cpp)
    helper_pool& p = *static_cast<helper_pool*>(arg);
    for (;;) {
        offload_job* job = nullptr;
        {
            lock_guard<spinlock> g(p.lock);
            job = p.head;
            if (job != nullptr) {
                p.head = job->next;
                if (p.head == nullptr) p.tail = nullptr;
            }
        }
        if (job == nullptr) {
            wait_for_job(p);
            continue;
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

void start_helper(helper_pool* p) {
    start_kernel_thread(&helper_main, p, "a helper thread for a blocking system call");
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
    bool rouse = false;
    {
        lock_guard<spinlock> g(p.lock);
        job->next = nullptr;
        if (p.tail != nullptr)
            p.tail->next = job;
        else
            p.head = job;
        p.tail = job;
        if (p.idle > p.promised) {
            ++p.promised;
            p.rounds.fetch_add(1, memory_order_release);
            rouse = true;
        } else if (p.threads < tun::io_helpers_max) {
            ++p.threads;
            spawn = true;
        }
    }
    if (spawn)
        start_helper(&p);
    else if (rouse)
        futex_wake(&p.rounds);
    kernel_wait_begin();
    (void)wait(&rec, &job->lock, 0, what, job);
    kernel_wait_end();
    if (job->result < 0) set_thread_errno(job->error);
}

}  // namespace weft::detail::io
