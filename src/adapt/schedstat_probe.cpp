// weft::detail::adapt — the schedstat probe (probe.hpp).
//
// Per reading, over the interval since the last one (the arithmetic, pure and
// tested on synthetic /proc text: schedstat.hpp):
//   wait  the time the active workers spent runnable but not running, summed
//         over them, in CPUs (wait ns / interval ns): /proc/self/task/TID/
//         schedstat's second field (run_delay, the kernel's sched_info). Only
//         CPU contention makes it grow: a parked worker is not runnable, a
//         worker that runs is not waiting.
//   idle  the idle time of the CPUs this process may run on (its affinity
//         mask), in CPUs: /proc/stat's per-CPU idle + iowait (USER_HZ ticks).
// Bad: wait >= tun::adapt_wait_bad_cpus. Room: idle >= tun::adapt_idle_room_cpus
// and wait < tun::adapt_wait_calm_cpus. Another weft process, or any other
// program, is load like any other: it shows as our wait when it takes our CPUs
// and as less idle when it runs beside us.
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "adapt/probe.hpp"
#include "adapt/schedstat.hpp"
#include "core/clock.hpp"
#include "core/outside.hpp"
#include "core/runtime.hpp"
#include "core/tunables.hpp"
#include "core/wait.hpp"

namespace weft::detail::adapt {

namespace {

// Reads a small /proc file into buf (NUL-terminated); false if it cannot.
bool read_file(const char* path, char* buf, std::size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = '\0';
    return true;
}

// run_delay (ns) of kernel thread tid of this process; -1 if unreadable.
std::int64_t run_delay_ns(int tid) {
    char path[64], buf[128];
    std::snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", tid);
    if (!read_file(path, buf, sizeof buf)) return -1;
    return parse_run_delay(buf);
}

// Idle + iowait ticks of the CPUs in `mask`; -1 if /proc/stat is unreadable.
// The file is read whole (a line per CPU, and more: 4 KiB is not always enough).
std::int64_t idle_ticks(const cpu_set_t& mask, std::vector<char>& buf) {
    int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    std::size_t used = 0;
    for (;;) {
        if (buf.size() - used < 4096) buf.resize(buf.size() + 16384);
        ssize_t n = read(fd, buf.data() + used, buf.size() - used - 1);
        if (n <= 0) break;
        used += static_cast<std::size_t>(n);
    }
    close(fd);
    buf[used] = '\0';
    return used == 0 ? -1 : parse_idle_ticks(buf.data(), mask);
}

class schedstat_probe final : public probe {
public:
    schedstat_probe() {
        CPU_ZERO(&mask_);
        if (sched_getaffinity(0, sizeof mask_, &mask_) != 0)
            for (int i = 0; i < CPU_SETSIZE; ++i) CPU_SET(i, &mask_);
        tick_ns_ = 1'000'000'000 / sysconf(_SC_CLK_TCK);
    }
    const char* name() const override { return "schedstat"; }

    reading read(runtime* rt, int active) override {
        schedstat_sample now;
        now.now_ns = monotonic_ns();
        now.idle_ticks = idle_ticks(mask_, stat_buf_);
        now.run_delay_ns.resize(static_cast<std::size_t>(rt->nworkers));
        for (int i = 0; i < rt->nworkers; ++i) {
            int tid = worker_thread(i);
            now.run_delay_ns[static_cast<std::size_t>(i)] = tid != 0 ? run_delay_ns(tid) : -1;
        }
        // A worker that was dropped for the whole interval waited for nothing
        // that concerns us; one that changed state counts (judge_schedstat
        // counts workers 0..active-1).
        reading r = judge_schedstat(last_, now, active, tick_ns_);
        if (last_.now_ns != 0) last_room_ = r.room;
        last_ = std::move(now);
        return r;
    }

    bool try_more(runtime*, int) override { return last_room_; }

private:
    cpu_set_t mask_;
    std::int64_t tick_ns_ = 10'000'000;
    schedstat_sample last_;
    std::vector<char> stat_buf_;
    bool last_room_ = false;
};

const probe_def schedstat_probe_def = {
    .name = "schedstat",
    .description = "the kernel's account of how long the workers waited for a CPU, and of idle CPUs",
    .interval_ms = tun::adapt_schedstat_interval_ms,
    .make = [](std::string* why) -> std::unique_ptr<probe> {
        if (run_delay_ns(self_tid()) < 0) {  // no CONFIG_SCHED_INFO
            *why = "this kernel gives no per-thread schedstat (/proc/self/task/TID/schedstat)";
            return nullptr;
        }
        return std::make_unique<schedstat_probe>();
    },
};

}  // namespace
WEFT_REGISTER(schedstat_probe_def);
}  // namespace weft::detail::adapt
