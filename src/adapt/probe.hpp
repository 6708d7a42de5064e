// weft::detail::adapt — the load probe contract: what a probe tells the
// adaptive controller (controller.hpp), and what it may do to find out.
//
// A probe is one file in src/adapt/ that defines a `probe_def` and registers
// it with WEFT_REGISTER (core/registry.hpp); WEFT_ADAPT (and
// weft_config_t.adapt) names it, and weft_adapt_get reports its name. The
// probes (docs/design/adapt.md, "Two probes"):
//   asat       Severance & Enbody's timed barrier (asat_probe.cpp): the active
//              workers pass a spinning barrier; a worker that has lost its CPU
//              to another program makes the transit three orders of magnitude
//              longer.
//   schedstat  the kernel's own account (schedstat_probe.cpp): how long the
//              active workers were runnable but waiting for a CPU, and how long
//              the CPUs this process may use were idle, over the interval.
//
// Who calls what, when (Argobots' ABT_sched_def style, as sched/policy.hpp):
//
//   probe_def::make(why)     Required. Called once per runtime by weft_init,
//                            on the thread that calls it, once the workers
//                            run and only if there are two or more. Returns
//                            the probe, or nullptr with *why saying what this
//                            machine lacks ("this kernel gives no per-thread
//                            schedstat ..."): the worker count then stays
//                            fixed, with one stderr line if WEFT_ADAPT asked
//                            for this probe by name.
//   probe::read(rt, active)  Required. One reading of the load, about the
//                            `active` workers 0..active-1 that run now.
//                            Called on the controller's kernel thread once
//                            per interval (probe_def::interval_ms, or
//                            WEFT_ADAPT_INTERVAL), never concurrently with
//                            itself or with try_more.
//   probe::try_more(rt, n)   Required. "Dipping a toe in the water": would n
//                            workers (one more than active) run well? Asked
//                            right after a read, in the same step, when the
//                            controller has seen tun::adapt_good_readings
//                            good readings in a row and the bound allows
//                            one more. The probe may run its test with n
//                            workers (asat), or answer from its last reading
//                            (schedstat: room).
//   ~probe()                 Called by weft_finalize once the controller's
//                            thread has ended, before the workers stop.
//
// What a probe may do:
//   - Block the controller's kernel thread (a futex, a read of /proc): it is
//     a kernel thread of its own, not a worker and not a weft thread, so it
//     may not call weft's blocking primitives (mutex, join, ...). Each call
//     returns within a bound it sets itself (asat: two test timeouts), even
//     when the workers never get to what it asked of them: weft_finalize
//     waits for the call in progress on worker 0's kernel thread.
//   - Start weft threads (asat: one short, detached test thread pinned to
//     each of workers 0..n-1, create_ult/launch_ult). They must end on their
//     own within a bound, hold no reference to the probe (it may be
//     destroyed before they end: asat's share a reference-counted test),
//     and stay pinned: a dropped worker still runs its pinned threads
//     (docs/design/adapt.md). No kernel thread of its own: one would compete
//     for the CPUs the probe measures.
//   - Read the runtime (rt->nworkers, worker_thread(i), the clock), never
//     change it: dropping and adding workers is the controller's
//     (core/active.hpp). `active` may differ from one call to the next
//     (weft_adapt_set_active, another process joining the core budget).
//   - Never throw: the controller's thread has nothing to catch with.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/registry.hpp"

namespace weft::detail {
struct runtime;
}

namespace weft::detail::adapt {

// One reading, about the current active count.
struct reading {
    bool bad = false;   // the active workers lose their CPUs: one fewer would run better
    bool room = false;  // a CPU is free for one more worker (a probe that cannot tell says false)
};

class probe {
public:
    virtual ~probe() = default;
    virtual const char* name() const = 0;
    virtual reading read(runtime* rt, int active) = 0;
    virtual bool try_more(runtime* rt, int n) = 0;
};

struct probe_def {
    static constexpr plug_kind kind{"load probe", "src/adapt/probe.hpp"};
    const char* name = nullptr;
    const char* description = nullptr;
    int interval_ms = 0;  // the default time between two readings: > 0
    std::unique_ptr<probe> (*make)(std::string* why) = nullptr;
};

// What a definition gets wrong against this contract (core/registry.hpp).
inline const char* contract_violation(const probe_def& def) {
    if (def.make == nullptr) return "make is required";
    if (def.interval_ms <= 0) return "interval_ms must be > 0";
    return nullptr;
}

}  // namespace weft::detail::adapt
