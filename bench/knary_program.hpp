// knary on weft: the program of `weft-bench knary` and `weft-bench cycler`,
// the measurements both make of it (and of the fork/join applications run
// beside it, knary_apps.hpp), and the options they share.
//
// Every measurement starts a runtime of its own with the ws scheduler (Arora,
// Blumofe & Plaxton's non-blocking work stealer) and finalizes it at the end,
// so no worker count or measurement setting carries over to the next.
//   - measure_work_span: T1 and Tinf on ONE worker. T1 is the run's CPU
//     time (the process's, CLOCK_PROCESS_CPUTIME_ID): the time one worker took
//     to run every node, runtime overhead included. Tinf is the span the
//     runtime measures (weft_config_t.measure). The runtime's own work
//     measurement is taken too: on an idle machine it equals the CPU time,
//     but the runtime times strands on the wall clock, so when another
//     program takes the CPU from the run, its work and span count that wait
//     and the CPU time does not. On one worker nothing of ours competes for
//     the CPU; on P > 1 workers sharing fewer CPUs the strands would also
//     count the time a worker waited for one of them.
//   - timed_runs: the time T of runs on P workers, measurement off, and the
//     CPU time of the whole process over each (all its threads,
//     CLOCK_PROCESS_CPUTIME_ID: weft's workers are its only threads). That
//     CPU time over T is the "pa":"cpu" form of the processor average; the
//     judged form is the paper's, min(CPUs - PA(cycler), P), which does not
//     depend on the run (knary_model.hpp).
// Every run checks its result (a knary tree the nodes it ran, which must
// equal the shape's node count), else the run stops.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness.hpp"
#include "knary_model.hpp"

namespace weft::bench::knary {

// The busy loop's iterations per node by default: about 1.2 us of CPU on the
// project's 2-core AMD EPYC VM (weft-bench knary --inputs 6:9:0 --workers 1
// reports T1 = 0.080 s for 66,430 nodes), 15 times weft's create + join (78 ns,
// docs/results.md), so the nodes, not the runtime, make the work.
inline constexpr long default_spin = 1000;

// A program the experiments measure: `run` runs it once on the calling weft
// thread of a running runtime; `prepare`, if set, restores its inputs before
// each run and `check`, if set, dies (die()) if the run's result is wrong,
// both untimed.
struct workload {
    std::string name;
    std::function<void()> prepare;
    std::function<void()> run;
    std::function<void()> check;
};
workload knary_workload(shape s, long spin);

// Work and span on one worker: medians over the rounds (seconds).
struct work_span {
    double t1_s = 0;    // CPU time of the run
    double tinf_s = 0;  // the runtime's span
    double work_s = 0;  // the runtime's work
    summary t1{};
    summary tinf{};
    summary work{};
};
work_span measure_work_span(workload const& w, int rounds);

// One timed run on P workers.
struct timed_run {
    double wall_s = 0;
    double cpu_s = 0;  // CPU time of the process during the run
    double pa_cpu = 0;  // cpu_s / wall_s
    std::uint64_t start_ns = 0;  // now_ns() at its ends
    std::uint64_t end_ns = 0;
};
// Called right before a timed run starts (end = false) and right after it
// ends (end = true), outside the timed region, with the round's index.
using run_hook = std::function<void(int round, bool end)>;
// A runtime of `workers` ws workers: one untimed warm-up run, then `rounds`
// timed runs, in order.
std::vector<timed_run> timed_runs(workload const& w, int workers, int rounds, run_hook const& hook = {});
// The index of the run whose wall time is the median (for an even count, the
// lower of the two middle ones): its time and PA are reported together.
std::size_t median_run(std::vector<timed_run> const& runs);

// The options both experiments share, and their values.
option_spec opt_inputs(std::string default_inputs);
option_spec opt_worker_list(std::string default_workers);
option_spec opt_spin();
// --inputs: a list of n:k:r; --workers: a list of counts and ranges a-b.
// Both throw usage_error naming the experiment, the option and the value.
std::vector<shape> parse_inputs(std::string const& command, std::vector<std::string> const& items);
std::vector<int> parse_workers(std::string const& command, std::vector<std::string> const& items);

// "n:k:r" for tables and messages.
std::string shape_name(shape s);

}  // namespace weft::bench::knary
