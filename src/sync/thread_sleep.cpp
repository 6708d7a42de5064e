// weft_sleep_ns and weft_nanosleep: a weft thread's sleep, a timed wait that nothing
// but its timer ends (the thread blocks, not its worker; the workers' own
// sleep is core/sleep/).
#include <time.h>

#include <cerrno>

#include "core/clock.hpp"
#include "core/runtime.hpp"
#include "sync/wait_list.hpp"

using namespace weft::detail;

extern "C" {

WEFT_API int weft_sleep_ns(uint64_t ns) {
    worker* w = ensure_runtime();
    if (w == nullptr) {
        timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
        return 0;
    }
    if (ns == 0) {
        weft_thread_yield();
        return 0;
    }
    std::uint32_t lock = 0;
    spinlock_ref(lock).lock();
    wait_record rec;
    rec.linked = true;
    rec.unlink = [](wait_record*) {};
    std::int64_t deadline = monotonic_ns() + static_cast<std::int64_t>(ns > INT64_MAX / 4 ? INT64_MAX / 4 : ns);
    wait(&rec, &lock, deadline, "weft_sleep", nullptr);
    return 0;
}

WEFT_API int weft_nanosleep(const struct timespec* req, struct timespec* rem) {
    if (req == nullptr || !timespec_valid(*req)) return EINVAL;
    if (rem != nullptr) *rem = timespec{0, 0};
    return weft_sleep_ns(static_cast<uint64_t>(ns_of(*req)));
}

}  // extern "C"
