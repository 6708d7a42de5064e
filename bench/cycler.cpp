// weft-bench cycler: knary beside Arora, Blumofe & Plaxton's cycler, a load
// whose processor use varies at random (cycler_load.hpp), as in their Figures
// 27 and 28 ("Knary utilization" and "Application utilization ... Cycler is
// also running").
//
// First, with the cycler not yet running, T1 and Tinf of every workload on
// one worker (knary_program.hpp): the knary inputs twice (a fit sweep and a
// held-out sweep) and weft's fork/join lu and heat (knary_apps.hpp). Then the
// cycler starts, and for each workload and P a fresh ws runtime runs it
// --rounds times. Every run is a row of its own, since each run sees its own
// share of the machine: its time T, the cycler's processor average PA(cycler)
// over the same interval from the cycler's counter (as the paper reads it),
// and the paper's PA = min(CPUs - PA(cycler), P). The model is fitted on the
// fit sweep and judged on the held-out sweep and on lu and heat
// (knary_sweep.hpp), with the paper's PA and, as a second figure, with the
// run's CPU time / T. The cycler's log gives PA(cycler) per --interval-ms.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cycler_load.hpp"
#include "harness.hpp"
#include "knary_apps.hpp"
#include "knary_model.hpp"
#include "knary_program.hpp"
#include "knary_sweep.hpp"

namespace weft::bench::cycler {
namespace {

using knary::shape;

// The cycler's processor average between two readings: from its CPU time, and
// from its counter at `rate` increments per CPU-ns (0 if no rate is known).
double pa_from_cpu(reading const& a, reading const& b) {
    return b.t_ns > a.t_ns ? double(b.cpu_ns - a.cpu_ns) / double(b.t_ns - a.t_ns) : 0.0;
}
double pa_from_counter(reading const& a, reading const& b, double rate) {
    if (!(rate > 0) || b.t_ns <= a.t_ns) return 0.0;
    return double(b.count - a.count) / rate / double(b.t_ns - a.t_ns);
}

int run(context& ctx) {
    auto const& o = ctx.opts();
    std::string const command = "weft-bench " + ctx.exp().name;
    std::vector<shape> const inputs = knary::parse_inputs(command, o.list("inputs"));
    std::vector<int> const workers = knary::parse_workers(command, o.list("workers"));
    long const spin = static_cast<long>(o.integer("spin"));
    int const rounds = static_cast<int>(o.integer("rounds"));
    int const cpus = static_cast<int>(allowed_cpus().size());
    settings cs;
    cs.max_processes = o.integer("cycler-max") > 0 ? static_cast<int>(o.integer("cycler-max")) : cpus;
    cs.min_ms = o.number("cycler-min-ms");
    cs.max_ms = o.number("cycler-max-ms");
    cs.interval_ms = o.number("interval-ms");
    cs.seed = static_cast<std::uint64_t>(o.integer("seed"));
    if (cs.max_ms < cs.min_ms)
        throw usage_error(command + ": --cycler-max-ms " + fmt(cs.max_ms, 1) + " is below --cycler-min-ms " +
                          fmt(cs.min_ms, 1) + "; valid: max >= min");

    if (std::string const w = build_warning(); !w.empty()) ctx.warn("%s", w.c_str());
    std::vector<std::string> warnings;
    double loadavg = 0;
    if (getloadavg(&loadavg, 1) == 1 && loadavg > cpus + 0.5)
        warnings.push_back("the 1-minute load average was " + fmt(loadavg, 1) + " on " + std::to_string(cpus) +
                           " CPUs at the start: programs besides the cycler took CPU time, and CPUs - PA(cycler) "
                           "overstates what was left to knary");
    std::vector<knary::workload> const apps = knary::parse_apps(command, o);
    ctx.say("cycler: knary on %zu input(s) x %zu worker count(s), twice (a fit sweep, then a held-out sweep), and %zu "
            "application(s), %d round(s) each, beside the cycler: batches of 0..%d processes, each running %.0f-%.0f "
            "ms.\nThis machine has %d CPUs: runs with more than %d workers are oversubscribed.\n",
            inputs.size(), workers.size(), apps.size(), rounds, cs.max_processes, cs.min_ms, cs.max_ms, cpus, cpus);

    std::vector<knary::workload> knaries;
    for (shape const s : inputs) knaries.push_back(knary::knary_workload(s, spin));

    load cycler(cs);  // forked now, before any weft runtime exists

    struct set {
        char const* name;
        std::vector<knary::workload> const* programs;
        std::vector<shape> shapes;
        std::vector<knary::work_span> spans;
    };
    std::vector<set> sets{{"fit", &knaries, inputs, {}}, {"held_out", &knaries, inputs, {}}};
    if (!apps.empty()) sets.push_back({"apps", &apps, {}, {}});
    std::size_t steps = 0;
    for (auto const& st : sets) steps += st.programs->size() * (1 + workers.size());
    std::size_t step = 0;
    for (auto& st : sets) st.spans = knary::measure_spans(ctx, std::string(st.name) + " (cycler idle)", *st.programs,
                                                         rounds, step, steps);

    cycler.start();
    std::vector<knary::sweep_row> rows;
    std::vector<reading> before, after;  // the cycler's totals at each run's ends, in the order of rows
    auto hook = [&](int, bool end) { (end ? after : before).push_back(cycler.read()); };
    for (auto const& st : sets) {
        auto got = knary::timed_sweep(ctx, std::string(st.name) + " (cycler running)", *st.programs, st.shapes,
                                      st.spans, workers, rounds, false, hook, step, steps);
        for (auto& r : got) r.set = st.name;
        rows.insert(rows.end(), got.begin(), got.end());
    }
    cycler.stop();

    std::vector<sample> const log = cycler.log();
    double const rate = cycler.increments_per_cpu_ns();
    std::uint64_t const t_start = log.empty() ? 0 : log.front().at.t_ns;
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i].pa_other = pa_from_counter(before[i], after[i], rate);

    std::size_t row_index = 0;
    knary::report(ctx, rows, cpus,
                  "cycler: knary, lu and heat beside the cycler, every run (* oversubscribed): PA(cycler) over the run "
                  "from its counter, PA = min(CPUs - PA(cycler), P), the model fitted on the fit sweep (Arora, "
                  "Blumofe & Plaxton, Figures 27 and 28)",
                  [&](json_object& rec, knary::sweep_row const& r) {
                      std::size_t const i = row_index++;
                      rec.add("t_s", double(r.run.start_ns - std::min(t_start, r.run.start_ns)) * 1e-9);
                      rec.add("pa_cycler", r.pa_other).add("pa_cycler_cpu", pa_from_cpu(before[i], after[i]));
                  });

    // PA(cycler) per interval of the log.
    std::vector<double> per_interval;
    for (std::size_t i = 1; i < log.size(); ++i) {
        json_object rec = ctx.record();
        double const pac = pa_from_counter(log[i - 1].at, log[i].at, rate);
        per_interval.push_back(pac);
        rec.add("interval", true).add("t_s", double(log[i - 1].at.t_ns - t_start) * 1e-9);
        rec.add("length_s", double(log[i].at.t_ns - log[i - 1].at.t_ns) * 1e-9);
        rec.add("pa_cycler", pac).add("pa_cycler_cpu", pa_from_cpu(log[i - 1].at, log[i].at));
        rec.add("processes", log[i].running);
        ctx.emit(rec);
    }
    double const pa_cycler_mean = log.size() >= 2 ? pa_from_counter(log.front().at, log.back().at, rate) : 0.0;

    json_object rec = ctx.record();
    rec.add("cycler", true).add("pa_cycler_from", "the cycler's counter over the run / (increments per CPU-second)");
    rec.add("t1_from", "CPU time of the run on 1 worker, cycler idle");
    rec.add("tinf_from", "span measured by the runtime on 1 worker, cycler idle");
    rec.add("processes_started", cycler.processes_started()).add("pa_cycler_mean", pa_cycler_mean);
    rec.add("increments_per_cpu_s", rate * 1e9).add("intervals", per_interval.size());
    rec.add("cycler_max", cs.max_processes).add("cycler_min_ms", cs.min_ms).add("cycler_max_ms", cs.max_ms);
    rec.add("interval_ms", cs.interval_ms).add("seed", static_cast<unsigned long long>(cs.seed));
    rec.add("sched", "ws").add("spin", spin).add("rounds", rounds);
    add_provenance(rec);
    if (!warnings.empty()) rec.add("warnings", warnings);
    ctx.emit(rec);

    summary const iv = summarize(per_interval);
    ctx.say("cycler: %llu processes started; PA(cycler) over the whole run %.2f; per %.0f ms interval: median %.2f, "
            "p10 %.2f, p90 %.2f (%zu intervals: the JSON rows with \"interval\")\n",
            static_cast<unsigned long long>(cycler.processes_started()), pa_cycler_mean, cs.interval_ms, iv.median,
            iv.p10, iv.p90, per_interval.size());
    for (auto const& w : warnings) ctx.warn("%s", w.c_str());
    return 0;
}

std::vector<option_spec> cycler_options() {
    std::vector<option_spec> o{knary::opt_inputs("6:9:0,6:9:2,6:9:4,6:9:6,6:9:8"), knary::opt_worker_list("1,2,3,4,6,8,12,16"),
                knary::opt_spin(), opt_rounds(3),
                {.name = "cycler-max", .kind = opt_kind::integer, .metavar = "N", .default_value = "0",
                 .help = "the most cycler processes at once (0: the CPUs)", .min = 0, .max = 64},
                {.name = "cycler-min-ms", .kind = opt_kind::number, .metavar = "MS", .default_value = "10",
                 .help = "shortest life of a cycler process (and of a pause)", .min = 1, .max = 60000},
                {.name = "cycler-max-ms", .kind = opt_kind::number, .metavar = "MS", .default_value = "300",
                 .help = "longest life of a cycler process (and of a pause)", .min = 1, .max = 60000},
                {.name = "interval-ms", .kind = opt_kind::number, .metavar = "MS", .default_value = "250",
                 .help = "the cycler log's sampling period", .min = 1, .max = 60000},
                {.name = "seed", .kind = opt_kind::integer, .metavar = "N", .default_value = "1",
                 .help = "seed of the cycler's random numbers", .min = 0, .max = 1e18}};
    for (auto& a : knary::opt_apps(240, 240, 40)) o.push_back(std::move(a));
    return o;
}

registrar const reg{experiment{
    .name = "cycler",
    .description = "knary beside Arora, Blumofe & Plaxton's cycler (a load of random size): PA, utilization, model",
    .details = "The cycler: repeatedly a random number (0..--cycler-max) of forked processes, each running a random\n"
               "time in [--cycler-min-ms, --cycler-max-ms] incrementing a counter; its log gives its processor\n"
               "average PA(cycler) per --interval-ms. Beside it, knary runs on each input and P (a fresh ws runtime\n"
               "per P), twice (a fit sweep and a held-out sweep), then weft's fork/join lu and heat; each run reports\n"
               "its time T, PA(cycler) over the run from the cycler's counter, the paper's PA = min(CPUs - PA(cycler),\n"
               "P) and the run's CPU time / T. T1 and Tinf are measured on 1 worker before the cycler starts. The\n"
               "model T = c1*T1/PA + c2*Tinf*P/PA is fitted on the fit sweep and judged on the others, with either\n"
               "PA. P above the CPU count is oversubscribed. See docs/bench.md.",
    .options = cycler_options(),
    .run = run,
    .in_demo = true,
    .demo_args = {"--inputs", "5:9:0,5:9:4,5:9:8", "--workers", "1,2,4,8", "--spin", "2000", "--rounds", "2", "--lu",
                  "256", "--heat", "256", "--heat-steps", "30"},
    .demo_order = 41,
}};

}  // namespace
}  // namespace weft::bench::cycler
