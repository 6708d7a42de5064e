// weft::detail — work, span and the trace: what the runtime measures about a run
// when asked to (WEFT_STATS=1, weft_config_t.measure, WEFT_TRACE=file).
//
// Work and span, Cilkview-style (Arora, Blumofe & Plaxton: T1 and T-inf; Narlikar & Blelloch §5).
// Every ult carries `path`: the length of the longest chain of dependent work
// that ends where the ult now is, counting only time spent running. A worker
// times each strand (the run of a ult between two switches, or between a
// switch and a fork/join point) and adds it both to its own work total and to
// the ult's path. Along fork/join edges:
//   fork:  child.path = parent.path          (the child starts after the fork)
//   join:  parent.path = max(parent.path, child.path at exit)
// T1 (work) is the sum of all strands; T-inf (span) the longest path: main's,
// or that of a thread nobody joined, whichever is longer. Only fork/join edges
// are dependencies: a mutex or a semaphore orders threads at run time but is
// not part of the program's dag (Cilkview makes the same choice).
//
// Cost: one timestamp (rdtsc on x86-64, cntvct on AArch64) per switch, fork
// and join, and nothing at all when measurement is off (one predictable
// branch on a global flag).
#pragma once

#include <cstdint>
#include <cstdio>

#include "base/primitives.hpp"

namespace weft::detail {

struct worker;
struct ult;
struct runtime;

// One slice of the trace: a ult ran on a worker from start to end (ticks).
struct trace_event {
    std::uint64_t start;
    std::uint64_t end;
    std::uint64_t id;
    char name[16];
};
// A worker's slices. Only the worker appends; count is published with release
// so the writer (at finalize or exit) reads only complete events.
struct trace_buffer {
    trace_event* events = nullptr;  // mapped lazily, fixed capacity
    atomic<std::size_t> count{0};
    atomic<std::uint64_t> dropped{0};
};
trace_buffer* trace_buffer_create();
void trace_buffer_destroy(trace_buffer* b);

// Measurement switches, set once by weft_init before any worker runs.
extern bool g_measure;   // work and span
extern bool g_tracing;   // per-worker trace events (implies g_measure)

// Raw ticks of the cheapest monotonic counter, and their conversion to ns.
std::uint64_t ticks();
std::uint64_t ticks_to_ns(std::uint64_t t);
void calibrate_ticks();

// The profiler's clock: what a strand's length is measured in. By default the
// tick counter above (wall-clock time). With the logical clock installed, each
// kernel thread has a counter that only profile_logical_advance moves, so a
// strand's length is the number of units that the code it ran declared, and
// work and span (profile_work_ns, profile_span_ns, hence weft_stats_t's
// work_ns and span_ns) come out in those units, unconverted. That makes the
// profiler's fork/join arithmetic testable exactly, whatever the machine's
// load does to the wall clock (tests/whitebox/profile_test.cpp); how close the
// wall-clock figures come to the truth is a benchmark's question, not a test's.
// Internal, for tests: install it before weft_init, remove it after
// weft_finalize; the trace's timestamps are then units too.
void profile_use_logical_clock(bool on);
void profile_logical_advance(std::uint64_t units);
// The profiler's clock now, on the calling kernel thread.
std::uint64_t profile_now();

// Called by switch_to when measuring: closes `from`'s strand, opens `to`'s.
void profile_switch(worker* w, ult* from, ult* to);
// Closes the running ult's strand at a fork or join point and opens a new one.
void profile_checkpoint(worker* w);
// Fork edge (parent is running on w, or w is null for an external creator).
void profile_fork(worker* w, ult* child);
// Join edge: self has joined child.
void profile_join(worker* w, ult* self, const ult* child);
// A ult ended with its final path (post-switch on w).
void profile_exit(worker* w, const ult* u);

// Totals for weft_stats_get (ns).
std::uint64_t profile_work_ns(runtime* rt);
std::uint64_t profile_span_ns(runtime* rt);
void profile_reset(runtime* rt);

// The trace (WEFT_TRACE=file): Chrome trace-event JSON, one track per worker,
// a slice per run of a thread. Perfetto (ui.perfetto.dev) and chrome://tracing
// open it. trace_open returns 0 or the errno of fopen; trace_write_and_close
// prints a warning naming the file and the error if any write failed.
int trace_open(const char* path);
void trace_write_and_close(runtime* rt);

}  // namespace weft::detail
