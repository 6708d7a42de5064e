// weft::detail::adapt — the schedstat probe (probe.hpp).
//
// Per reading, over the interval since the last one:
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
#include <vector>

#include "adapt/probe.hpp"
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
    char* end = nullptr;
    (void)std::strtoull(buf, &end, 10);  // time on the CPU
    if (end == buf) return -1;
    const char* p = end;
    std::uint64_t wait = std::strtoull(p, &end, 10);
    if (end == p) return -1;
    return static_cast<std::int64_t>(wait);
}

// Idle + iowait ticks of the CPUs in `mask`; -1 if /proc/stat is unreadable.
std::int64_t idle_ticks(const cpu_set_t& mask) {
    std::FILE* f = std::fopen("/proc/stat", "re");
    if (f == nullptr) return -1;
    char line[512];
    std::int64_t total = 0;
    bool any = false;
    while (std::fgets(line, sizeof line, f) != nullptr) {
        unsigned cpu = 0;
        unsigned long long user, nice, sys, idle, iowait;
        if (std::sscanf(line, "cpu%u %llu %llu %llu %llu %llu", &cpu, &user, &nice, &sys, &idle, &iowait) != 6) continue;
        if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &mask)) continue;
        total += static_cast<std::int64_t>(idle + iowait);
        any = true;
    }
    std::fclose(f);
    return any ? total : -1;
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
        std::int64_t now = monotonic_ns();
        std::int64_t idle = idle_ticks(mask_);
        if (static_cast<int>(last_wait_.size()) != rt->nworkers) last_wait_.assign(rt->nworkers, -1);
        double wait_ns = 0;
        for (int i = 0; i < rt->nworkers; ++i) {
            int tid = worker_thread(i);
            std::int64_t d = tid != 0 ? run_delay_ns(tid) : -1;
            // A worker that was dropped for the whole interval waited for
            // nothing that concerns us; one that changed state counts.
            if (d >= 0 && last_wait_[i] >= 0 && i < active) wait_ns += static_cast<double>(d - last_wait_[i]);
            last_wait_[i] = d;
        }
        reading r;
        if (last_now_ != 0) {
            double span = static_cast<double>(now - last_now_);
            double wait = wait_ns / span;
            double idle_cpus = idle >= 0 && last_idle_ >= 0 ? static_cast<double>(idle - last_idle_) * tick_ns_ / span : 0;
            r.bad = wait >= tun::adapt_wait_bad_cpus;
            r.room = idle_cpus >= tun::adapt_idle_room_cpus && wait < tun::adapt_wait_calm_cpus;
            last_room_ = r.room;
        }
        last_now_ = now;
        last_idle_ = idle;
        return r;
    }

    bool try_more(runtime*, int) override { return last_room_; }

private:
    cpu_set_t mask_;
    double tick_ns_ = 1e7;
    std::int64_t last_now_ = 0;
    std::int64_t last_idle_ = -1;
    std::vector<std::int64_t> last_wait_;
    bool last_room_ = false;
};

}  // namespace

std::unique_ptr<probe> make_schedstat_probe() {
    if (run_delay_ns(self_tid()) < 0) return nullptr;
    return std::make_unique<schedstat_probe>();
}

}  // namespace weft::detail::adapt
