// weft::detail::io — parking a weft thread until a descriptor is ready.
//
// One epoll instance for the process and one poller kernel thread blocked in
// epoll_wait (docs/design/syscalls.md). Per descriptor number an entry, never
// freed, holds for each direction a count of readiness reports and the queue
// of parked threads. A thread that would block queues itself and arms the
// descriptor's registration, one-shot and level-triggered, for what its
// entry's queued threads wait for (the kernel keeps the registration until
// the file is closed); the poller, for each report, counts it and wakes every
// thread queued for that direction, each of which retries its call, and arms
// the registration again for the threads still queued.
//
// No readiness is lost: the registration is armed after the thread is queued,
// and a level-triggered arm of a descriptor that is ready reports it at once.
// A caller also reads the count (ready_count) before it tries its call, and
// wait_ready does not park it when a report came since.
#pragma once

#include <cstdint>

#include "weft/weft.h"

namespace weft::detail::io {

enum direction : int {
    for_read = 0,
    for_write = 1
};

// The entry for fd's number, or null when fd is negative or beyond the table
// (then the caller hands its call to a helper thread: offload.hpp). With
// create = false, null also when no entry near fd has been made yet.
struct fd_entry;
fd_entry* entry_of(int fd, bool create = true);

std::uint64_t ready_count(fd_entry* e, direction d);

// The lock weft_accept holds from its readiness check to its accept, so that
// of the weft threads accepting on one socket only one acts on a readiness
// (the others would block their workers in accept).
weft_mutex_t* accept_lock(fd_entry* e);

// Starts the epoll instance and its poller on first use. Whether epoll can
// watch a descriptor is not asked here: wait_ready's registration fails with
// EPERM for a file epoll refuses, and the caller then hands its call to a
// helper thread (one system call fewer per wait than an fstat first).
void start_watching();

// Whether epoll refuses fd's file (a regular file, directory or block device:
// always "ready" to epoll, while a read may still wait for the disk).
bool epoll_refuses(int fd);

// Parks the calling weft thread until an edge for `d` is counted on e after
// `seen`, until the absolute CLOCK_MONOTONIC deadline (0: none; then
// ETIMEDOUT), until weft_close closes the descriptor (EBADF), or until a
// signal interrupts the wait (EINTR: interrupt.hpp); or an errno
// of epoll_ctl at once if fd cannot be watched (EPERM for a file epoll
// refuses), before any signal is looked at. 0 when the
// caller should try its call again. `what` names the call in a deadlock or
// hang report. The caller must be a weft thread.
int wait_ready(int fd, fd_entry* e, direction d, std::uint64_t seen, std::int64_t deadline_ns, const char* what);

// Wakes every thread parked on fd's entry with EBADF (weft_close, before the
// descriptor is closed).
void wake_closed(int fd);

// Whether a weft thread is parked on fd for d now: lets a test act on a
// descriptor only once its waiter has stopped using it (after the waiter's
// last use, through the entry's lock).
bool has_waiters(int fd, direction d);

}  // namespace weft::detail::io
