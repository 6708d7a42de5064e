// The sweeps of `weft-bench knary` and `weft-bench cycler`, and how their
// model is judged (Arora, Blumofe & Plaxton, Figures 24-28).
//
// A sweep runs every workload (knary inputs, or the fork/join applications) on
// each worker count P, each on a fresh ws runtime, after measuring its T1 and
// Tinf on one worker (knary_program.hpp). Each experiment runs three sets:
//   fit       knary's inputs: c1 and c2 are fitted to these runs;
//   held_out  the same inputs again, run afterwards: the fit is judged here;
//   apps      lu and heat (knary_apps.hpp), judged with knary's c1 and c2.
// Three forms of the model (knary_model.hpp):
//   "pa":"paper","model":"abp"    T = c1 T1/PA + c2 Tinf P/PA with PA =
//        min(CPUs - PA(cycler), P), PA(cycler) = 0 alone: the judged form;
//   "pa":"cpu","model":"abp"      the same with PA = the process's CPU time
//        over T during the run: a second figure, which cancels T in the
//        model's first term;
//   "pa":"paper","model":"brent"  weft's: T = c1 (T1 - Tinf)/PA + c2 Tinf.
// The JSON gets a row per run ("sweep", "program", the PAs, each form's time
// and error) and one summary row per form and set:
//   {"summary":"fit","pa":..,"model":..,"set":"fit"|"held_out"|"apps",
//    "held_out":bool,"c1":..,"c2":..,"worst_rel_err":..,"median_rel_err":..}
// (docs/bench.md, "knary").
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "harness.hpp"
#include "knary_model.hpp"
#include "knary_program.hpp"

namespace weft::bench::knary {

// One run, or the median of a workload's runs on P workers.
struct sweep_row {
    std::string set;      // "fit", "held_out" or "apps"
    std::string program;  // the workload's name
    shape s{};            // knary's shape (sets fit and held_out)
    work_span ws;
    int workers = 0;
    int round = 0;        // -1: the median of the rounds
    timed_run run;
    summary wall{};       // over the rounds, for a median row
    double pa_other = 0;  // the competing load's processor average over the run (0 alone)
};

// The measured T1 and Tinf of each workload, in order (progress lines name
// `set`; `step` counts steps across calls, out of `steps`).
std::vector<work_span> measure_spans(context& ctx, std::string const& set, std::vector<workload> const& programs,
                                     int rounds, std::size_t& step, std::size_t steps);
// Timed runs of each workload on each P. median_only: one row per workload
// and P (the run whose time is the median), else one per run. `hook` is
// called around every timed run, in the order the rows come out.
std::vector<sweep_row> timed_sweep(context& ctx, std::string const& set, std::vector<workload> const& programs,
                                   std::vector<shape> const& shapes, std::vector<work_span> const& spans,
                                   std::vector<int> const& workers, int rounds, bool median_only,
                                   run_hook const& hook, std::size_t& step, std::size_t steps);

// Emits the per-run rows (with `extra` fields from the caller: empty alone,
// set beside the cycler, whose PA(cycler) the table then shows),
// the summary rows and the table, and says the fits of the three forms: the
// paper's (judged), the CPU-time PA, and weft's (knary_model.hpp,
// brent_point). Returns the paper form's fit and judgements.
struct judged {
    fit_result fit;  // on the fit set
    judgement held_out, apps;
};
judged report(context& ctx, std::vector<sweep_row> const& rows, int cpus, std::string const& title,
              std::function<void(json_object&, sweep_row const&)> const& extra);

// The model's target, from the project's statement of this experiment: every
// held-out run within 25% of the model fitted on the fit set.
inline constexpr double target_max_rel_error = 0.25;

}  // namespace weft::bench::knary
