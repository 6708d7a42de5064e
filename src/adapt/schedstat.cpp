// weft::detail::adapt — the schedstat probe's arithmetic (schedstat.hpp).
#include "adapt/schedstat.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/tunables.hpp"

namespace weft::detail::adapt {

std::int64_t parse_run_delay(const char* text) {
    char* end = nullptr;
    (void)std::strtoull(text, &end, 10);  // time on the CPU
    if (end == text) return -1;
    const char* p = end;
    std::uint64_t wait = std::strtoull(p, &end, 10);
    if (end == p) return -1;
    return static_cast<std::int64_t>(wait);
}

std::int64_t parse_idle_ticks(const char* text, const cpu_set_t& mask) {
    std::int64_t total = 0;
    bool any = false;
    for (const char* line = text; line != nullptr && *line != '\0';) {
        unsigned cpu = 0;
        unsigned long long user, nice, sys, idle, iowait;
        // "cpu" then a digit: "cpu  ..." is the total over CPUs, which %u
        // would read as a CPU named by its first field.
        if (std::strncmp(line, "cpu", 3) == 0 && line[3] >= '0' && line[3] <= '9' &&
            std::sscanf(line, "cpu%u %llu %llu %llu %llu %llu", &cpu, &user, &nice, &sys, &idle, &iowait) == 6 &&
            cpu < CPU_SETSIZE && CPU_ISSET(cpu, &mask)) {
            total += static_cast<std::int64_t>(idle + iowait);
            any = true;
        }
        line = std::strchr(line, '\n');
        if (line != nullptr) ++line;
    }
    return any ? total : -1;
}

reading judge_schedstat(const schedstat_sample& before, const schedstat_sample& after, int active,
                        std::int64_t tick_ns) {
    reading r;
    if (before.now_ns == 0 || after.now_ns <= before.now_ns) return r;
    const double span = static_cast<double>(after.now_ns - before.now_ns);
    double wait_ns = 0;
    const std::size_t n = std::min(before.run_delay_ns.size(), after.run_delay_ns.size());
    for (std::size_t i = 0; i < n && static_cast<int>(i) < active; ++i)
        if (before.run_delay_ns[i] >= 0 && after.run_delay_ns[i] >= 0)
            wait_ns += static_cast<double>(after.run_delay_ns[i] - before.run_delay_ns[i]);
    const double wait = wait_ns / span;
    const double idle = before.idle_ticks >= 0 && after.idle_ticks >= 0
                            ? static_cast<double>(after.idle_ticks - before.idle_ticks) * static_cast<double>(tick_ns) / span
                            : 0;
    r.bad = wait >= tun::adapt_wait_bad_cpus;
    r.room = idle >= tun::adapt_idle_room_cpus && wait < tun::adapt_wait_calm_cpus;
    return r;
}

}  // namespace weft::detail::adapt
