// weft::detail::io — the handoff: a call with no readiness to wait for
// (waitpid, connect, a read of a regular file that misses the page cache) is
// made by a helper kernel thread while the calling weft thread is parked; its
// worker runs its other threads meanwhile (docs/design/syscalls.md).
//
// Helpers are started on demand, one per call waiting at once, up to
// tun::io_helpers_max; beyond, calls queue for the next free helper. An idle
// helper blocks on a condition variable and is kept for the next call. A
// helper blocks every signal: a signal for the process goes to a thread of
// the program.
#pragma once

#include <cstdint>

namespace weft::detail {
struct wait_record;
}

namespace weft::detail::io {

struct offload_job {
    long (*fn)(void* arg) = nullptr;
    void* arg = nullptr;
    long result = 0;
    int error = 0;                // errno after fn, when result < 0
    offload_job* next = nullptr;  // the queue of jobs no helper has taken
    wait_record* rec = nullptr;   // the parked caller's
    std::uint32_t lock = 0;       // held by the caller until it is suspended
};

// Runs job->fn(job->arg) on a helper thread, the caller parked meanwhile, and
// sets the caller's errno to the call's when it failed; `what` names the call
// in a hang report. The caller must be a weft thread.
void run_offloaded(offload_job* job, const char* what);

// Runs f() on a helper thread, the calling weft thread parked meanwhile.
// Returns f's result with errno as f left it (thread_errno.hpp).
template <class F>
auto offload(const char* what, F f) -> decltype(f()) {
    using R = decltype(f());
    offload_job job;
    job.fn = [](void* p) -> long { return static_cast<long>((*static_cast<F*>(p))()); };
    job.arg = &f;
    run_offloaded(&job, what);
    return static_cast<R>(job.result);
}

}  // namespace weft::detail::io
