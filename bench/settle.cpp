// weft-bench — waiting for idle threads to stop spinning (settle.hpp).
#include "settle.hpp"

#include <time.h>

#include "harness/clock.hpp"

namespace weft::bench {

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
