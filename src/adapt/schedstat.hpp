// weft::detail::adapt — the schedstat probe's arithmetic (schedstat_probe.cpp),
// as pure functions of the text the kernel gives and of two samples, so that
// tests can feed it synthetic /proc text and samples (tests/whitebox/
// adapt_schedstat_test.cpp). The probe itself only reads the files and keeps
// the last sample.
#pragma once

#include <sched.h>

#include <cstdint>
#include <vector>

#include "adapt/probe.hpp"

namespace weft::detail::adapt {

// run_delay (ns), the second field of /proc/<pid>/task/<tid>/schedstat
// ("<on-cpu ns> <run_delay ns> <timeslices>"); -1 if the text has no such field.
std::int64_t parse_run_delay(const char* schedstat_text);

// The idle + iowait ticks (USER_HZ) of the CPUs in `mask`, summed over the
// "cpuN user nice system idle iowait ..." lines of /proc/stat (the "cpu"
// total line is not one of them); -1 if no line names a CPU of the mask.
std::int64_t parse_idle_ticks(const char* proc_stat_text, const cpu_set_t& mask);

// What the probe knows at one moment.
struct schedstat_sample {
    std::int64_t now_ns = 0;                // monotonic clock; 0: no sample yet
    std::int64_t idle_ticks = -1;           // parse_idle_ticks, -1: unknown
    std::vector<std::int64_t> run_delay_ns; // per worker, -1: unknown
};

// The reading over the interval from `before` to `after`, for `active` workers
// (0..active-1): wait = the growth of their run delays, in CPUs (ns waited per
// ns of interval); idle = the growth of the idle ticks, in CPUs. Bad: wait >=
// tun::adapt_wait_bad_cpus. Room: idle >= tun::adapt_idle_room_cpus and wait <
// tun::adapt_wait_calm_cpus. A worker whose run delay is unknown in either
// sample counts for nothing; an unknown idle count gives no room. Neither bad
// nor room without a `before` sample (now_ns 0) or with an empty interval.
reading judge_schedstat(const schedstat_sample& before, const schedstat_sample& after, int active,
                        std::int64_t tick_ns);

}  // namespace weft::detail::adapt
