#include "core/outside.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "base/primitives.hpp"
#include "core/tunables.hpp"
#include "core/wait.hpp"

namespace weft::detail {

namespace {

// The registry of outside waits: a list under a spinlock, with a generation
// that every link and unlink advances.
spinlock registry_lock;
outside_wait* registry_head = nullptr;
atomic<std::uint64_t> registry_generation{0};

// Worker i's kernel thread id. Written by the worker itself; read by the
// detector only once every worker has parked (each has written it by then).
atomic<int> worker_tids[tun::max_workers];
// The runtime's own kernel threads that never wait in weft (the adaptive
// controller, the descriptor poller and the helpers of src/io): few, so a
// fixed table.
constexpr int max_service_threads = 64;
atomic<int> service_tids[max_service_threads] = {};
// Weft threads parked for a system call (src/io): the kernel, not a thread,
// will end each of these waits.
atomic<std::int64_t> kernel_waits{0};

// The state letter of /proc/self/task/<tid>/stat: after the parenthesised
// command name, which may itself contain spaces and parentheses.
char task_state(int tid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 'X';  // gone since the directory was listed
    char buf[512];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 'X';
    buf[n] = '\0';
    const char* paren = std::strrchr(buf, ')');
    return paren != nullptr && paren[1] == ' ' ? paren[2] : '?';
}

}  // namespace

int self_tid() {
    thread_local int tid = static_cast<int>(syscall(SYS_gettid));
    return tid;
}

void outside_wait_begin(outside_wait* w) {
    lock_guard<spinlock> g(registry_lock);
    w->prev = nullptr;
    w->next = registry_head;
    if (registry_head != nullptr) registry_head->prev = w;
    registry_head = w;
    registry_generation.fetch_add(1, memory_order_relaxed);
}

void outside_wait_end(outside_wait* w) {
    lock_guard<spinlock> g(registry_lock);
    if (w->prev != nullptr) w->prev->next = w->next;
    else registry_head = w->next;
    if (w->next != nullptr) w->next->prev = w->prev;
    registry_generation.fetch_add(1, memory_order_relaxed);
}

std::uint64_t outside_waits(std::vector<outside_wait_view>* out) {
    lock_guard<spinlock> g(registry_lock);
    for (const outside_wait* w = registry_head; w != nullptr; w = w->next)
        out->push_back({w->tid, w->what, w->object, w->timed, w->rec->futex.load(memory_order_acquire) == 0});
    return registry_generation.load(memory_order_relaxed);
}

std::uint64_t outside_generation() {
    lock_guard<spinlock> g(registry_lock);
    return registry_generation.load(memory_order_relaxed);
}

void note_worker_thread(int index) { worker_tids[index].store(self_tid(), memory_order_relaxed); }

void forget_worker_thread(int index) { worker_tids[index].store(0, memory_order_relaxed); }

int worker_thread(int index) { return worker_tids[index].load(memory_order_relaxed); }

void note_service_thread(bool gone) {
    int want = gone ? self_tid() : 0;
    int put = gone ? 0 : self_tid();
    for (auto& slot : service_tids) {
        int cur = want;
        if (slot.compare_exchange_strong(cur, put, memory_order_relaxed)) return;
    }
}

bool is_service_thread(int tid) {
    for (auto& slot : service_tids)
        if (slot.load(memory_order_relaxed) == tid) return true;
    return false;
}

void kernel_wait_begin() { kernel_waits.fetch_add(1, memory_order_relaxed); }
void kernel_wait_end() { kernel_waits.fetch_sub(1, memory_order_relaxed); }
bool kernel_waits_pending() { return kernel_waits.load(memory_order_relaxed) != 0; }

bool outside_threads(int nworkers, std::vector<int>* tids) {
    DIR* d = opendir("/proc/self/task");
    if (d == nullptr) return false;
    while (dirent* e = readdir(d)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        int tid = std::atoi(e->d_name);
        bool ours = is_service_thread(tid);
        for (int i = 0; i < nworkers && !ours; ++i) ours = worker_tids[i].load(memory_order_relaxed) == tid;
        if (ours) continue;
        char st = task_state(tid);
        if (st == 'Z' || st == 'X' || st == 'x') continue;  // exited (a zombie main thread, or reaped meanwhile)
        tids->push_back(tid);
    }
    closedir(d);
    return true;
}

}  // namespace weft::detail
