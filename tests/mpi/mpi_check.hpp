// What the programs of tests/mpi share: this rank and the job's size, checks
// that end the whole job at once (a failed rank must not leave the others
// waiting for it until ctest's timeout), and a barrier of the program's own
// MPI that blocks only the calling weft thread.
#pragma once

#include <mpi.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "weft/weft.h"

inline int g_rank = 0;
inline int g_size = 1;

// Run first by fail(), if set: a program that redirected stderr puts it back.
inline void (*g_before_fail)() = nullptr;

// Prints the failure and aborts the MPI job (or, outside MPI, this process).
[[noreturn]] inline void fail(int line, const char* fmt, ...) {
    if (g_before_fail != nullptr) g_before_fail();
    va_list ap;
    va_start(ap, fmt);
    std::fprintf(stderr, "FAIL rank %d, line %d: ", g_rank, line);
    std::vfprintf(stderr, fmt, ap);
    std::fprintf(stderr, "\n");
    va_end(ap);
    std::fflush(stderr);
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (inited && !finalized) MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
}

#define CHECK(cond, ...)                                          \
    do {                                                          \
        if (!(cond)) fail(__LINE__, "(" #cond ") " __VA_ARGS__); \
    } while (0)
#define CHECK_RC(expr, want)                                                                                      \
    do {                                                                                                          \
        int rc_ = (expr);                                                                                         \
        if (rc_ != (want)) fail(__LINE__, "%s returned %d (%s), expected %d", #expr, rc_, std::strerror(rc_), (want)); \
    } while (0)

// Starts weft and its mpi job with NET_MPI_TEST_WORKERS workers per rank
// (default 1; more run the progress step beside the waiters on other kernel
// threads: for TSan); weft_net_init must return net_rc. Returns the worker
// count.
inline int start_weft_mpi(int net_rc = 0) {
    const char* workers = std::getenv("NET_MPI_TEST_WORKERS");
    weft_config_t wc{};
    wc.workers = workers != nullptr ? std::atoi(workers) : 1;
    CHECK_RC(weft_init(&wc), 0);
    weft_net_config_t cfg{};
    cfg.transport = "mpi";
    CHECK_RC(weft_net_init(&cfg), net_rc);
    return wc.workers;
}

// A barrier of the program's own MPI that blocks only this thread: a blocking
// MPI call would hold this rank's worker, and with it the progress that other
// ranks' senders wait for (docs/design/mpi.md, "The program's own MPI calls").
inline void sync_ranks() {
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    int done = 0;
    while (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) weft_thread_yield();
}
