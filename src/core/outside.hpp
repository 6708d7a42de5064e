// weft::detail — kernel threads outside weft: how they own locks, which of
// them wait in a weft primitive, and which are alive.
//
// The deadlock detector (deadlock.cpp) must not mistake a program that waits
// for a kernel thread outside weft for a deadlock. Such a thread may call weft
// at any time (posting a semaphore it was handed long before its first weft
// call), so "outside threads that have called weft" is not enough: the
// detector counts every kernel thread of the process (/proc/self/task) and
// takes out weft's own workers. What it can also know is which outside
// threads are blocked in a weft primitive: wait.cpp links a record for each
// into one registry for as long as the wait lasts. Only the slow path of an
// outside thread's wait pays for it (a spinlock and four stores next to a
// futex system call).
#pragma once

#include <cstdint>
#include <vector>

namespace weft::detail {

struct wait_record;

// The calling kernel thread's id (gettid), cached per thread.
int self_tid();

// The lock-owner identity of a kernel thread outside weft (owner_self(),
// weft_mutex_t::owner_, weft_rwlock_t::writer_): its tid shifted left with bit
// 0 set, which no ult address has (control blocks are 64-byte aligned). The
// tid is what a report can name, and it stays meaningful after the thread has
// exited, unlike the address of its thread-local storage.
inline void* outside_owner_id(int tid) { return reinterpret_cast<void*>((std::uintptr_t(unsigned(tid)) << 1) | 1); }
inline bool is_outside_owner(const void* id) { return (reinterpret_cast<std::uintptr_t>(id) & 1) != 0; }
inline int outside_owner_tid(const void* id) { return static_cast<int>(reinterpret_cast<std::uintptr_t>(id) >> 1); }

// One kernel thread outside weft blocked in a weft primitive.
struct outside_wait {
    int tid = 0;
    const char* what = nullptr;      // the primitive, as in the deadlock report ("weft_sem_wait")
    const void* object = nullptr;    // the primitive waited on (for a join, the ult joined)
    bool timed = false;              // a deadline will end the wait
    const wait_record* rec = nullptr;
    outside_wait* prev = nullptr;
    outside_wait* next = nullptr;
};

// Links w into the registry (begin) and takes it out (end). Both change the
// registry's generation.
void outside_wait_begin(outside_wait* w);
void outside_wait_end(outside_wait* w);

// A copy of the registry's entries, with blocked = false for a wait whose
// waker has already set its futex word (the thread is on its way out); and
// the generation it was taken at.
struct outside_wait_view {
    int tid;
    const char* what;
    const void* object;
    bool timed;
    bool blocked;
};
std::uint64_t outside_waits(std::vector<outside_wait_view>* out);
std::uint64_t outside_generation();

// Records the calling kernel thread as worker `index` (weft_init for worker
// 0, the other workers when they start).
void note_worker_thread(int index);
// Forgets it when its kernel thread ends, so that a later runtime's probe
// never reads a dead (or recycled) thread id for that worker.
void forget_worker_thread(int index);
// The kernel thread id of worker `index` (0 until it has started, and again
// once it has ended).
int worker_thread(int index);
// Records the calling kernel thread as one of the runtime's own service
// threads, which never wait in weft (the adaptive controller, src/adapt; the
// poller and helper threads of src/io), or forgets it (gone = true): it is
// then not counted as outside. At most 64 are recorded; one more is counted
// as outside (the detector then only warns, never aborts).
void note_service_thread(bool gone);

// A weft thread parked for a system call (src/io) counts here while it waits:
// the kernel ends such a wait, so while any lasts all workers asleep is no
// deadlock (worker.cpp does not ask the detector).
void kernel_wait_begin();
void kernel_wait_end();
bool kernel_waits_pending();

// The kernel threads of this process that are alive (not zombies) and are not
// one of the first `nworkers` workers; false if /proc/self/task cannot be read.
bool outside_threads(int nworkers, std::vector<int>* tids);

}  // namespace weft::detail
