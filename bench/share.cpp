// weft-bench share: several weft programs on one machine share its cores.
//
// Arora, Blumofe & Plaxton ("Thread scheduling for multiprogrammed
// multiprocessors") and Severance & Enbody ("Automatic self-allocating threads
// (ASAT) on an SGI Challenge") study a parallel program that shares the
// machine with other jobs: it should use what is free and give back what the
// others need, so that the jobs together run about one active thread per
// processor. weft's adaptive worker count (WEFT_ADAPT) and the machine-wide
// core budget in shared memory do that between weft processes; this
// experiment measures it from outside, with the runtime's own figure of how
// many workers run threads (weft_stats_t.active_workers).
//
// Every process is a child of this executable (`--share-child`): a weft
// program whose environment sets WEFT_WORKERS (2 by default) and WEFT_ADAPT
// (unset: the runtime's default, which adapts; or "off"), running one of two
// programs (--programs) until a common start time plus --seconds: "tree", a
// steady stream of checked work units (a fork/join tree of fine-grain
// threads), or "loop", Severance & Enbody's time-step loop (a parallel loop
// per step that waits for every worker), where running more workers than the
// CPUs left costs the program. It prints to a pipe every --interval-ms its
// time, the units done and active_workers. Everything runs confined to --cpus
// CPUs (2). Per round and program the runs are: per WEFT_ADAPT setting one
// process alone (the reference); for each P of --processes the partitioned
// run, P processes of cpus/P workers each with WEFT_ADAPT=off (the machine's
// ceiling for P); then per setting P processes started together, and the kill
// runs, P processes of which the first is SIGKILLed --kill-after seconds in,
// the survivors running --watch seconds more. Figures: throughput_ratio (all
// processes' units per second over one process's alone: the faster of the
// round's alone runs of the program, one per setting),
// throughput_vs_partitioned (over the partitioned run of as many), min_share
// (the smallest process's fraction of all units), recovery_s (from the kill
// until the survivors together do 0.9 of the ceiling for their number, one
// alone or partitioned: judged by throughput, not by the worker counts they
// report) and
// budget_recovery_s (until the core budget counts the killed process out);
// medians over rounds, with the spread; and a target row per figure, program
// and setting, with one per program saying whether WEFT_ADAPT=off misses a
// target the default meets.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <weft/weft.h>

#include "harness.hpp"
#include "share.hpp"

namespace weft::bench::share {
namespace {

// The targets: P = 2 processes together keep this much of one process's
// throughput alone; each gets at least this fraction of the units (within 15%
// of half); after a kill the survivors hold their share again within this time.
// Against the round's partitioned run (the same P processes, each with its
// fixed part of the CPUs and WEFT_ADAPT=off: the best a static split of the
// machine does), they keep at least 1/1.10 of its throughput, the bound of
// asat's targets (within 1.10x the ideal). The partitioned run is the
// machine's ceiling where one process alone is not: the loop runs faster than
// linearly on two workers (its arrays fit the two CPUs' caches together), so
// P processes sharing the CPUs cannot keep one's throughput alone.
constexpr double target_throughput_ratio = 0.95;
constexpr double target_vs_partitioned = 1 / 1.10;
constexpr double target_min_share = 0.425;
constexpr double target_recovery_s = 2.0;
constexpr int target_processes = 2;

// --- the experiment -------------------------------------------------------------------

// One (setting, kind of run, P) of the table and the JSON, over the rounds.
struct cell {
    std::string program;  // "tree", "loop"
    bool adapt;
    std::string run;  // "alone", "partitioned", "together", "kill"
    int processes;
    int workers;  // WEFT_WORKERS of each process
    // alone, partitioned, together; throughput_ratio against the round's
    // faster alone run (both settings), throughput_ratio_own against this
    // setting's, vs_partitioned against the round's partitioned run of as many
    // processes (together)
    std::vector<double> units_per_s{}, throughput_ratio{}, throughput_ratio_own{}, vs_partitioned{}, min_share{},
        active_total{};
    std::vector<double> recovery_s{}, survivor_ratio{}, budget_recovery_s{};             // kill
    int rounds = 0, recovered_rounds = 0, budget_recovered_rounds = 0;
    std::string survivor_reference{};  // kill: "alone" or "partitioned", what the survivors are judged against
    bool budget = false;
    std::vector<int> last_shares{}, last_budget_shares{};
    run_log last{};  // the last round's run, for the trace
};

std::string adapt_name(bool adapt) { return adapt ? "unset" : "off"; }

int run(context& ctx) {
    auto const& o = ctx.opts();
    std::string const command = "weft-bench share";
    bool const quick = o.flag("quick");
    auto num = [&](char const* name, double quick_value) {
        return quick && !o.given(name) ? quick_value : o.number(name);
    };
    settings s;
    s.seconds = num("seconds", 0.8);
    s.kill_after = num("kill-after", 0.5);
    s.watch = num("watch", 2.2);
    s.settle = num("settle", 0.2);
    s.interval_ms = static_cast<long>(o.integer("interval-ms"));
    s.workers = static_cast<int>(o.integer("workers"));
    if (o.flag("share-child")) {
        if (!o.given("start-at-ns")) throw usage_error(command + ": --share-child needs --start-at-ns");
        std::vector<std::string> const adapt = o.list("adapt");
        if (adapt.size() != 1) throw usage_error(command + ": --share-child takes one --adapt setting");
        // weft-bench's main() set WEFT_ADAPT=off where it was unset; the
        // default setting is the runtime's own default, so the child takes
        // the variable away again before its runtime reads it.
        if (adapt.front() == "default" ? unsetenv("WEFT_ADAPT") != 0 : setenv("WEFT_ADAPT", "off", 1) != 0)
            die("share child: setting WEFT_ADAPT: %s", std::strerror(errno));
        std::vector<std::string> const programs = o.list("programs");
        if (programs.size() != 1) throw usage_error(command + ": --share-child takes one --programs name");
        return run_child(programs.front(), o.integer("start-at-ns"), s.seconds, s.interval_ms);
    }
    int const rounds = quick && !o.given("rounds") ? 1 : static_cast<int>(o.integer("rounds"));
    if (s.settle >= s.seconds)
        throw usage_error(command + ": --settle " + fmt(s.settle, 2) + " must be below --seconds " +
                          fmt(s.seconds, 2) + " (the throughput is measured from --settle to the run's end)");
    if (s.interval_ms * 1e-3 * 4 > s.watch)
        throw usage_error(command + ": --watch " + fmt(s.watch, 2) + " must hold at least 4 intervals of --interval-ms " +
                          std::to_string(s.interval_ms));
    std::vector<int> counts;
    for (std::string const& item : quick && !o.given("processes") ? std::vector<std::string>{"2"} : o.list("processes")) {
        char* end = nullptr;
        long const v = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || v < 2 || v > 16)
            throw usage_error(command + ": --processes expects counts in [2, 16], got '" + item + "'");
        if (std::find(counts.begin(), counts.end(), static_cast<int>(v)) == counts.end())
            counts.push_back(static_cast<int>(v));
    }
    std::vector<bool> modes;
    for (std::string const& m : o.list("adapt"))
        if (std::find(modes.begin(), modes.end(), m == "default") == modes.end()) modes.push_back(m == "default");

    std::vector<std::string> warnings;
    int const machine_cpus = static_cast<int>(allowed_cpus().size());
    if (double load = 0; getloadavg(&load, 1) == 1 && load > machine_cpus + 0.5) {
        warnings.push_back("the 1-minute load average was " + fmt(load, 1) + " on " + std::to_string(machine_cpus) +
                           " CPUs at the start: other programs took CPU time, so one process alone got less than "
                           "its CPUs, several together claim more of the machine (throughput_ratio above 1), and "
                           "an adapting runtime also gives workers back to the other programs");
        ctx.warn("%s", warnings.back().c_str());
    }
    s.cpus = confine_to_cpus(static_cast<int>(o.integer("cpus")));
    if (s.cpus < o.integer("cpus"))
        ctx.warn("only %d CPU%s available: --cpus %lld asks for more", s.cpus, s.cpus == 1 ? "" : "s",
                 o.integer("cpus"));
    s.exe = self_exe();
    if (s.exe.empty()) die("cannot find this executable through /proc/self/exe (needed for the worker processes)");

    // The cells in the order of the table: per program, the partitioned run of
    // each P (P processes of cpus/P workers each, at least one, WEFT_ADAPT=off);
    // then per setting, alone, then together and kill for each P.
    std::vector<std::string> const programs =
        quick && !o.given("programs") ? std::vector<std::string>{"loop"} : o.list("programs");
    std::vector<cell> cells;
    for (std::string const& prog : programs) {
        for (int n : counts)
            cells.push_back({.program = prog, .adapt = false, .run = "partitioned", .processes = n,
                             .workers = std::max(1, s.cpus / n)});
        for (bool a : modes) {
            cells.push_back({.program = prog, .adapt = a, .run = "alone", .processes = 1, .workers = s.workers});
            for (int n : counts)
                cells.push_back({.program = prog, .adapt = a, .run = "together", .processes = n, .workers = s.workers});
            for (int n : counts)
                cells.push_back({.program = prog, .adapt = a, .run = "kill", .processes = n, .workers = s.workers});
        }
    }
    ctx.say("processes of WEFT_WORKERS=%d on %d CPU%s; runs of %.2f s (kill runs: a kill at %.2f s, then %.2f s); "
            "%d round(s)%s\n",
            s.workers, s.cpus, s.cpus == 1 ? "" : "s", s.seconds, s.kill_after, s.watch, rounds,
            build_warning().empty() ? "" : (" [" + build_warning() + "]").c_str());
    std::string sched;
    double latest_ready = -1;
    // One run of cell c, its figures against `reference` (units per second of
    // one process alone), `own` (its own setting's alone run) and
    // `partitioned` (units per second of the round's partitioned run of as
    // many processes; 0: none).
    auto run_cell = [&](cell& c, int r, double reference, double own, double partitioned) {
        ctx.progress("round %d/%d, %s, WEFT_ADAPT %s, %s, %d process%s", r + 1, rounds, c.program.c_str(),
                     adapt_name(c.adapt).c_str(), c.run.c_str(), c.processes, c.processes == 1 ? "" : "es");
        run_log log = run_processes(s, c.program, c.processes, c.adapt, c.run == "kill", c.workers);
        for (proc_log const& p : log.procs) {
            latest_ready = std::max(latest_ready, p.ready_s);
            if (!p.sched.empty()) sched = p.sched;
        }
        std::vector<proc_log const*> all;
        for (proc_log const& p : log.procs) all.push_back(&p);
        ++c.rounds;
        double units_per_s = 0;
        if (c.run == "kill") {
            kill_figures const k = after_kill(log, s.settle, s.interval_ms * 1e-3, reference);
            if (k.recovered) c.recovery_s.push_back(k.recovery_s), ++c.recovered_rounds;
            c.survivor_ratio.push_back(reference > 0 ? k.survivors_units_per_s / reference : 0);
            c.last_shares = k.shares;
            c.budget = c.budget || k.budget;
            if (k.budget_recovered) c.budget_recovery_s.push_back(k.budget_recovery_s), ++c.budget_recovered_rounds;
            c.last_budget_shares = k.budget_shares;
        } else {
            window_figures const f = over_window(all, s.settle, s.seconds);
            units_per_s = f.units_per_s;
            c.units_per_s.push_back(f.units_per_s);
            if (c.run == "together") {
                c.throughput_ratio.push_back(reference > 0 ? f.units_per_s / reference : 0);
                c.throughput_ratio_own.push_back(own > 0 ? f.units_per_s / own : 0);
                if (partitioned > 0) c.vs_partitioned.push_back(f.units_per_s / partitioned);
            }
            c.min_share.push_back(f.min_share);
            c.active_total.push_back(f.active_total);
        }
        c.last = std::move(log);
        return units_per_s;
    };
    for (int r = 0; r < rounds; ++r) {
        for (std::string const& prog : programs) {
            // First each setting's process alone, then the others; the
            // settings take turns going first. The reference of every ratio
            // is the faster of the alone runs: what one process gets from
            // the CPUs this round, so that a setting whose lone process is
            // slow (fixed workers on a loaded machine) is not excused by it.
            std::map<bool, double> alone;
            for (std::size_t k = 0; k < modes.size(); ++k) {
                bool const adapt = modes[(k + static_cast<std::size_t>(r)) % modes.size()];
                for (cell& c : cells)
                    if (c.program == prog && c.adapt == adapt && c.run == "alone")
                        alone[adapt] = run_cell(c, r, 0, 0, 0);
            }
            // Then the machine's ceiling for P processes, the partitioned runs.
            std::map<int, double> partitioned;
            for (cell& c : cells)
                if (c.program == prog && c.run == "partitioned") partitioned[c.processes] = run_cell(c, r, 0, 0, 0);
            double reference = 0;
            for (auto const& [a, u] : alone) reference = std::max(reference, u);
            for (cell& c : cells)
                if (c.program == prog && (c.run == "alone" || c.run == "partitioned"))
                    c.throughput_ratio.push_back(reference > 0 ? c.units_per_s.back() / reference : 0);
            for (std::size_t k = 0; k < modes.size(); ++k) {
                bool const adapt = modes[(k + static_cast<std::size_t>(r)) % modes.size()];
                for (cell& c : cells) {
                    if (c.program != prog || c.adapt != adapt) continue;
                    if (c.run == "together") run_cell(c, r, reference, alone[adapt], partitioned[c.processes]);
                    // The survivors of a kill are judged against the ceiling
                    // for their own number: one alone, or the round's
                    // partitioned run of as many when there is one.
                    if (c.run == "kill") {
                        auto const p = partitioned.find(c.processes - 1);
                        bool const by_partitioned = c.processes > 2 && p != partitioned.end();
                        c.survivor_reference = by_partitioned ? "partitioned" : "alone";
                        run_cell(c, r, by_partitioned ? p->second : reference, alone[adapt], 0);
                    }
                }
            }
        }
    }
    if (latest_ready > 0) {
        char text[200];
        std::snprintf(text, sizeof text,
                      "a process was ready %.3f s after the common start (it was started %.2f s before it): the "
                      "machine is busy, and the runs did not all start together",
                      latest_ready, start_lead_s);
        warnings.push_back(text);
        ctx.warn("%s", text);
    }

    auto base = [&](cell const& c) {
        json_object rec = ctx.record();
        rec.add("scenario", c.program).add("run", c.run).add("processes", c.processes).add("adapt", c.adapt);
        rec.add("weft_adapt", adapt_name(c.adapt)).add("workers", c.workers).add("run_cpus", s.cpus);
        rec.add("sched", sched);
        return rec;
    };
    auto finish = [&](json_object& rec) {
        rec.add("seconds", s.seconds).add("kill_after_s", s.kill_after).add("watch_s", s.watch);
        rec.add("settle_s", s.settle).add("interval_ms", s.interval_ms).add("rounds", rounds);
        if (!warnings.empty()) rec.add("warnings", warnings);
        add_provenance(rec);
        ctx.emit(rec);
    };
    table t({"program", "WEFT_ADAPT", "run", "processes", "units/s", "vs alone", "vs partitioned", "min share", "active",
             "recovery s", "survivors' workers", "budget s (shares)"});
    for (std::size_t i = 0; i < cells.size(); ++i) {
        cell const& c = cells[i];
        if (i > 0 && (c.adapt != cells[i - 1].adapt || c.program != cells[i - 1].program)) t.add_separator();
        json_object rec = base(c);
        if (c.run == "kill") {
            rec.add("killed", 1).add("survivors", c.processes - 1).add("survivor_reference", c.survivor_reference);
            std::string shares;
            for (std::size_t j = 0; j < c.last_shares.size(); ++j)
                shares += (j ? "," : "") + std::to_string(c.last_shares[j]);
            rec.add_raw("survivor_active_workers", "[" + shares + "]");
            if (c.recovery_s.empty()) rec.add_null("recovery_s");
            else rec.add_summary("recovery_s", summarize(c.recovery_s));
            rec.add("recovered_rounds", c.recovered_rounds);
            rec.add_summary("survivor_throughput_ratio", summarize(c.survivor_ratio));
            rec.add("budget", c.budget);
            std::string budget_text = "-";
            if (c.budget) {
                std::string bshares;
                for (std::size_t j = 0; j < c.last_budget_shares.size(); ++j)
                    bshares += (j ? "," : "") + std::to_string(c.last_budget_shares[j]);
                rec.add_raw("survivor_budget_share", "[" + bshares + "]");
                if (c.budget_recovery_s.empty()) rec.add_null("budget_recovery_s");
                else rec.add_summary("budget_recovery_s", summarize(c.budget_recovery_s));
                rec.add("budget_recovered_rounds", c.budget_recovered_rounds);
                budget_text = c.budget_recovery_s.empty() ? "never" : fmt(summarize(c.budget_recovery_s).median, 2);
                if (c.budget_recovered_rounds < c.rounds)
                    budget_text += " (" + std::to_string(c.budget_recovered_rounds) + "/" + std::to_string(c.rounds) + ")";
                budget_text += " (" + bshares + ")";
            }
            std::string rec_text = c.recovery_s.empty() ? "never" : fmt(summarize(c.recovery_s).median, 2);
            if (c.recovered_rounds < c.rounds)
                rec_text += " (" + std::to_string(c.recovered_rounds) + "/" + std::to_string(c.rounds) + ")";
            std::string const vs = fmt(summarize(c.survivor_ratio).median, 2) + " after";
            t.add_row({c.program, adapt_name(c.adapt), "kill 1 of", std::to_string(c.processes), "-", vs, "-", "-", "-",
                       rec_text, shares, budget_text});
        } else {
            summary const u = summarize(c.units_per_s), tr = summarize(c.throughput_ratio);
            summary const ms = summarize(c.min_share), act = summarize(c.active_total);
            rec.add_summary("units_per_s", u).add_summary("throughput_ratio", tr);
            if (!c.throughput_ratio_own.empty())
                rec.add_summary("throughput_ratio_own", summarize(c.throughput_ratio_own));
            std::string vp = "-";
            if (!c.vs_partitioned.empty()) {
                summary const p = summarize(c.vs_partitioned);
                rec.add_summary("throughput_vs_partitioned", p);
                vp = fmt(p.median, 3) + " ±" + fmt_pct(p.spread);
            }
            rec.add_summary("min_share", ms).add_summary("active_workers_total", act);
            t.add_row({c.program, adapt_name(c.adapt), c.run, std::to_string(c.processes), fmt_sig(u.median),
                       fmt(tr.median, 3) + " ±" + fmt_pct(tr.spread), vp, fmt(ms.median, 3), fmt(act.median, 2), "-",
                       "-", "-"});
        }
        finish(rec);
    }
    // The last round's kill runs, sample by sample: t, units, active workers,
    // budget share and members per process.
    for (cell const& c : cells) {
        if (c.run != "kill") continue;
        json_object rec = base(c);
        rec.add("trace", true).add("kill_s", c.last.kill_s);
        // One JSON array per process of `field` of its samples, in an array.
        auto arrays = [&](auto field) {
            std::string out = "[";
            for (std::size_t i = 0; i < c.last.procs.size(); ++i) {
                out += i ? ",[" : "[";
                std::vector<sample> const& xs = c.last.procs[i].samples;
                for (std::size_t j = 0; j < xs.size(); ++j) {
                    if (j) out += ',';
                    out += json_number(field(xs[j]));
                }
                out += ']';
            }
            return out + "]";
        };
        std::string const t_s = arrays([](sample const& x) { return x.t_s; });
        std::string const units = arrays([](sample const& x) { return x.units; });
        std::string const active = arrays([](sample const& x) { return static_cast<double>(x.active); });
        rec.add_raw("t_s", t_s).add_raw("units", units).add_raw("active_workers", active);
        rec.add_raw("budget_share", arrays([](sample const& x) { return static_cast<double>(x.share); }));
        rec.add_raw("budget_members", arrays([](sample const& x) { return static_cast<double>(x.members); }));
        finish(rec);
    }
    ctx.print(t, "share: weft processes of WEFT_WORKERS=" + std::to_string(s.workers) + " on " +
                     std::to_string(s.cpus) + " CPUs; medians over rounds (vs alone: over the faster of the round's alone runs, both settings)");

    // The targets, per program and setting, a row each ({"target": NAME,
    // "value", "bound", "met"}): P = 2 together keep their throughput and
    // split it evenly; after every kill the survivors' throughput recovers.
    // Then, per program, whether some target that the default setting meets
    // WEFT_ADAPT=off misses: the experiment can tell adaptation from none.
    for (std::string const& prog : programs) {
        std::map<std::string, bool> met_by[2];  // [adapt]: target name -> met
        for (bool a : modes) {
            cell const* together = nullptr;
            double recovery = 0;
            bool all_recovered = true, any_kill = false;
            for (cell const& c : cells) {
                if (c.adapt != a || c.program != prog) continue;
                if (c.run == "together" && c.processes == target_processes) together = &c;
                if (c.run == "kill") {
                    any_kill = true;
                    all_recovered = all_recovered && c.recovered_rounds == c.rounds;
                    if (!c.recovery_s.empty()) recovery = std::max(recovery, summarize(c.recovery_s).median);
                }
            }
            std::string say;
            bool all_met = true;
            auto target = [&](char const* name, std::optional<double> value, double bound, bool at_least) {
                bool const met = value && (at_least ? *value >= bound : *value <= bound);
                json_object rec = ctx.record();
                rec.add("target", name).add("scenario", prog).add("adapt", a).add("weft_adapt", adapt_name(a));
                rec.add("processes", target_processes).add("run_cpus", s.cpus);
                if (value) rec.add("value", *value);
                else rec.add_null("value");
                rec.add("bound", bound).add("bound_kind", at_least ? "at_least" : "at_most").add("met", met);
                finish(rec);
                met_by[a ? 1 : 0][name] = met;
                say += std::string(say.empty() ? "" : ", ") + name + " " + (value ? fmt(*value, 3) : "never") +
                       (at_least ? " >= " : " <= ") + fmt(bound, 3) + (met ? "" : " (missed)");
                all_met = all_met && met;
            };
            if (together != nullptr) {
                target("throughput_ratio", summarize(together->throughput_ratio).median, target_throughput_ratio, true);
                if (!together->vs_partitioned.empty())
                    target("throughput_vs_partitioned", summarize(together->vs_partitioned).median,
                           target_vs_partitioned, true);
                target("min_share", summarize(together->min_share).median, target_min_share, true);
            }
            if (any_kill)
                target("recovery_s", all_recovered ? std::optional<double>(recovery) : std::nullopt, target_recovery_s,
                       false);
            if (!say.empty())
                ctx.say("target %s, WEFT_ADAPT %s: %s [%s]\n", prog.c_str(), adapt_name(a).c_str(), say.c_str(),
                        all_met ? "MET" : "MISSED");
        }
        if (met_by[0].empty() || met_by[1].empty()) continue;
        std::vector<std::string> shown;
        for (auto const& [name, met] : met_by[1])
            if (met && met_by[0].contains(name) && !met_by[0][name]) shown.push_back(name);
        json_object rec = ctx.record();
        rec.add("target", "adaptation_matters").add("scenario", prog).add("value", static_cast<int>(shown.size()));
        rec.add("bound", 1).add("bound_kind", "at_least").add("met", !shown.empty()).add("targets", shown);
        finish(rec);
        std::string names;
        for (std::string const& x : shown) names += (names.empty() ? "" : ", ") + x;
        ctx.say("target %s, adaptation matters: WEFT_ADAPT=off misses %s that the default meets [%s]\n", prog.c_str(),
                shown.empty() ? "no target" : names.c_str(), shown.empty() ? "MISSED" : "MET");
    }
    return 0;
}

registrar const reg{experiment{
    .name = "share",
    .description = "several weft processes on 2 CPUs (fork/join units and a barrier-per-step loop): throughput "
                   "against one alone, each one's share, and how fast survivors recover a killed one's throughput "
                   "(WEFT_ADAPT unset and off)",
    .details = "Each process is this executable again (--share-child), a weft program with WEFT_WORKERS=--workers\n"
               "running one of --programs: tree (checked work units, a fork/join tree of 128 fine-grain threads) or\n"
               "loop (Severance & Enbody's time-step loop, a parallel loop per step), printing, every --interval-ms,\n"
               "the units done and weft_stats_t.active_workers. All run confined to --cpus CPUs. Per round and\n"
               "program: per WEFT_ADAPT setting (unset: the runtime's default; off) one process alone; for each P of\n"
               "--processes the partitioned run (P processes of cpus/P workers each, at least 1, WEFT_ADAPT=off: the\n"
               "machine's ceiling for P); then per setting P started together, and P of which the first is\n"
               "SIGKILLed --kill-after s in (the others run --watch s more). Figures: throughput_ratio (all units per\n"
               "second, from --settle to the end, over one alone: the faster of the round's alone runs, both\n"
               "settings), throughput_vs_partitioned (over the round's partitioned run), min_share (the smallest\n"
               "process's fraction of the units), recovery_s (from the kill until the survivors together do 0.9 of\n"
               "the ceiling for their number, one alone or the partitioned run of as many, over 0.25 s),\n"
               "budget_recovery_s (until the core budget counts the killed one out); medians over rounds with the spread. Target rows per program and setting: 2\n"
               "processes >= 0.95 of one alone and >= 1/1.10 of partitioned, each >= 0.425 of the units, survivors\n"
               "recovered within 2 s; and adaptation_matters, the targets off misses that the default meets. See\n"
               "docs/bench.md.",
    .options = {{.name = "seconds", .kind = opt_kind::number, .metavar = "S", .default_value = "4",
                 .help = "length of the alone and together runs (--quick: 0.8)", .min = 0.1, .max = 3600},
                {.name = "kill-after", .kind = opt_kind::number, .metavar = "S", .default_value = "1.5",
                 .help = "kill runs: the first process is killed this long after the start (--quick: 0.5)",
                 .min = 0.05, .max = 3600},
                {.name = "watch", .kind = opt_kind::number, .metavar = "S", .default_value = "2.5",
                 .help = "kill runs: how long the survivors run after the kill (--quick: 2.2)", .min = 0.1,
                 .max = 3600},
                {.name = "settle", .kind = opt_kind::number, .metavar = "S", .default_value = "0.5",
                 .help = "throughput is counted from this long after the start (--quick: 0.2)", .min = 0,
                 .max = 3600},
                {.name = "interval-ms", .kind = opt_kind::integer, .metavar = "MS", .default_value = "50",
                 .help = "each process reports its units and active workers this often", .min = 5, .max = 10000},
                {.name = "processes", .kind = opt_kind::list, .metavar = "LIST", .default_value = "2,3",
                 .help = "process counts of the together and kill runs (each in [2, 16]; --quick: 2)"},
                {.name = "programs", .kind = opt_kind::list, .metavar = "LIST", .default_value = "tree,loop",
                 .help = "programs each process runs: tree (fork/join work units) and/or loop (Severance & Enbody's "
                         "time-step loop, a parallel loop per step; --quick: loop)",
                 .choices = {"tree", "loop"}},
                {.name = "adapt", .kind = opt_kind::list, .metavar = "LIST", .default_value = "default,off",
                 .help = "WEFT_ADAPT settings: default (unset: the runtime's default) and/or off",
                 .choices = {"default", "off"}},
                [] {
                    option_spec w = opt_workers(2);
                    w.help = "WEFT_WORKERS of each process";
                    return w;
                }(),
                {.name = "cpus", .kind = opt_kind::integer, .metavar = "N", .default_value = "2",
                 .help = "confine the runs to the first N CPUs this process may use", .min = 1, .max = 1024},
                {.name = "quick", .kind = opt_kind::flag,
                 .help = "demo size: --programs loop --processes 2 --seconds 0.8 --kill-after 0.5 --watch 2.2 --settle "
                         "0.2 --rounds 1 (options given explicitly win)"},
                {.name = "share-child", .kind = opt_kind::flag,
                 .help = "internal: be one of the worker processes (share starts itself this way)"},
                {.name = "start-at-ns", .kind = opt_kind::integer, .metavar = "NS",
                 .help = "internal (--share-child): the common start, in CLOCK_MONOTONIC nanoseconds", .min = 0,
                 .max = 9.2e18},
                opt_rounds(3)},
    .run = run,
    .in_demo = true,
    .demo_args = {"--quick"},
    .demo_order = 47,
}};

}  // namespace
}  // namespace weft::bench::share
