// weft-bench share: what its three files share. The child process's program
// (share_child.cpp), the parent's runs of several children and the figures read
// from their logs (share_runs.cpp), and the experiment with its targets, table
// and JSON (share.cpp, where the experiment is described).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace weft::bench::share {

// The children are started this long before the common start time, so that
// each has exec'd and is waiting by then: a few milliseconds on a quiet
// machine; the rest is room for a busy one (a process that is ready only after
// the start is reported as a warning).
inline constexpr double start_lead_s = 0.25;

// --- the worker program (a child process: share_child.cpp) ----------------------------

// Runs program_name ("tree" or "loop") from start_at_ns (CLOCK_MONOTONIC) for
// `seconds`, printing its log lines to stdout every interval_ms; returns the
// exit status.
int run_child(std::string const& program_name, long long start_at_ns, double seconds, long interval_ms);

// --- the parent: runs and their logs (share_runs.cpp) ---------------------------------

struct sample {
    double t_s;  // since the run's common start
    double units;
    int active;
    int share;    // of the core budget; 0: no budget
    int members;  // processes in the budget
};

struct proc_log {
    pid_t pid = -1;
    int fd = -1;
    std::string pending;  // a partial line
    std::vector<sample> samples;
    double ready_s = 0;  // when it was ready to start, relative to the start (negative: in time)
    int workers = 0;
    std::string sched;
    bool ended = false;
    bool killed = false;
};

struct run_log {
    std::vector<proc_log> procs;
    double kill_s = -1;  // when the first process was killed, since the start; < 0: no kill
    double end_s = 0;    // the run's planned end
};

struct settings {
    std::string exe;
    int cpus = 2;
    int workers = 2;
    double seconds = 4;
    double kill_after = 1.5;
    double watch = 2.5;
    double settle = 0.5;
    long interval_ms = 50;
};

// Runs `n` processes started together; with kill, the first is SIGKILLed
// kill_after seconds after the start and the others run watch seconds more.
run_log run_processes(settings const& s, std::string const& program, int n, bool adapt, bool kill, int workers);

// --- figures of one run (share_runs.cpp) ----------------------------------------------

struct window_figures {
    double units_per_s = 0;   // all processes together
    double min_share = 0;     // the smallest process's fraction of the units
    double active_total = 0;  // the processes' mean active workers, summed
};

window_figures over_window(std::vector<proc_log const*> const& procs, double t0, double t1);

struct kill_figures {
    bool recovered = false;
    double recovery_s = 0;    // when recovered
    std::vector<int> shares;  // each survivor's active workers at the end
    double survivors_units_per_s = 0;
    bool budget = false;  // the survivors report a core budget
    bool budget_recovered = false;
    double budget_recovery_s = 0;    // when budget_recovered
    std::vector<int> budget_shares;  // each survivor's budget share at the end
};

// The survivors' share is what each holds over the last quarter of the
// watch (the most frequent active_workers there; ties to the larger): read
// from their logs, for the table. Recovery is judged by what they get done:
// they have recovered at the first window of recovery_window_s, starting at
// the kill or a report after it, in which together they do at least
// recovered_fraction of `ceiling` (units per second of one process alone,
// or of the round's partitioned run of as many processes as survive);
// recovery_s is that window's start less the kill (0: at once).
kill_figures after_kill(run_log const& r, double settle, double interval_s, double ceiling);

}  // namespace weft::bench::share
