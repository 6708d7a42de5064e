// weft-bench harness — failing loudly (harness/failure.hpp).
#include "harness/failure.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include <unistd.h>

namespace weft::bench {

void check_failed(int rc, char const* what) { die("%s failed: %s (error %d)", what, std::strerror(rc), rc); }

void die(char const* format, ...) {
    std::fflush(stdout);
    std::fprintf(stderr, "weft-bench: ");
    va_list ap;
    va_start(ap, format);
    std::vfprintf(stderr, format, ap);
    va_end(ap);
    std::fputc('\n', stderr);
    std::fflush(stderr);
    _exit(1);
}

}  // namespace weft::bench
