// weft::detail — ults with thread-local storage of their own (ult::tp).
//
// A ult's tp, when set, is the thread pointer its code runs with, on whatever
// worker; a ult without one runs with its worker's (worker::kernel_tp). The
// core only switches the register (dispatch.hpp) and calls the owner's exit
// hook; a ult is created with its own block by create_with_thread_pointer
// (core/thread_api.hpp). What the block holds is its owner's business (libweft-pthread:
// src/shim/tls_block.cpp, docs/design/shim.md, "Thread-local storage and errno").
//
// weft's own thread_local variables follow the thread pointer too: while a ult
// with its own block runs, they are that block's copies. The only one the
// runtime needs per worker, the current worker (current_worker()), is written
// into the block at every switch to it; the others are per kernel thread for
// statistics only, or are not used on a ult.
#pragma once

namespace weft::detail {

struct worker;
struct ult;

// At a switch on w to `to` where `to` or the ult switched from has a thread
// pointer of its own: makes to's (or w's, for a ult without one) the kernel
// thread's, and records w as the current worker in the storage it reaches.
void switch_thread_pointer(worker* w, ult* to);

// Gives the running ult `tp` as its own thread pointer from now on, or, with
// null, its worker's again.
void set_own_thread_pointer(void* tp);

// Makes `tp` the thread pointer of the ults of w that have none of their own
// (its idle ult among them). On w's kernel thread, while it runs a ult that
// has its own.
void set_worker_thread_pointer(worker* w, void* tp);

// Called on a ult with its own thread pointer when it ends, after its key
// destructors, before its last switch, which installs the next ult's thread
// pointer: until that switch is done the ult still runs on its block, so the
// hook may not let another worker reuse it before then. Set once, before any
// ult has its own thread pointer.
extern void (*g_own_tp_exit)(ult*);

}  // namespace weft::detail
