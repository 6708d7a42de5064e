// Thread-local storage per weft thread under the shim: each thread the shim
// creates runs with a TLS block of its own, made by the C library's dynamic
// loader, with the thread pointer switched at every switch (core/thread_pointer.hpp).
// docs/design/shim.md, "Thread-local storage and errno".
#pragma once

namespace weft::shim {

// At the shim's start (start.cpp), on main, after weft_init: main keeps the
// process's initial block as its own; worker 0's own flows get a new one.
// Does nothing if WEFT_SHIM_TLS=off or the C library is not one this was
// built for (tls_blocks_unavailable() then says why).
void start_tls_blocks();

// Null when threads get their own blocks, else why not (for the warning of
// tls_check.cpp).
const char* tls_blocks_unavailable();

// For pthread_create: replaces (fn, arg) by a start routine that sets up a
// block and then runs fn(arg), and sets *tp to the block, the thread pointer
// to create the thread with (detail::create_with_thread_pointer). 0, or
// EAGAIN when the block cannot be allocated. Without blocks, leaves (fn, arg)
// as they are and sets *tp to null.
int give_tls_block(void* (**fn)(void*), void** arg, void** tp);

// Whether `fn` is the start routine give_tls_block puts in front of the
// program's: the outermost frame of a thread's own code that pthread_exit's
// unwinding passes (cancel.cpp).
bool is_block_start(const void* fn);

// Frees the block of a start routine give_tls_block made that never ran
// (the thread could not be created).
void drop_tls_block(void* (*fn)(void*), void* arg);

// Runs the calling thread's C++ thread_local destructors if it has a block of
// its own from give_tls_block (pthread_exit, before weft_thread_exit), as
// glibc's threads run them first at their exit.
void run_thread_local_destructors();

}  // namespace weft::shim
