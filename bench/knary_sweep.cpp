// The sweeps of weft-bench knary and cycler and the judging of their model
// (knary_sweep.hpp).
#include "knary_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace weft::bench::knary {

std::vector<work_span> measure_spans(context& ctx, std::string const& set, std::vector<workload> const& programs,
                                     int rounds, std::size_t& step, std::size_t steps) {
    std::vector<work_span> out;
    for (auto const& w : programs) {
        ctx.progress("[%zu/%zu] %s sweep, %s: T1 and Tinf on 1 worker", ++step, steps, set.c_str(), w.name.c_str());
        out.push_back(measure_work_span(w, rounds));
    }
    return out;
}

std::vector<sweep_row> timed_sweep(context& ctx, std::string const& set, std::vector<workload> const& programs,
                                   std::vector<shape> const& shapes, std::vector<work_span> const& spans,
                                   std::vector<int> const& workers, int rounds, bool median_only,
                                   run_hook const& hook, std::size_t& step, std::size_t steps) {
    std::vector<sweep_row> rows;
    for (std::size_t i = 0; i < programs.size(); ++i)
        for (int p : workers) {
            ctx.progress("[%zu/%zu] %s sweep, %s on %d worker%s", ++step, steps, set.c_str(), programs[i].name.c_str(),
                         p, p == 1 ? "" : "s");
            std::vector<timed_run> const runs = timed_runs(programs[i], p, rounds, hook);
            sweep_row row{set, programs[i].name, i < shapes.size() ? shapes[i] : shape{}, spans[i], p, -1, {}, {}, 0};
            if (median_only) {
                std::vector<double> walls;
                for (auto const& r : runs) walls.push_back(r.wall_s);
                row.run = runs[median_run(runs)];
                row.wall = summarize(walls);
                rows.push_back(row);
            } else {
                for (std::size_t r = 0; r < runs.size(); ++r) {
                    row.round = int(r);
                    row.run = runs[r];
                    rows.push_back(row);
                }
            }
        }
    return rows;
}

namespace {

point paper_point(sweep_row const& r, int cpus) {
    return {r.ws.t1_s, r.ws.tinf_s, double(r.workers), paper_pa(cpus, r.workers, r.pa_other), r.run.wall_s};
}
point cpu_point(sweep_row const& r) {
    return {r.ws.t1_s, r.ws.tinf_s, double(r.workers), r.run.pa_cpu, r.run.wall_s};
}

std::string run_name(sweep_row const& r) {
    return r.program + " on " + std::to_string(r.workers) + " worker" + (r.workers == 1 ? "" : "s");
}

}  // namespace

judged report(context& ctx, std::vector<sweep_row> const& rows, int cpus, std::string const& title,
              std::function<void(json_object&, sweep_row const&)> const& extra) {
    // The three forms: the paper's (judged), the CPU-time PA, weft's.
    struct form {
        char const* pa;
        char const* model;
        std::function<point(sweep_row const&)> make;
        fit_result fit;
        std::map<std::string, judgement> by_set;
    };
    std::vector<form> forms{{"paper", "abp", [&](sweep_row const& r) { return paper_point(r, cpus); }, {}, {}},
                            {"cpu", "abp", [](sweep_row const& r) { return cpu_point(r); }, {}, {}},
                            {"paper", "brent", [&](sweep_row const& r) { return brent_point(paper_point(r, cpus)); },
                             {}, {}}};
    std::vector<std::string> const set_names{"fit", "held_out", "apps"};
    std::map<std::string, std::vector<std::size_t>> set_rows;  // each set's rows, in order
    for (std::size_t i = 0; i < rows.size(); ++i) set_rows[rows[i].set].push_back(i);
    for (form& f : forms) {
        auto points_of = [&](std::string const& set) {
            std::vector<point> pts;
            for (std::size_t i : set_rows[set]) pts.push_back(f.make(rows[i]));
            return pts;
        };
        f.fit = fit_model(points_of("fit"));
        for (auto const& set : set_names) f.by_set[set] = judge(f.fit.c1, f.fit.c2, points_of(set));
    }
    bool const beside = static_cast<bool>(extra);  // only the cycler adds fields
    bool const medians = !rows.empty() && rows.front().round < 0;

    std::vector<std::string> head{"sweep", "program", "T1/Tinf", "P", medians ? "T s" : "round",
                                  medians ? "spread" : "T s"};
    if (beside) head.push_back("PA(cyc)");
    for (char const* h : {"PA", "P/(T1/Tinf)", "util", "model s", "error", "PA cpu", "error cpu", "error weft"})
        head.push_back(h);
    table t(head, "ll");
    for (std::size_t i = 0; i < rows.size(); ++i) {
        auto const& r = rows[i];
        point const pp = paper_point(r, cpus);
        double const par = r.ws.t1_s / r.ws.tinf_s;
        double const util = pp.pa > 0 ? r.ws.t1_s / (pp.pa * r.run.wall_s) : 0.0;
        double model[3], err[3];
        for (std::size_t f = 0; f < forms.size(); ++f) {
            point const fp = forms[f].make(r);
            model[f] = fp.pa > 0 ? model_time(forms[f].fit.c1, forms[f].fit.c2, fp) : 0.0;
            err[f] = fp.pa > 0 ? (model[f] - r.run.wall_s) / r.run.wall_s : 0.0;
        }
        json_object rec = ctx.record();
        rec.add("sweep", r.set).add("program", r.program);
        if (r.set != "apps") rec.add("n", r.s.n).add("k", r.s.k).add("r", r.s.r).add("nodes", node_count(r.s));
        rec.add("sched", "ws").add("workers", r.workers).add("oversubscribed", r.workers > cpus);
        if (r.round >= 0) rec.add("round", r.round);
        rec.add_summary("t1_s", r.ws.t1).add_summary("tinf_s", r.ws.tinf).add_summary("work_s", r.ws.work);
        rec.add("parallelism", par).add("normalized_processes", r.workers / par);
        rec.add("wall_s", r.run.wall_s);
        if (r.round < 0)
            rec.add("wall_s_spread", r.wall.spread).add("wall_s_min", r.wall.min).add("wall_s_max", r.wall.max);
        rec.add("cpu_s", r.run.cpu_s).add("pa", pp.pa).add("pa_cpu", r.run.pa_cpu);
        rec.add("utilization", util).add("utilization_cpu", r.ws.t1_s / r.run.cpu_s);
        rec.add("model_s", model[0]).add("rel_error", err[0]).add("model_s_cpu", model[1]).add("rel_error_cpu", err[1]);
        rec.add("model_s_brent", model[2]).add("rel_error_brent", err[2]);
        if (extra) extra(rec, r);
        add_provenance(rec);
        ctx.emit(rec);
        if (i > 0 && (r.program != rows[i - 1].program || r.set != rows[i - 1].set)) t.add_separator();
        std::vector<std::string> cells{r.set, r.program, fmt_sig(par),
                                       std::to_string(r.workers) + (r.workers > cpus ? "*" : "")};
        if (medians) {
            cells.push_back(fmt(r.run.wall_s, 4));
            cells.push_back(fmt_pct(r.wall.spread));
        } else {
            cells.push_back(std::to_string(r.round));
            cells.push_back(fmt(r.run.wall_s, 4));
        }
        if (beside) cells.push_back(fmt(r.pa_other, 2));
        for (std::string const& c : {fmt(pp.pa, 2), fmt_sig(r.workers / par), fmt(util, 2), fmt(model[0], 4),
                                     fmt_pct(err[0]), fmt(r.run.pa_cpu, 2), fmt_pct(err[1]), fmt_pct(err[2])})
            cells.push_back(c);
        t.add_row(cells);
    }

    // One summary row per form and set judged.
    for (form const& f : forms)
        for (auto const& set : set_names) {
            judgement const& jd = f.by_set.at(set);
            if (jd.points == 0) continue;
            json_object rec = ctx.record();
            rec.add("summary", "fit").add("pa", f.pa).add("model", f.model).add("set", set);
            rec.add("held_out", set != "fit").add("c1", f.fit.c1).add("c2", f.fit.c2);
            rec.add("worst_rel_err", jd.max_rel_error).add("median_rel_err", jd.median_rel_error);
            rec.add("rms_rel_err", jd.rms_rel_error).add("points", jd.points);
            auto const& w = rows[set_rows[set][jd.worst]];
            rec.add("worst_program", w.program).add("worst_workers", w.workers);
            rec.add("target_worst_rel_err", target_max_rel_error);
            rec.add("within_target", jd.max_rel_error <= target_max_rel_error).add("fitted_on", "fit");
            rec.add("method", "least squares on relative error, c1 and c2 >= 0");
            add_provenance(rec);
            ctx.emit(rec);
        }

    ctx.print(t, title);
    char const* const labels[] = {
        beside ? "model T = c1*T1/PA + c2*Tinf*P/PA, PA = min(CPUs - PA(cycler), P) (the paper's; judged):"
               : "model T = c1*T1/PA + c2*Tinf*P/PA, PA = min(CPUs, P) (the paper's; judged):",
        "the same with PA = the run's CPU time / T (\"pa\":\"cpu\"; T cancels in the first term):",
        "weft's form T = c1*(T1 - Tinf)/PA + c2*Tinf, the paper's PA (\"model\":\"brent\"; idle workers park):"};
    for (std::size_t i = 0; i < forms.size(); ++i) {
        form const& f = forms[i];
        judgement const& held = f.by_set.at("held_out");
        judgement const& apps = f.by_set.at("apps");
        ctx.say("%s\n  fitted on the fit sweep (%zu runs): c1 = %.3f, c2 = %.3f; there: worst %s, median %s\n", labels[i],
                f.fit.points, f.fit.c1, f.fit.c2, fmt_pct(f.fit.max_rel_error).c_str(),
                fmt_pct(f.fit.median_rel_error).c_str());
        std::string const target = " (target: worst <= " + fmt_pct(target_max_rel_error) + ")" +
                                   (held.max_rel_error <= target_max_rel_error ? "" : " [MISSED]");
        if (held.points > 0)
            ctx.say("  held-out sweep (%zu runs): worst %s (%s), median %s%s\n", held.points,
                    fmt_pct(held.max_rel_error).c_str(), run_name(rows[set_rows["held_out"][held.worst]]).c_str(),
                    fmt_pct(held.median_rel_error).c_str(), i == 0 ? target.c_str() : "");
        if (apps.points > 0)
            ctx.say("  lu and heat, with knary's c1, c2 (%zu runs): worst %s (%s), median %s\n", apps.points,
                    fmt_pct(apps.max_rel_error).c_str(), run_name(rows[set_rows["apps"][apps.worst]]).c_str(),
                    fmt_pct(apps.median_rel_error).c_str());
    }
    judged j;
    j.fit = forms[0].fit;
    j.held_out = forms[0].by_set.at("held_out");
    j.apps = forms[0].by_set.at("apps");
    return j;
}

}  // namespace weft::bench::knary
