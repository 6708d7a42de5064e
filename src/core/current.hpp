// weft::detail — the worker the calling kernel thread is, and the ult it runs.
//
// Not inlined on purpose: a ult may migrate between workers across any blocking
// call, so no caller may keep a cached TLS address across one.
#pragma once

namespace weft::detail {

struct worker;
struct ult;

// The worker the calling kernel thread is, or null for an external thread.
worker* current_worker();
// The calling ult, or null on an external kernel thread.
ult* current_ult();
// Makes w the calling kernel thread's worker (null: it is none any more).
void set_current_worker(worker* w);
// Writes w as the current worker into the thread-local storage the thread
// pointer reaches now: after a switch of thread pointer (core/thread_pointer.hpp)
// the worker's own copy is out of reach, and the block made current must say
// which worker runs it.
void note_current_worker_in_block(worker* w);

}  // namespace weft::detail
