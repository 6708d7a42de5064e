// weft-bench — waiting for idle threads to stop spinning (settle.hpp).
#include "settle.hpp"

#include <sys/resource.h>
#include <time.h>

namespace weft::bench {

namespace {

// CPU time (user + system) of the whole process, in seconds.
double process_cpu_s() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

}  // namespace

void settle() {
    constexpr double window_s = 0.002;
    for (int i = 0; i < 100; ++i) {
        double const before = process_cpu_s();
        timespec const ts{0, static_cast<long>(window_s * 1e9)};
        nanosleep(&ts, nullptr);
        if (process_cpu_s() - before < 0.1 * window_s) return;
    }
}

}  // namespace weft::bench
