// weft::detail::adapt — ASAT's timed-barrier test (probe.hpp; Severance &
// Enbody, "Automatic Self-Allocating Threads (ASAT) on an SGI Challenge").
//
// A test with n workers: one short weft thread pinned to each of workers
// 0..n-1 (it runs when that worker next schedules: at once if it is idle, at
// the next scheduling point of what it runs otherwise; a dropped worker is
// woken for it). The threads pass a spinning barrier 1 + R times
// (tun::adapt_barrier_rounds): the first pass only gathers them, since they
// arrive whenever their workers get to them; before each of the R measured
// passes every thread works for tun::adapt_pass_work_ns, as a parallel loop
// would; each measured pass is timed from the first thread in to the last
// thread out, and the test's transit is the longest. While every thread has a CPU, a pass takes
// microseconds; when one has lost its CPU to another program, it takes the
// rest of a time slice. A test that has not finished after
// tun::adapt_test_timeout_ns is bad: its threads give up and leave.
//
// The controller's kernel thread launches the test and waits for its end on
// a futex word; the threads hold the test (reference count), so one that
// starts after the controller gave up finds the deadline past and leaves.
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <string>

#include "adapt/probe.hpp"
#include "base/primitives.hpp"
#include "core/clock.hpp"
#include "core/futex.hpp"
#include "core/runtime.hpp"
#include "core/thread.hpp"
#include "core/tunables.hpp"
#include "core/ult.hpp"
#include "core/wait.hpp"

namespace weft::detail::adapt {

namespace {

constexpr int passes = 1 + tun::adapt_barrier_rounds;

struct barrier_test {
    int n = 0;
    std::int64_t deadline = 0;
    atomic<int> refs{0};
    atomic<int> arrived[passes] = {};
    atomic<std::int64_t> first_in[passes];
    atomic<std::int64_t> last_out[passes];
    atomic<bool> timed_out{false};
    atomic<std::uint32_t> finished{0};  // threads done; futex word of the controller

    barrier_test() {
        for (int p = 0; p < passes; ++p) {
            first_in[p].store(INT64_MAX, memory_order_relaxed);
            last_out[p].store(0, memory_order_relaxed);
        }
    }
};

void drop_ref(barrier_test* t) {
    if (t->refs.fetch_sub(1, memory_order_acq_rel) == 1) delete t;
}

void* test_thread(void* arg) {
    auto* t = static_cast<barrier_test*>(arg);
    for (int p = 0; p < passes && !t->timed_out.load(memory_order_relaxed); ++p) {
        if (p > 0) {  // the work before the barrier (tunables.hpp: adapt_pass_work_ns)
            std::int64_t until = monotonic_ns() + tun::adapt_pass_work_ns;
            while (monotonic_ns() < until) cpu_relax();
        }
        std::int64_t in = monotonic_ns();
        std::int64_t seen = t->first_in[p].load(memory_order_relaxed);
        while (in < seen && !t->first_in[p].compare_exchange_weak(seen, in, memory_order_relaxed)) {
        }
        t->arrived[p].fetch_add(1, memory_order_acq_rel);
        while (t->arrived[p].load(memory_order_acquire) < t->n) {
            cpu_relax();
            if (monotonic_ns() > t->deadline) {
                t->timed_out.store(true, memory_order_relaxed);
                break;
            }
        }
        std::int64_t out = monotonic_ns();
        std::int64_t last = t->last_out[p].load(memory_order_relaxed);
        while (out > last && !t->last_out[p].compare_exchange_weak(last, out, memory_order_relaxed)) {
        }
    }
    if (t->finished.fetch_add(1, memory_order_acq_rel) + 1 == static_cast<std::uint32_t>(t->n))
        futex_wake(&t->finished);
    drop_ref(t);
    return nullptr;
}

class asat_probe final : public probe {
public:
    explicit asat_probe(std::int64_t bad_ns) : bad_ns_(bad_ns) {}
    const char* name() const override { return "asat"; }

    reading read(runtime* rt, int active) override {
        reading r;
        r.bad = !run_test(rt, active);  // the test threads go to workers 0..active-1
        return r;
    }
    bool try_more(runtime* rt, int n) override { return run_test(rt, n); }

private:
    // True if n workers pass the barrier in a good time.
    bool run_test(runtime*, int n) {
        if (n <= 1) return true;  // nothing to be out of balance with
        auto* t = new barrier_test;
        t->n = n;
        t->deadline = monotonic_ns() + tun::adapt_test_timeout_ns;
        t->refs.store(n + 1, memory_order_relaxed);
        weft_attr_t attr;
        (void)weft_attr_init(&attr);
        attr.detach_state = WEFT_CREATE_DETACHED;
        attr.name = "weft-asat-test";
        attr.stack_size = WEFT_STACK_MIN;
        int launched = 0;
        for (int i = 0; i < n; ++i) {
            ult* u = nullptr;
            if (create_ult(nullptr, &attr, &test_thread, t, 0, nullptr, &u) != 0) break;
            u->pinned_worker = i;
            launch_ult(nullptr, u);
            ++launched;
        }
        if (launched < n) {
            // No stack or handle for a test thread: the ones launched time out.
            t->timed_out.store(true, memory_order_relaxed);
            t->refs.fetch_sub(n - launched, memory_order_relaxed);
        }
        for (;;) {
            std::uint32_t f = t->finished.load(memory_order_acquire);
            if (static_cast<int>(f) >= launched) break;
            std::int64_t give_up = t->deadline + tun::adapt_test_timeout_ns;
            if (monotonic_ns() >= give_up) break;  // a worker never got to its thread: bad, and it leaves later
            futex_wait(&t->finished, f, give_up);
        }
        bool good = launched == n && static_cast<int>(t->finished.load(memory_order_acquire)) == n &&
                    !t->timed_out.load(memory_order_relaxed);
        if (good) {
            std::int64_t transit = 0;
            for (int p = 1; p < passes; ++p)
                transit = std::max(transit, t->last_out[p].load(memory_order_relaxed) -
                                                t->first_in[p].load(memory_order_relaxed));
            good = transit <= bad_ns_;
        }
        drop_ref(t);
        return good;
    }

    std::int64_t bad_ns_;
};

const probe_def asat_probe_def = {
    .name = "asat",
    .description = "Severance & Enbody's timed barrier: the active workers pass a spinning barrier",
    .interval_ms = tun::adapt_asat_interval_ms,
    .make = [](std::string*) -> std::unique_ptr<probe> {
        return std::make_unique<asat_probe>(tun::adapt_bad_transit_ns);
    },
};

}  // namespace
WEFT_REGISTER(asat_probe_def);
}  // namespace weft::detail::adapt
