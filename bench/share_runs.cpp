// weft-bench share: running the child processes together, reading their logs,
// and the figures of one run (share.hpp; the experiment: share.cpp).
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "harness.hpp"
#include "share.hpp"

namespace weft::bench::share {
namespace {

void parse_line(proc_log& p, std::string const& line, std::uint64_t start_ns) {
    auto rel = [&](unsigned long long t) { return (static_cast<double>(t) - static_cast<double>(start_ns)) * 1e-9; };
    unsigned long long t = 0, units = 0;
    int a = 0, w = 0, share = 0, members = 0;
    char sched[32] = {};
    if (std::sscanf(line.c_str(), "tick %llu %llu %d %d %d", &t, &units, &a, &share, &members) == 5 ||
        std::sscanf(line.c_str(), "end %llu %llu %d %d %d", &t, &units, &a, &share, &members) == 5) {
        p.samples.push_back({rel(t), static_cast<double>(units), a, share, members});
        if (line.starts_with("end")) p.ended = true;
    } else if (std::sscanf(line.c_str(), "start %llu %d %31s %d %d %d", &t, &w, sched, &a, &share, &members) == 6) {
        p.samples.push_back({rel(t), 0, a, share, members});
        p.workers = w;
        p.sched = sched;
    } else if (std::sscanf(line.c_str(), "ready %llu", &t) == 1) {
        p.ready_s = rel(t);
    } else {
        die("share: a child process (pid %d) printed an unexpected line: '%s'", static_cast<int>(p.pid), line.c_str());
    }
}

// Units done by time t: linear between the samples around it.
double units_at(std::vector<sample> const& s, double t) {
    if (t <= s.front().t_s) return s.front().units;
    for (std::size_t i = 1; i < s.size(); ++i)
        if (t <= s[i].t_s) {
            double const f = (t - s[i - 1].t_s) / std::max(s[i].t_s - s[i - 1].t_s, 1e-9);
            return s[i - 1].units + f * (s[i].units - s[i - 1].units);
        }
    return s.back().units;
}

// The mean of active_workers over the samples in [t0, t1].
double mean_active(std::vector<sample> const& s, double t0, double t1) {
    double sum = 0;
    int k = 0;
    for (sample const& x : s)
        if (x.t_s >= t0 && x.t_s <= t1) sum += x.active, ++k;
    return k > 0 ? sum / k : 0;
}

// Recovery after a kill, by throughput (after_kill).
constexpr double recovery_window_s = 0.25;
constexpr double recovered_fraction = 0.9;

}  // namespace

run_log run_processes(settings const& s, std::string const& program, int n, bool adapt, bool kill, int workers) {
    run_log r;
    r.end_s = kill ? s.kill_after + s.watch : s.seconds;
    std::uint64_t const start_ns = now_ns() + static_cast<std::uint64_t>(start_lead_s * 1e9);
    std::vector<std::string> const args = {s.exe,
                                           "share",
                                           "--share-child",
                                           "--start-at-ns",
                                           std::to_string(start_ns),
                                           "--seconds",
                                           std::to_string(r.end_s),
                                           "--interval-ms",
                                           std::to_string(s.interval_ms),
                                           "--adapt",
                                           adapt ? "default" : "off",
                                           "--programs",
                                           program};
    // Each run's processes share a core budget of their own (WEFT_BUDGET names
    // its shared-memory segment), so that neither other weft programs on the
    // machine nor a slot left by an earlier run's killed process take part;
    // the segment is removed after the run.
    static int runs = 0;
    std::string const budget = "/weft-bench-share-" + std::to_string(getpid()) + "-" + std::to_string(++runs);
    std::vector<std::string> const env = {"WEFT_WORKERS=" + std::to_string(workers), "WEFT_BUDGET=" + budget};
    r.procs.resize(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < r.procs.size(); ++i) {
        // The process to be killed runs well past the run's end, so that it is
        // still running when the kill comes however late a loaded machine
        // schedules this process (the kill, not its own end, stops it).
        std::vector<std::string> a = args;
        if (kill && i == 0) *(std::find(a.begin(), a.end(), "--seconds") + 1) = std::to_string(r.end_s + 20);
        piped_child const c = spawn_piped(s.exe, a, env);
        r.procs[i].pid = c.pid;
        r.procs[i].fd = c.out_fd;
    }
    std::uint64_t const kill_at = start_ns + static_cast<std::uint64_t>(s.kill_after * 1e9);
    // A child that has not ended this long after the planned end is stuck.
    std::uint64_t const give_up = start_ns + static_cast<std::uint64_t>((r.end_s + 30) * 1e9);
    auto kill_all = [&] {
        for (proc_log& p : r.procs)
            if (p.fd >= 0) ::kill(p.pid, SIGKILL);
    };
    for (;;) {
        std::vector<pollfd> fds;
        std::vector<proc_log*> who;
        for (proc_log& p : r.procs)
            if (p.fd >= 0) {
                fds.push_back({p.fd, POLLIN, 0});
                who.push_back(&p);
            }
        if (fds.empty()) break;
        std::uint64_t const now = now_ns();
        if (now >= give_up) {
            kill_all();
            die("share: a child process has not ended %.0f s after its run should have (%d processes, WEFT_ADAPT %s)",
                30.0, n, adapt ? "unset" : "off");
        }
        if (kill && r.kill_s < 0 && now >= kill_at) {
            if (::kill(r.procs[0].pid, SIGKILL) != 0) die("kill(%d): %s", r.procs[0].pid, std::strerror(errno));
            r.kill_s = (static_cast<double>(now_ns()) - static_cast<double>(start_ns)) * 1e-9;
            r.procs[0].killed = true;
        }
        std::uint64_t const until = (kill && r.kill_s < 0) ? kill_at : give_up;
        int const timeout_ms = static_cast<int>(std::min<std::uint64_t>((until - now) / 1000000 + 1, 1000));
        int const ready = poll(fds.data(), fds.size(), timeout_ms);
        if (ready < 0) {
            if (errno == EINTR) continue;
            die("poll: %s", std::strerror(errno));
        }
        for (std::size_t i = 0; i < fds.size(); ++i) {
            if (fds[i].revents == 0) continue;
            proc_log& p = *who[i];
            char buf[4096];
            ssize_t const got = read(p.fd, buf, sizeof buf);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) {
                close(p.fd);
                p.fd = -1;
                continue;
            }
            p.pending.append(buf, static_cast<std::size_t>(got));
            for (std::size_t nl; (nl = p.pending.find('\n')) != std::string::npos;) {
                parse_line(p, p.pending.substr(0, nl), start_ns);
                p.pending.erase(0, nl + 1);
            }
        }
    }
    if (shm_unlink(budget.c_str()) != 0 && errno != ENOENT)
        die("shm_unlink('%s'): %s", budget.c_str(), std::strerror(errno));
    for (proc_log& p : r.procs) {
        int const status = wait_child(p.pid);
        if (p.killed) {
            if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
                die("share: the process killed mid-run (pid %d) ended otherwise than by SIGKILL (status %d)", p.pid,
                    status);
            continue;
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !p.ended || p.samples.empty())
            die("share: a child process (pid %d; %d processes, WEFT_ADAPT %s%s) failed: %s %d%s", p.pid, n,
                adapt ? "unset" : "off", kill ? ", kill run" : "", WIFEXITED(status) ? "exit status" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), p.ended ? "" : ", no end line");
    }
    return r;
}

window_figures over_window(std::vector<proc_log const*> const& procs, double t0, double t1) {
    window_figures f;
    double total = 0, least = -1;
    for (proc_log const* p : procs) {
        double const u = units_at(p->samples, t1) - units_at(p->samples, t0);
        total += u;
        least = least < 0 ? u : std::min(least, u);
        f.active_total += mean_active(p->samples, t0, t1);
    }
    f.units_per_s = total / (t1 - t0);
    f.min_share = total > 0 ? least / total : 0;
    return f;
}

kill_figures after_kill(run_log const& r, double settle, double interval_s, double ceiling) {
    kill_figures k;
    std::vector<proc_log const*> survivors;
    for (proc_log const& p : r.procs)
        if (!p.killed) survivors.push_back(&p);
    double const tail = r.kill_s + 0.75 * (r.end_s - r.kill_s);
    for (proc_log const* p : survivors) {
        std::map<int, int> seen;
        for (sample const& x : p->samples)
            if (x.t_s >= tail) ++seen[x.active];
        int best = 0, count = -1;
        for (auto [active, c] : seen)
            if (c >= count) best = active, count = c;
        k.shares.push_back(best);
    }
    double const window = std::max(recovery_window_s, 4 * interval_s);
    for (double u = r.kill_s; u + window <= r.end_s + 1e-9; u += interval_s) {
        double const rate = over_window(survivors, u, u + window).units_per_s;
        if (rate >= recovered_fraction * ceiling) {
            k.recovered = true;
            k.recovery_s = u - r.kill_s;
            break;
        }
    }
    double const from = std::min(r.kill_s + settle, tail);
    k.survivors_units_per_s = over_window(survivors, from, r.end_s).units_per_s;

    // The budget's part: from the kill until every survivor's controller
    // counts only the survivors in the budget (the killed process's slot
    // reclaimed, its share divided among them).
    for (proc_log const* p : survivors) {
        k.budget_shares.push_back(p->samples.back().share);
        k.budget = k.budget || p->samples.back().share > 0;
    }
    if (k.budget) {
        std::vector<int> members(survivors.size(), 0);
        std::vector<std::tuple<double, std::size_t, int>> counts;  // (time, survivor, members)
        for (std::size_t i = 0; i < survivors.size(); ++i)
            for (sample const& x : survivors[i]->samples) {
                if (x.t_s <= r.kill_s)
                    members[i] = x.members;
                else
                    counts.emplace_back(x.t_s, i, x.members);
            }
        std::sort(counts.begin(), counts.end());
        auto counted_out = [&] {
            return std::all_of(members.begin(), members.end(),
                               [&](int m) { return m == static_cast<int>(survivors.size()); });
        };
        for (auto [t, i, m] : counts) {
            members[i] = m;
            if (counted_out()) {
                k.budget_recovered = true;
                k.budget_recovery_s = t - r.kill_s;
                break;
            }
        }
    }
    return k;
}

}  // namespace weft::bench::share
