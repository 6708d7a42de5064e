// weft::detail::io — the kernel threads of the I/O layer (the descriptor
// poller, the helpers that make blocking calls for weft threads).
#pragma once

namespace weft::detail::io {

// Starts a detached kernel thread running body(arg) on a 64 KiB stack with
// every signal blocked (the program's signals go to its own threads, never to
// these). On failure prints "weft: cannot start <what>: <reason>" and aborts:
// without it a blocking call could never finish.
void start_kernel_thread(void* (*body)(void*), void* arg, const char* what);

}  // namespace weft::detail::io
