// weft-bench harness — timing: the monotonic clock, a busy loop, keep() (harness/clock.hpp).
#include "harness/clock.hpp"

#include <chrono>
#include <ctime>

namespace weft::bench {

std::uint64_t now_ns() noexcept {
    using namespace std::chrono;
    return static_cast<std::uint64_t>(duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count());
}

std::uint64_t process_cpu_ns() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return std::uint64_t(ts.tv_sec) * 1000000000u + std::uint64_t(ts.tv_nsec);
}

double process_cpu_s() noexcept { return double(process_cpu_ns()) * 1e-9; }

void busy_for_ns(std::uint64_t ns) noexcept {
    std::uint64_t const end = now_ns() + ns;
    while (now_ns() < end) {
    }
}

}  // namespace weft::bench
