// weft-bench knary: Arora, Blumofe & Plaxton's performance model of the
// non-blocking work stealer, tested as in their Figures 24 and 25 ("Knary
// utilization", "Application utilization"): T = c1*T1/PA + c2*Tinf*P/PA with
// PA = min(CPUs, P), no other program running, over knary inputs whose
// parallelism runs from 1 to about 10^4 and P = 1..16 workers.
//
// Three sets (knary_sweep.hpp): a fit sweep of the knary inputs, to which c1
// and c2 are fitted; a held-out sweep of the same inputs run afterwards, on
// which the fit is judged; and weft's fork/join lu and heat (knary_apps.hpp),
// judged with knary's c1 and c2. For every workload, T1 and Tinf are measured
// on one worker (T1: the run's CPU time; Tinf: the span the runtime
// measures); then for each P a fresh ws runtime runs it --rounds times and the
// run whose time is the median is reported.
#include <cstdlib>
#include <string>
#include <vector>

#include "harness.hpp"
#include "knary_apps.hpp"
#include "knary_model.hpp"
#include "knary_program.hpp"
#include "knary_sweep.hpp"

namespace weft::bench::knary {
namespace {

int run(context& ctx) {
    auto const& o = ctx.opts();
    std::string const command = "weft-bench " + ctx.exp().name;
    std::vector<shape> const inputs = parse_inputs(command, o.list("inputs"));
    std::vector<int> const workers = parse_workers(command, o.list("workers"));
    long const spin = static_cast<long>(o.integer("spin"));
    int const rounds = static_cast<int>(o.integer("rounds"));
    int const cpus = static_cast<int>(allowed_cpus().size());
    std::vector<workload> const apps = parse_apps(command, o);
    std::vector<workload> knaries;
    for (shape const s : inputs) knaries.push_back(knary_workload(s, spin));

    if (std::string const w = build_warning(); !w.empty()) ctx.warn("%s", w.c_str());
    std::vector<std::string> warnings;
    double load = 0;
    if (getloadavg(&load, 1) == 1 && load > cpus + 0.5)
        warnings.push_back("the 1-minute load average was " + fmt(load, 1) + " on " + std::to_string(cpus) +
                           " CPUs at the start: other programs took CPU time, so PA = min(CPUs, P) overstates the "
                           "processors the runs had");
    ctx.say("knary: %zu input(s) x %zu worker count(s), twice (a fit sweep, then a held-out sweep), and %zu "
            "application(s); ws scheduler, %d round(s) each, %ld busy-loop iterations per node.\nThis machine has %d "
            "CPUs: runs with more than %d workers are oversubscribed.\n",
            inputs.size(), workers.size(), apps.size(), rounds, spin, cpus, cpus);

    std::size_t const steps = (2 * knaries.size() + apps.size()) * (1 + workers.size());
    std::size_t step = 0;
    std::vector<sweep_row> rows;
    for (char const* set : {"fit", "held_out"}) {
        std::vector<work_span> const spans = measure_spans(ctx, set, knaries, rounds, step, steps);
        for (std::size_t i = 0; i < knaries.size(); ++i)
            if (spans[i].work_s > 1.1 * spans[i].t1_s)
                warnings.push_back(std::string(set) + " sweep, knary " + knaries[i].name + ": the runtime measured " +
                                   fmt_sig(spans[i].work_s) + " s of work, the run had T1 = " +
                                   fmt_sig(spans[i].t1_s) +
                                   " s of CPU: it waited for a CPU, and Tinf (timed on the wall clock) counts the wait");
        auto got = timed_sweep(ctx, set, knaries, inputs, spans, workers, rounds, true, {}, step, steps);
        rows.insert(rows.end(), got.begin(), got.end());
    }
    if (!apps.empty()) {
        std::vector<work_span> const spans = measure_spans(ctx, "apps", apps, rounds, step, steps);
        auto got = timed_sweep(ctx, "apps", apps, {}, spans, workers, rounds, true, {}, step, steps);
        rows.insert(rows.end(), got.begin(), got.end());
    }

    report(ctx, rows, cpus,
           "knary: time T on P workers (* oversubscribed), the median of the rounds; PA = min(CPUs, P), utilization "
           "T1/(PA*T), the model fitted on the fit sweep (Arora, Blumofe & Plaxton, Figures 24 and 25)",
           {});
    for (auto const& w : warnings) ctx.warn("%s", w.c_str());
    if (!warnings.empty()) {
        json_object rec = ctx.record();
        rec.add("warnings", warnings);
        ctx.emit(rec);
    }
    return 0;
}

std::vector<option_spec> knary_options() {
    std::vector<option_spec> o{opt_inputs("6:9:0,6:9:1,6:9:2,6:9:3,6:9:4,6:9:5,6:9:6,6:9:7,6:9:8"),
                               opt_worker_list("1-16"), opt_spin(), opt_rounds(3)};
    for (auto& a : opt_apps(320, 320, 60)) o.push_back(std::move(a));
    return o;
}

registrar const reg{experiment{
    .name = "knary",
    .description = "Arora, Blumofe & Plaxton's model T = c1*T1/PA + c2*Tinf*P/PA on knary, lu and heat, P = 1..16 (ws)",
    .details = "knary(n, k, r): a tree of depth n, k children per node, the first r spawned and joined one at a time,\n"
               "the rest in parallel, a busy loop of --spin iterations per node. Two sweeps of the inputs, then\n"
               "weft's fork/join lu (--lu N) and heat stencil (--heat N, --heat-steps S). For each, on 1 worker: T1,\n"
               "the run's CPU time, and Tinf, the span the runtime measures; then for each P a fresh ws runtime\n"
               "runs it --rounds times and the median run is reported. PA = min(CPUs, P) (the paper's, judged) and\n"
               "the run's CPU time / T (a second figure). c1, c2 are fitted on the first sweep by least squares on\n"
               "relative error and judged on the second (held out) and on lu and heat. Utilization = T1/(PA*T);\n"
               "normalized processes = P/(T1/Tinf). P above the CPU count is oversubscribed. See docs/bench.md.",
    .options = knary_options(),
    .run = run,
    .in_demo = true,
    .demo_args = {"--inputs", "5:9:0,5:9:2,5:9:4,5:9:6,5:9:8", "--workers", "1,2,4,8,16", "--spin", "2000", "--rounds",
                  "2", "--lu", "256", "--heat", "256", "--heat-steps", "30"},
    .demo_order = 40,
}};

}  // namespace
}  // namespace weft::bench::knary
