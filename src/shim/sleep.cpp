// sched_yield and the sleeps: on a weft thread they block (or yield) only that
// thread, through weft_thread_yield and io::sleep_until (a sleep a signal's
// handler ends with EINTR, as the kernel's); on a kernel thread that is not a
// weft thread they are the C library's.
#include <sched.h>

#include <cerrno>
#include <cstdint>

#include "core/clock.hpp"
#include "io/sleep.hpp"
#include "shim/shim.hpp"
#include "shim/signals.hpp"

using namespace weft::shim;

namespace {

bool on_weft_thread() { return ready() && weft_thread_self() != WEFT_THREAD_NULL; }

bool valid(const struct timespec* t) { return t != nullptr && weft::detail::timespec_valid(*t); }

std::uint64_t ns_of(const struct timespec* t) { return static_cast<std::uint64_t>(weft::detail::ns_of(*t)); }

// Sleeps the calling weft thread for ns: 0, or EINTR when a signal's handler
// ended the sleep, with *left (if not null) the time not slept.
int sleep_for(std::uint64_t ns, std::uint64_t* left) {
    if (left != nullptr) *left = 0;
    if (ns == 0) {
        errno_keeper keep;
        (void)weft_thread_yield();  // as weft_sleep_ns(0): a sleep of nothing lets the others run
        return 0;
    }
    constexpr std::uint64_t longest = INT64_MAX / 4;  // far beyond any run: no overflow below
    std::int64_t deadline = weft::detail::monotonic_ns() + static_cast<std::int64_t>(ns > longest ? longest : ns);
    int rc;
    {
        errno_keeper keep;
        rc = weft::detail::io::sleep_until(deadline);
    }
    if (rc == EINTR && left != nullptr) {
        std::int64_t rest = deadline - weft::detail::monotonic_ns();
        *left = rest > 0 ? static_cast<std::uint64_t>(rest) : 0;
    }
    return rc;
}

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
    std::uint64_t left = 0;
    int rc = sleep_for(ns_of(req), &left);
    if (rem != nullptr) *rem = weft::detail::timespec_of(static_cast<std::int64_t>(left));
    return errno_result(rc);
}

int usleep(useconds_t us) {
    cancel_point cp;
    if (!on_weft_thread()) return real::usleep(us);
    return errno_result(sleep_for(static_cast<std::uint64_t>(us) * 1000ULL, nullptr));
}

unsigned sleep(unsigned seconds) {
    cancel_point cp;
    if (!on_weft_thread()) return real::sleep(seconds);
    std::uint64_t left = 0;
    errno_keeper keep;
    if (sleep_for(static_cast<std::uint64_t>(seconds) * 1000000000ULL, &left) == 0) return 0;
    // The seconds not slept, rounded to the nearest, as glibc's sleep returns them.
    return static_cast<unsigned>((left + 500000000ULL) / 1000000000ULL);
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
    std::uint64_t left = 0;
    int rc = sleep_for(ns, &left);
    if (rem != nullptr && (flags & TIMER_ABSTIME) == 0)
        *rem = weft::detail::timespec_of(static_cast<std::int64_t>(left));
    return rc;
}

}  // extern "C"
