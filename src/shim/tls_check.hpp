#pragma once

namespace weft::shim {

// Says on stderr, once at start-up, which loaded modules have thread-local
// storage (__thread / thread_local) that weft threads would share: weft
// threads run on a few worker kernel threads, and such storage belongs to the
// kernel thread (docs/design/shim.md, "Thread-local storage and errno").
// The C library's own (errno is kept per weft thread by the shim), the C++
// runtime's and the shim's are not reported.
void report_shared_tls();

}  // namespace weft::shim
