#include "io/fd_wait.hpp"
#include "core/interrupt.hpp"
#include "io/kernel_thread.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "base/primitives.hpp"
#include "core/outside.hpp"
#include "core/wait.hpp"
#include "sync/wait_list.hpp"
#include "weft/weft.h"

namespace weft::detail::io {

struct fd_entry {
    spinlock lock;
    atomic<std::uint64_t> edges[2] = {};  // ready edges counted, per direction
    void* head[2] = {};                   // parked threads, per direction (wait_list)
    void* tail[2] = {};
    weft_mutex_t accepting = WEFT_MUTEX_INITIALIZER;  // one weft thread at a time polls and accepts
};

namespace {

// fd -> entry: a two-level table whose chunks are allocated on first use and
// never freed, so an entry's address stays valid for the poller whatever the
// program does with the number.
constexpr int chunk_bits = 12;
constexpr int chunk_size = 1 << chunk_bits;
constexpr int max_chunks = 256;  // descriptors below 2^20
atomic<fd_entry*> chunks[max_chunks] = {};

int epoll_fd = -1;
atomic<bool> started{false};
spinlock start_lock;

// The queue's owner for wait_list: the entry and the direction in one word
// (entries are at least 8-byte aligned).
void* queue_of(fd_entry* e, direction d) { return reinterpret_cast<char*>(e) + d; }

void unlink_waiter(wait_record* rec) {
    auto q = reinterpret_cast<std::uintptr_t>(rec->queue);
    auto* e = reinterpret_cast<fd_entry*>(q & ~std::uintptr_t(7));
    int d = static_cast<int>(q & 7);
    wait_list(e->head[d], e->tail[d]).remove(rec);
}

// Takes every thread queued on e for d off the queue, with `result`, and
// wakes them, a batch at a time (wake outside the lock).
void wake_all(fd_entry* e, int d, int result, bool count_edge) {
    for (bool more = true; more;) {
        wait_record* batch[64];
        int n = 0;
        {
            lock_guard<spinlock> g(e->lock);
            if (count_edge) e->edges[d].fetch_add(1, memory_order_release);
            count_edge = false;
            wait_list q(e->head[d], e->tail[d]);
            while (n < 64 && !q.empty()) {
                wait_record* rec = q.pop_front();
                rec->result = result;
                batch[n++] = rec;
            }
            more = !q.empty();
        }
        for (int i = 0; i < n; ++i) wake(batch[i]);
    }
}

// In the child of a fork only the forking thread lives: no poller, and the
// epoll set is the parent's (shared). The child starts afresh on its first
// wait, with entries that hold no thread of the parent's (their copies in the
// child must never be woken) and no lock a vanished thread held.
void reset_in_child() {
    if (epoll_fd >= 0) close(epoll_fd);
    epoll_fd = -1;
    started.store(false, memory_order_relaxed);
    *start_lock.word() = 0;
    for (auto& slot : chunks) {
        fd_entry* c = slot.load(memory_order_relaxed);
        if (c == nullptr) continue;
        for (int i = 0; i < chunk_size; ++i) {
            *c[i].lock.word() = 0;
            c[i].head[0] = c[i].head[1] = c[i].tail[0] = c[i].tail[1] = nullptr;
            c[i].accepting = WEFT_MUTEX_INITIALIZER;
        }
    }
}

// The events the threads queued on e wait for (with e's lock held).
std::uint32_t wanted(fd_entry* e) {
    std::uint32_t ev = 0;
    if (e->head[for_read] != nullptr) ev |= EPOLLIN | EPOLLRDHUP | EPOLLPRI;
    if (e->head[for_write] != nullptr) ev |= EPOLLOUT;
    return ev;
}

// (Re)arms fd's one-shot, level-triggered registration for what its queued
// threads wait for, with e's lock held: a descriptor already ready is
// reported at once, so no readiness between a thread's try and its park is
// lost. 0 or the errno of epoll_ctl.
int arm(int fd, fd_entry* e) {
    epoll_event ev{};
    ev.events = wanted(e) | EPOLLONESHOT;
    ev.data.fd = fd;
    if (epoll_ctl(epoll_fd, EPOLL_CTL_MOD, fd, &ev) == 0) return 0;
    // Not in the set, or a new file under this number: the kernel keys the
    // set by file and number.
    if (errno == ENOENT && epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) == 0) return 0;
    return errno;
}

void* poller_main(void*) {
    note_service_thread(false);  // not a thread outside weft that could wake one (deadlock.cpp)
    epoll_event events[128];
    for (;;) {
        int n = epoll_wait(epoll_fd, events, 128, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            std::fprintf(stderr, "weft: the descriptor poller's epoll_wait failed: %s\n", std::strerror(errno));
            std::abort();
        }
        for (int i = 0; i < n; ++i) {
            fd_entry* e = entry_of(events[i].data.fd, false);
            if (e == nullptr) continue;
            std::uint32_t ev = events[i].events;
            // An error or hang-up ends waits in both directions: the retried
            // call reports it.
            if ((ev & (EPOLLIN | EPOLLPRI | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) wake_all(e, for_read, 0, true);
            if ((ev & (EPOLLOUT | EPOLLHUP | EPOLLERR)) != 0) wake_all(e, for_write, 0, true);
            // One-shot: threads still queued for the other direction need
            // the registration armed again.
            lock_guard<spinlock> g(e->lock);
            if (wanted(e) != 0) (void)arm(events[i].data.fd, e);
        }
    }
    return nullptr;
}

// The epoll instance and its poller, on first use. Its signals blocked: a
// signal for the process goes to a thread of the program.
void start_poller() {
    if (started.load(memory_order_acquire)) return;
    lock_guard<spinlock> g(start_lock);
    if (started.load(memory_order_relaxed)) return;
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd < 0) {
        std::fprintf(stderr, "weft: epoll_create1 for the descriptor poller failed: %s\n", std::strerror(errno));
        std::abort();
    }
    start_kernel_thread(&poller_main, nullptr, "the descriptor poller thread");
    static bool at_fork = false;  // under start_lock
    if (!at_fork) at_fork = pthread_atfork(nullptr, nullptr, &reset_in_child) == 0;
    started.store(true, memory_order_release);
}

}  // namespace

fd_entry* entry_of(int fd, bool create) {
    if (fd < 0 || fd >= chunk_size * max_chunks) return nullptr;
    atomic<fd_entry*>& slot = chunks[fd >> chunk_bits];
    fd_entry* c = slot.load(memory_order_acquire);
    if (c == nullptr) {
        if (!create) return nullptr;
        auto* fresh = new fd_entry[chunk_size];
        if (slot.compare_exchange_strong(c, fresh, memory_order_acq_rel))
            c = fresh;
        else
            delete[] fresh;  // another thread's chunk won
    }
    return &c[fd & (chunk_size - 1)];
}

weft_mutex_t* accept_lock(fd_entry* e) { return &e->accepting; }

std::uint64_t ready_count(fd_entry* e, direction d) { return e->edges[d].load(memory_order_acquire); }

void start_watching() { start_poller(); }

bool epoll_refuses(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) return false;
    return S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISBLK(st.st_mode);
}

int wait_ready(int fd, fd_entry* e, direction d, std::uint64_t seen, std::int64_t deadline_ns, const char* what) {
    wait_record rec;
    interruptible_wait intr;
    intr.enter(&rec, e->lock.word());
    spinlock_ref lk(*e->lock.word());
    lk.lock();
    if (e->edges[d].load(memory_order_relaxed) != seen) {
        lk.unlock();
        return 0;
    }
    wait_list q(e->head[d], e->tail[d]);
    q.push_back(&rec, queue_of(e, d), &unlink_waiter);
    // Arming first: a file epoll refuses goes to a helper thread whatever
    // signal is pending, as a disk read on a glibc thread is not interrupted.
    if (int err = arm(fd, e); err != 0) {
        q.remove(&rec);
        lk.unlock();
        return err;
    }
    if (intr.interrupted()) {
        q.remove(&rec);
        lk.unlock();
        return EINTR;
    }
    kernel_wait_begin();
    int rc = wait(&rec, e->lock.word(), deadline_ns, what, e);
    kernel_wait_end();
    return rc;
}

bool has_waiters(int fd, direction d) {
    fd_entry* e = entry_of(fd, false);
    if (e == nullptr) return false;
    spinlock_ref lk(*e->lock.word());
    lk.lock();
    bool const parked = e->head[d] != nullptr;
    lk.unlock();
    return parked;
}

void wake_closed(int fd) {
    fd_entry* e = entry_of(fd, false);
    if (e == nullptr) return;
    wake_all(e, for_read, EBADF, false);
    wake_all(e, for_write, EBADF, false);
}

}  // namespace weft::detail::io
