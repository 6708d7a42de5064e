// libweft-pthread's shared pieces: whether the runtime is up, errno kept per
// weft thread, refusals, and deadlines on another clock.
#pragma once

#include <weft/weft.h>

#include <atomic>
#include <cerrno>
#include <ctime>

#include "shim/real.hpp"

namespace weft::detail {
struct ult;
}

namespace weft::shim {

// 0 until the shim's constructor has started weft's runtime (start.cpp). Calls
// that arrive before (the C and C++ libraries' own start-up, run before the
// shim's constructor) go to the C library: its objects and weft's agree on the
// all-zero "unlocked / not run" state, which is all such early calls leave.
extern std::atomic<int> g_ready;
// The process's first kernel thread (glibc's pthread_t), on whose stack the
// main weft thread runs: set before g_ready.
extern pthread_t g_initial_kernel_thread;
inline bool ready() { return g_ready.load(std::memory_order_acquire) != 0; }
// The process that started the runtime (a child of fork() has another pid).
extern pid_t g_runtime_pid;

// The calling weft thread, or null (a kernel thread outside weft, or before
// the runtime is up).
detail::ult* self_ult();

// A call that may switch to another weft thread keeps the caller's errno: the
// thread may come back on another worker (another kernel thread, another
// errno), or other threads may have run on its own meanwhile. The errno a weft
// thread sees is therefore the one its own calls set, as under glibc.
class errno_keeper {
public:
    errno_keeper() : saved_(errno) {}
    ~errno_keeper() { errno = saved_; }
    errno_keeper(const errno_keeper&) = delete;
    errno_keeper& operator=(const errno_keeper&) = delete;

private:
    int saved_;
};

// Prints, once per function, that `fn` is not available under the shim and
// why (docs/shim.md lists them), and returns `err`.
int refuse(const char* fn, const char* why, int err);

// The deadline `abstime` on clock `from`, as an absolute time on clock `to`
// (CLOCK_REALTIME or CLOCK_MONOTONIC): `to`'s now plus what is left on `from`.
// Errors: EINVAL `from` is neither clock or abstime is not a valid timespec.
int convert_deadline(clockid_t from, const struct timespec* abstime, clockid_t to, struct timespec* out);

// pthread_exit on a weft thread: unwinds its stack as glibc does (C++
// destructors of every frame, the cleanup handlers still pushed with
// pthread_cleanup_push, innermost first), then ends the thread (cancel.cpp).
[[noreturn]] void exit_running_cleanup(void* retval);

// A cancellation point (POSIX: join, condition waits, sem_wait, the sleeps),
// declared first in the shim function that is one: on a weft thread with a
// cancellation pending and enabled, its constructor acts on it (the thread
// runs its cleanup handlers and ends with PTHREAD_CANCELED), and so does its
// destructor, after the call (a condition wait has relocked its mutex by
// then). In between, a pthread_cancel takes the thread out of its wait
// (cancel.cpp, core/wait.hpp cancel_wait).
class cancel_point {
public:
    cancel_point();
    // Acting on a cancellation unwinds the stack through this destructor.
    ~cancel_point() noexcept(false);
    cancel_point(const cancel_point&) = delete;
    cancel_point& operator=(const cancel_point&) = delete;

private:
    void* self_;  // the weft thread (detail::ult), or null
};

// Converts a weft error code to the sem_*/nanosleep convention: -1 and errno.
inline int errno_result(int rc) {
    if (rc == 0) return 0;
    errno = rc;
    return -1;
}

}  // namespace weft::shim
