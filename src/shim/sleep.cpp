// sched_yield and the sleeps: on a weft thread they block (or yield) only that
// thread, through weft_thread_yield and weft_sleep_ns; on a kernel thread that
// is not a weft thread they are the C library's.
#include <sched.h>

#include <cerrno>
#include <cstdint>

#include "core/clock.hpp"
#include "shim/shim.hpp"
#include "shim/signals.hpp"

using namespace weft::shim;

namespace {

bool on_weft_thread() { return ready() && weft_thread_self() != WEFT_THREAD_NULL; }

bool valid(const struct timespec* t) { return t != nullptr && weft::detail::timespec_valid(*t); }

std::uint64_t ns_of(const struct timespec* t) { return static_cast<std::uint64_t>(weft::detail::ns_of(*t)); }

}  // namespace

extern "C" {

int sched_yield(void) {
    if (!on_weft_thread()) return real::sched_yield();
    {
        errno_keeper keep;
        (void)weft_thread_yield();
    }
    deliver_pending_signals(self_ult());  // a delivery point (signals.cpp)
    return 0;
}

int nanosleep(const struct timespec* req, struct timespec* rem) {
    cancel_point cp;
    if (!on_weft_thread()) return real::nanosleep(req, rem);
    if (req == nullptr || req->tv_nsec < 0 || req->tv_nsec >= 1000000000L || req->tv_sec < 0)
        return errno_result(EINVAL);
    {
        errno_keeper keep;
        (void)weft_sleep_ns(ns_of(req));
    }
    if (rem != nullptr) *rem = timespec{0, 0};
    return 0;
}

int usleep(useconds_t us) {
    cancel_point cp;
    if (!on_weft_thread()) return real::usleep(us);
    errno_keeper keep;
    (void)weft_sleep_ns(static_cast<std::uint64_t>(us) * 1000ULL);
    return 0;
}

unsigned sleep(unsigned seconds) {
    cancel_point cp;
    if (!on_weft_thread()) return real::sleep(seconds);
    errno_keeper keep;
    (void)weft_sleep_ns(static_cast<std::uint64_t>(seconds) * 1000000000ULL);
    return 0;
}

// Returns an error number (not -1 and errno), as POSIX has it. Clocks other
// than CLOCK_REALTIME and CLOCK_MONOTONIC (CPU-time clocks, CLOCK_BOOTTIME,
// ...) go to the C library: they hold the worker (docs/shim.md).
int clock_nanosleep(clockid_t clock, int flags, const struct timespec* req, struct timespec* rem) {
    cancel_point cp;
    if (!on_weft_thread() || (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC))
        return real::clock_nanosleep(clock, flags, req, rem);
    if (!valid(req)) return EINVAL;
    std::uint64_t ns = ns_of(req);
    if ((flags & TIMER_ABSTIME) != 0) {
        std::uint64_t now_ns = static_cast<std::uint64_t>(weft::detail::clock_ns(clock));
        ns = ns > now_ns ? ns - now_ns : 0;
    }
    {
        errno_keeper keep;
        if (ns != 0) (void)weft_sleep_ns(ns);
    }
    if (rem != nullptr && (flags & TIMER_ABSTIME) == 0) *rem = timespec{0, 0};
    return 0;
}

}  // extern "C"
