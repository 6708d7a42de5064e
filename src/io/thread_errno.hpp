// weft::detail::io — errno of the kernel thread the caller runs on *now*.
//
// glibc declares __errno_location const, so the compiler may compute errno's
// address once per function and keep it across a call. A weft thread that
// parks in the middle of a system call wrapper may resume on another worker
// (another kernel thread, another errno): every errno access after a park
// goes through these out-of-line functions, which take the address afresh.
#pragma once

namespace weft::detail::io {

[[gnu::noinline]] int thread_errno();
[[gnu::noinline]] void set_thread_errno(int e);

}  // namespace weft::detail::io
