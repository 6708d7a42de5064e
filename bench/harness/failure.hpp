// weft-bench harness — failing loudly.
#pragma once

namespace weft::bench {

// Prints "weft-bench: WHAT failed: strerror(rc)" and exits with status 1 when
// rc != 0 (usable on any thread: it calls _exit after flushing stdio). Inline
// with the failure path out of line, since it wraps every timed call.
[[noreturn]] void check_failed(int rc, char const* what);
inline void check(int rc, char const* what) {
    if (__builtin_expect(rc != 0, 0)) check_failed(rc, what);
}
[[noreturn]] void die(char const* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace weft::bench
