// How the runtime starts under the shim: a constructor of libweft-pthread.so.
//
// The dynamic loader runs a preloaded (or linked) library's constructors before
// the program's own and before main, on the process's first kernel thread. The
// shim's constructor calls weft_init there: that kernel thread becomes worker
// 0 and its flow becomes the main weft thread (DESIGN.md), so main() and
// everything it calls run on a weft thread from its first line. Starting at the
// first interposed call instead would make whichever kernel thread calls first
// (a library's own thread, a constructor's helper) worker 0.
//
// It is the last constructor of the shim (start.cpp is linked after weft's
// objects), so weft's static initializers (the scheduler registry) have run.
// At exit the runtime is not finalized: as under glibc, exit() ends the process
// while other threads still run; weft's own exit hook prints WEFT_STATS.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

#include "core/clock.hpp"
#include "shim/shim.hpp"
#include "shim/signals.hpp"
#include "shim/tls_block.hpp"

namespace weft::shim {

std::atomic<int> g_ready{0};
pthread_t g_initial_kernel_thread = 0;
pid_t g_runtime_pid = 0;

namespace {

__attribute__((constructor)) void start_weft_under_shim() {
    g_initial_kernel_thread = real::pthread_self();
    g_runtime_pid = getpid();
    std::uint64_t main_mask = block_routed_signals();  // before the workers start: they inherit it
    if (int rc = weft_init(nullptr); rc != 0 && rc != EBUSY) {
        std::fprintf(stderr, "weft-pthread: weft's runtime could not start (%s); see the message above\n",
                     std::strerror(rc));
        std::exit(2);
    }
    start_tls_blocks();
    start_signal_routing(main_mask);
    g_ready.store(1, std::memory_order_release);
}

}  // namespace

int refuse(const char* fn, const char* why, int err) {
    // One line per function and process: a program that calls it in a loop
    // does not flood stderr. A small fixed table, no allocation.
    static std::atomic<const char*> said[64];
    for (auto& s : said) {
        const char* cur = s.load(std::memory_order_acquire);
        if (cur == fn) return err;
        if (cur == nullptr) {
            if (s.compare_exchange_strong(cur, fn)) break;
            if (cur == fn) return err;
        }
    }
    std::fprintf(stderr, "weft-pthread: %s is not supported under weft threads (%s); returning %s (docs/shim.md)\n", fn,
                 why, std::strerror(err));
    return err;
}

int convert_deadline(clockid_t from, const struct timespec* abstime, clockid_t to, struct timespec* out) {
    if ((from != CLOCK_REALTIME && from != CLOCK_MONOTONIC) || abstime == nullptr || abstime->tv_nsec < 0 ||
        abstime->tv_nsec >= detail::kNsPerSecond)
        return EINVAL;
    if (from == to) {
        *out = *abstime;
        return 0;
    }
    std::int64_t now_from = detail::clock_ns(from);
    std::int64_t now_to = detail::clock_ns(to);
    std::int64_t left = std::max<std::int64_t>(detail::ns_of(*abstime) - now_from, 0);
    *out = detail::timespec_of(now_to + std::min(left, INT64_MAX - now_to));
    return 0;
}

}  // namespace weft::shim
