// weft::detail::adapt — what a load probe tells the controller (controller.hpp).
//
// Two probes, chosen by WEFT_ADAPT (docs/design/adapt.md, "Two probes"):
//   asat       Severance & Enbody's timed barrier (asat_probe.cpp): the active
//              workers pass a spinning barrier; a worker that has lost its CPU
//              to another program makes the transit three orders of magnitude
//              longer.
//   schedstat  the kernel's own account (schedstat_probe.cpp): how long the
//              active workers were runnable but waiting for a CPU, and how long
//              the CPUs this process may use were idle, over the interval.
#pragma once

#include <cstdint>
#include <memory>

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
    // Reads the load for `active` workers (0..active-1). Runs on the
    // controller's kernel thread, at most once per interval.
    virtual reading read(runtime* rt, int active) = 0;
    // "Dipping a toe in the water": would n workers (one more than now) run
    // well? The probe may run its test with n workers (asat), or answer from
    // its last reading (schedstat: room).
    virtual bool try_more(runtime* rt, int n) = 0;
};

std::unique_ptr<probe> make_asat_probe(std::int64_t bad_transit_ns);
// Null if this kernel does not give per-thread schedstat (no CONFIG_SCHED_INFO).
std::unique_ptr<probe> make_schedstat_probe();

}  // namespace weft::detail::adapt
