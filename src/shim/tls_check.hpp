#pragma once

namespace weft::shim {

// When weft threads have no TLS blocks of their own (tls_block.hpp: the
// C library is not the one they are built for, or WEFT_SHIM_TLS=off), says on
// stderr, once, at the program's first pthread_create (a program that
// never makes a second thread shares nothing, and a shell script's every
// process would otherwise print it), which loaded modules have thread-local
// storage (__thread / thread_local) that weft threads would share, and why:
// weft threads then run with their worker's storage (docs/design/shim.md,
// "Thread-local storage and errno").
// The C library's own, the C++ runtime's and the shim's are not reported; for
// errno, kept per weft thread by the shim's calls, it says when several
// workers make a cached errno address unsafe.
void report_shared_tls_once();

}  // namespace weft::shim
