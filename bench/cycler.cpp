// weft-bench cycler: knary beside Arora, Blumofe & Plaxton's cycler, a load
// whose processor use varies at random (cycler_load.hpp), as in their Figure
// 27 ("Knary utilization ... Cycler is also running").
//
// First, with the cycler not yet running, T1 and Tinf of each input on one
// worker (knary_program.hpp). Then the cycler starts, and for each input and
// P a fresh ws runtime runs the tree --rounds times. Every run is a row of its
// own, since each run sees its own share of the machine: its time T, its
// processor average PA (the process's CPU time / T), the cycler's processor
// average PA(cycler) over the same interval, and the paper's estimate of the
// program's processors, min(CPUs - PA(cycler), P). The model is fitted to the
// runs with the measured PA and, separately, with the paper's estimate. The
// cycler's log gives PA(cycler) per --interval-ms.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cycler_load.hpp"
#include "harness.hpp"
#include "knary_model.hpp"
#include "knary_program.hpp"

namespace weft::bench::cycler {
namespace {

using knary::shape;

struct result {
    shape s;
    knary::work_span ws;
    int workers = 0;
    int round = 0;
    knary::timed_run run;
    reading before, after;  // the cycler's totals at the run's ends
};

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
    ctx.say("cycler: knary on %zu input(s) x %zu worker count(s), %d round(s) each, beside the cycler: batches of "
            "0..%d processes, each running %.0f-%.0f ms.\nThis machine has %d CPUs: runs with more than %d workers "
            "are oversubscribed.\n",
            inputs.size(), workers.size(), rounds, cs.max_processes, cs.min_ms, cs.max_ms, cpus, cpus);

    load cycler(cs);  // forked now, before any weft runtime exists

    std::size_t const steps = inputs.size() * (1 + workers.size());
    std::size_t step = 0;
    std::vector<knary::work_span> spans;
    for (shape const s : inputs) {
        ctx.progress("[%zu/%zu] %s: T1 and Tinf on 1 worker, cycler idle", ++step, steps, knary::shape_name(s).c_str());
        spans.push_back(knary::measure_work_span(s, spin, rounds));
    }

    cycler.start();
    std::vector<result> results;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        for (int p : workers) {
            ctx.progress("[%zu/%zu] %s on %d worker%s, cycler running", ++step, steps,
                         knary::shape_name(inputs[i]).c_str(), p, p == 1 ? "" : "s");
            std::vector<reading> before(static_cast<std::size_t>(rounds)), after(static_cast<std::size_t>(rounds));
            auto hook = [&](int round, bool end) { (end ? after : before)[std::size_t(round)] = cycler.read(); };
            std::vector<knary::timed_run> const runs = knary::timed_runs(inputs[i], spin, p, rounds, hook);
            for (int r = 0; r < rounds; ++r)
                results.push_back({inputs[i], spans[i], p, r, runs[std::size_t(r)], before[std::size_t(r)],
                                   after[std::size_t(r)]});
        }
    }
    cycler.stop();

    std::vector<sample> const log = cycler.log();
    double const rate = cycler.increments_per_cpu_ns();
    std::uint64_t const t_start = log.empty() ? 0 : log.front().at.t_ns;

    // The model, fitted with the measured PA and with the paper's estimate.
    std::vector<knary::point> measured, estimated;
    std::vector<double> pa_cycler, pa_paper;
    for (auto const& r : results) {
        double const pac = pa_from_cpu(r.before, r.after);
        double const pap = std::min(double(cpus) - pac, double(r.workers));
        pa_cycler.push_back(pac);
        pa_paper.push_back(pap);
        measured.push_back({r.ws.t1_s, r.ws.tinf_s, double(r.workers), r.run.pa, r.run.wall_s});
        estimated.push_back({r.ws.t1_s, r.ws.tinf_s, double(r.workers), pap, r.run.wall_s});
    }
    knary::fit_result const fit = knary::fit_model(measured);
    knary::fit_result const fit_paper = knary::fit_model(estimated);
    double const nan = std::numeric_limits<double>::quiet_NaN();

    table t({"n:k:r", "T1/Tinf", "P", "round", "T s", "PA", "PA(cycler)", "CPUs-PA(c)", "util", "util (paper PA)",
             "model s", "error"});
    for (std::size_t i = 0; i < results.size(); ++i) {
        auto const& r = results[i];
        double const par = r.ws.t1_s / r.ws.tinf_s;
        double const util = r.ws.t1_s / (std::min(double(r.workers), r.run.pa) * r.run.wall_s);
        double const util_paper = pa_paper[i] > 0 ? r.ws.t1_s / (pa_paper[i] * r.run.wall_s) : nan;
        double const model = knary::model_time(fit.c1, fit.c2, measured[i]);
        double const err = (model - r.run.wall_s) / r.run.wall_s;
        json_object rec = ctx.record();
        rec.add("n", r.s.n).add("k", r.s.k).add("r", r.s.r).add("spin", spin).add("nodes", knary::node_count(r.s));
        rec.add("sched", "ws").add("workers", r.workers).add("oversubscribed", r.workers > cpus).add("round", r.round);
        rec.add("t1_s", r.ws.t1_s).add("tinf_s", r.ws.tinf_s).add("work_s", r.ws.work_s).add("parallelism", par);
        rec.add("normalized_processes", r.workers / par);
        rec.add("t_s", double(r.run.start_ns - std::min(t_start, r.run.start_ns)) * 1e-9);
        rec.add("wall_s", r.run.wall_s).add("cpu_s", r.run.cpu_s).add("pa", r.run.pa);
        rec.add("pa_cycler", pa_cycler[i]).add("pa_cycler_counter", pa_from_counter(r.before, r.after, rate));
        rec.add("pa_paper", pa_paper[i]).add("utilization", util).add("utilization_paper", util_paper);
        rec.add("model_s", model).add("rel_error", err);
        add_provenance(rec);
        ctx.emit(rec);
        if (i > 0 && (r.s.n != results[i - 1].s.n || r.s.k != results[i - 1].s.k || r.s.r != results[i - 1].s.r))
            t.add_separator();
        t.add_row({knary::shape_name(r.s), fmt_sig(par), std::to_string(r.workers) + (r.workers > cpus ? "*" : ""),
                   std::to_string(r.round), fmt(r.run.wall_s, 4), fmt(r.run.pa, 2), fmt(pa_cycler[i], 2),
                   fmt(pa_paper[i], 2), fmt(util, 2), std::isnan(util_paper) ? "-" : fmt(util_paper, 2),
                   fmt(model, 4), fmt_pct(err)});
    }

    // PA(cycler) per interval of the log.
    std::vector<double> per_interval;
    for (std::size_t i = 1; i < log.size(); ++i) {
        json_object rec = ctx.record();
        double const pac = pa_from_cpu(log[i - 1].at, log[i].at);
        per_interval.push_back(pac);
        rec.add("interval", true).add("t_s", double(log[i - 1].at.t_ns - t_start) * 1e-9);
        rec.add("length_s", double(log[i].at.t_ns - log[i - 1].at.t_ns) * 1e-9);
        rec.add("pa_cycler", pac).add("pa_cycler_counter", pa_from_counter(log[i - 1].at, log[i].at, rate));
        rec.add("processes", log[i].running);
        ctx.emit(rec);
    }
    double const pa_cycler_mean = log.size() >= 2 ? pa_from_cpu(log.front().at, log.back().at) : 0.0;

    json_object rec = ctx.record();
    rec.add("fit", true).add("c1", fit.c1).add("c2", fit.c2).add("max_rel_error", fit.max_rel_error);
    rec.add("rms_rel_error", fit.rms_rel_error).add("points", fit.points);
    rec.add("c1_paper_pa", fit_paper.c1).add("c2_paper_pa", fit_paper.c2);
    rec.add("max_rel_error_paper_pa", fit_paper.max_rel_error).add("rms_rel_error_paper_pa", fit_paper.rms_rel_error);
    rec.add("method", "least squares on relative error, c1 and c2 >= 0");
    rec.add("t1_from", "CPU time of the run on 1 worker, cycler idle");
    rec.add("tinf_from", "span measured by the runtime on 1 worker, cycler idle");
    rec.add("pa_from", "process CPU time / wall time of the run");
    rec.add("processes_started", cycler.processes_started()).add("pa_cycler_mean", pa_cycler_mean);
    rec.add("increments_per_cpu_s", rate * 1e9).add("intervals", per_interval.size());
    rec.add("cycler_max", cs.max_processes).add("cycler_min_ms", cs.min_ms).add("cycler_max_ms", cs.max_ms);
    rec.add("interval_ms", cs.interval_ms).add("seed", static_cast<unsigned long long>(cs.seed));
    rec.add("sched", "ws").add("spin", spin).add("rounds", rounds);
    add_provenance(rec);
    if (!warnings.empty()) rec.add("warnings", warnings);
    ctx.emit(rec);

    ctx.print(t, "cycler: knary beside the cycler, every run (* oversubscribed): PA measured, PA(cycler) over the "
                 "run, the paper's min(CPUs - PA(cycler), P) (Arora, Blumofe & Plaxton, Figure 27)");
    summary const iv = summarize(per_interval);
    ctx.say("cycler: %llu processes started; PA(cycler) over the whole run %.2f; per %.0f ms interval: median %.2f, "
            "p10 %.2f, p90 %.2f (%zu intervals: the JSON rows with \"interval\")\n",
            static_cast<unsigned long long>(cycler.processes_started()), pa_cycler_mean, cs.interval_ms, iv.median,
            iv.p10, iv.p90, per_interval.size());
    ctx.say("model: T = c1*T1/PA + c2*Tinf*P/PA by least squares on relative error over %zu runs:\n"
            "  measured PA:           c1 = %.3f, c2 = %.3f; worst relative error %s, rms %s\n"
            "  min(CPUs-PA(cyc), P):  c1 = %.3f, c2 = %.3f; worst relative error %s, rms %s\n",
            fit.points, fit.c1, fit.c2, fmt_pct(fit.max_rel_error).c_str(), fmt_pct(fit.rms_rel_error).c_str(),
            fit_paper.c1, fit_paper.c2, fmt_pct(fit_paper.max_rel_error).c_str(),
            fmt_pct(fit_paper.rms_rel_error).c_str());
    for (auto const& w : warnings) ctx.warn("%s", w.c_str());
    return 0;
}

registrar const reg{experiment{
    .name = "cycler",
    .description = "knary beside Arora, Blumofe & Plaxton's cycler (a load of random size): PA, utilization, model",
    .details = "The cycler: repeatedly a random number (0..--cycler-max) of forked processes, each running a random\n"
               "time in [--cycler-min-ms, --cycler-max-ms] incrementing a counter; its log gives its processor\n"
               "average PA(cycler) per --interval-ms. Beside it, knary runs on each input and P (a fresh ws runtime\n"
               "per P); each run reports its time T, its processor average PA (process CPU time / T), PA(cycler)\n"
               "over the run, and the paper's min(CPUs - PA(cycler), P). T1 and Tinf are measured on 1 worker\n"
               "before the cycler starts. The model T = c1*T1/PA + c2*Tinf*P/PA is fitted with either PA.\n"
               "P above the CPU count is oversubscribed. See docs/bench.md.",
    .options = {knary::opt_inputs("6:9:0,6:9:2,6:9:4,6:9:6,6:9:8"), knary::opt_worker_list("1,2,3,4,6,8,12,16"),
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
                 .help = "seed of the cycler's random numbers", .min = 0, .max = 1e18}},
    .run = run,
    .in_demo = true,
    .demo_args = {"--inputs", "5:9:0,5:9:4,5:9:8", "--workers", "1,2,4,8", "--spin", "2000", "--rounds", "2"},
    .demo_order = 41,
}};

}  // namespace
}  // namespace weft::bench::cycler
