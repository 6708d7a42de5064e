// weft-bench pde: Felten & McNamee's PDE solver ("Improving the performance of
// message-passing applications by multithreading", §4) against their
// performance model (§5, equations (1)-(3)), in two families of rows:
//
// transport "inproc": the weft versions (apps/pde/pde_weft.hpp) on a job of P
// in-process nodes with injected latency (--latency), on --workers workers.
// The model's inputs are measured on that job in the same invocation over
// kFitSizes (8 B..2 KiB, least squares): alpha_R and beta_R from an exchange
// between a thread on node 0 and one on node 1 (both send, then both
// receive), a reported o from the same exchange with a computation between
// send and receive that covers the latency (the step less the computation),
// alpha_L and beta_L from the exchange between two threads of node 0; and in
// every round calc(n), a sweep of every node's block with no messages, the
// nodes sweeping at once (weft_calc_time), and the grain exchanges whose
// steps give the model's o per side and thread count (weft_grain_step_ns,
// overhead_at_grain). pde_model.hpp has the equations and docs/design/pde.md
// maps the paper's symbols to them.
//
// transport "raw_mpi": MPI jobs of this executable (mpiexec -n P weft-bench
// pde --mpi-child; mpi_launch.hpp) run apps/pde's MPI versions (mpi_plain,
// blocking1 in weft's blocking1's shape, handcoded). A job measures alpha,
// beta and o with the same exchanges in plain MPI between ranks 0 and 1, and
// calc(n) on itself: every rank sweeps its block with no messages, all at
// once (calc_on_job; so an oversubscribed job's time-slicing and the ranks'
// shared memory bandwidth are in it), the slowest rank's. The equations are
// the weft rows' with one thread per rank: T_b (eq. 1) for mpi_plain and
// blocking1, T_opt (eq. 3) for handcoded.
//
// transport "mpi": MPI jobs of this executable (mpiexec -n P weft-bench pde
// --mpi-child --child-transport mpi) run the weft versions over weft's mpi
// transport, one node per rank and one worker each (apps/pde
// run_distributed: the nodes find each other's ports through the naming
// service). A job measures alpha_R, beta_R and the reported o (ranks 0 and 1)
// and alpha_L and beta_L (rank 0) with the inproc rows' exchanges over weft's
// ports, calc(n) as the raw_mpi job does and, after it in every round, the
// grain exchanges between ranks 0 and 1; the equations are the inproc rows'.
//
// raw_mpi and mpi run paired: for every P, each round runs one job of each,
// one timed run of every (side, version) each, in alternating order, and
// weft's rows carry their ratio to raw MPI's same-shaped version within a
// round (run_mpi_jobs below).
//
// Every (P, side, version) is first run once and checked against the serial
// program (a result that differs stops the experiment), then timed over
// --rounds runs; time_s is the median of the slowest node's (rank's) seconds
// per sweep.
#include "pde_experiment.hpp"

#include <sys/prctl.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "apps/pde/pde.hpp"
#include "apps/pde/pde_weft.hpp"
#include "harness.hpp"
#include "mpi_launch.hpp"
#include "pde_targets.hpp"
#include "pde_weft_versions.hpp"
#include "pingpong.hpp"
#include "weft/weft.h"

namespace weft::bench::pde {

int sweeps_for(long side, double work, int max_sweeps) {
    double const s = work / (static_cast<double>(side) * static_cast<double>(side));
    return static_cast<int>(std::clamp(s, 2.0, static_cast<double>(max_sweeps)));
}

remote_points measure_remote(int rounds,
                             std::function<double(std::size_t bytes, std::uint64_t compute_ns)> const& step) {
    remote_points pts;
    for (std::size_t bytes : kFitSizes) {
        pts.latency.push_back({bytes, {}});
        pts.overhead.push_back({bytes, {}});
    }
    for (int r = 0; r < rounds; ++r)
        for (std::size_t i = 0; i < kFitSizes.size(); ++i) {
            pts.latency[i].half_rtt_ns.push_back(step(kFitSizes[i], 0));
            pts.overhead[i].half_rtt_ns.push_back(step(kFitSizes[i], kOverheadComputeNs) -
                                                  static_cast<double>(kOverheadComputeNs));
        }
    return pts;
}

void print_points(char const* name, std::vector<pingpong::point> const& pts) {
    for (auto const& p : pts)
        for (double ns : p.half_rtt_ns) std::printf("fitpoint %s %zu %.9g\n", name, p.bytes, ns);
}

double calc_on_job(int ranks, int rank, long side, int sweeps) {
    namespace app = weft::apps::pde;
    app::layout const l = app::block_layout(ranks);
    auto const g = static_cast<std::size_t>(side);
    std::size_t const gny = g * static_cast<std::size_t>(l.py);
    app::block const b = app::block_of(l, rank, g * static_cast<std::size_t>(l.px), gny);
    app::grid a(b.nx, b.ny), c(b.nx, b.ny);
    app::init_block(a, b, gny);
    app::init_block(c, b, gny);
    std::uint64_t const t0 = now_ns();
    for (int s = 0; s < sweeps; ++s) {
        app::relax_rect(a, c, 0, static_cast<long>(b.nx), 0, static_cast<long>(b.ny));
        std::swap(a, c);
    }
    std::uint64_t const t1 = now_ns();
    keep(a.at(0, 0));
    return static_cast<double>(t1 - t0) * 1e-9 / static_cast<double>(sweeps);
}

namespace {

namespace app = weft::apps::pde;

// Appends the "fitpoint NAME BYTES NS" lines of an MPI child to `into`, by
// name, and returns how many names it had lines of; a line of another name
// or size, or a malformed one, ends the experiment.
std::size_t read_points(std::string const& out, std::vector<std::string> const& names,
                        std::map<std::string, std::vector<pingpong::point>>& into) {
    std::vector<std::string> seen;
    for (auto const& line : mpi::lines_tagged(out, "fitpoint")) {
        char which[16];
        unsigned long long bytes = 0;
        double ns = 0;
        if (std::sscanf(line.c_str(), "%15s %llu %lf", which, &bytes, &ns) != 3 ||
            std::find(names.begin(), names.end(), which) == names.end() ||
            std::find(kFitSizes.begin(), kFitSizes.end(), bytes) == kFitSizes.end())
            die("pde child: bad line 'fitpoint %s'", line.c_str());
        if (std::find(seen.begin(), seen.end(), which) == seen.end()) seen.emplace_back(which);
        auto& pts = into[which];
        if (pts.empty())
            for (std::size_t b : kFitSizes) pts.push_back({b, {}});
        for (auto& p : pts)
            if (p.bytes == bytes) p.half_rtt_ns.push_back(ns);
    }
    return seen.size();
}

// The model's remote message from its latency and overhead fits. A disturbed
// run can fit an intercept below 0: the model takes 0 then (the rows keep the
// fits).
void set_remote(model_params& mp, pingpong::fit const& latency, pingpong::fit const& overhead) {
    mp.alpha_r_s = std::max(0.0, latency.alpha_ns * 1e-9);
    mp.beta_r_s = std::max(0.0, latency.beta_ns_per_byte * 1e-9);
    mp.o_r_s = std::max(0.0, overhead.alpha_ns * 1e-9);
    mp.o_beta_r_s = std::max(0.0, overhead.beta_ns_per_byte * 1e-9);
}

// The model's computation from calc(n), measured with every node sweeping at
// once: f, the nodes whose waits a CPU fills with another node's computation,
// and t, a point's seconds on a node computing alone, so that f t n = calc(n).
// In-process nodes on one worker are such nodes (a node that waits blocks its
// weft thread, and the worker runs another node's); MPI ranks on one CPU are
// not (a rank that waits polls, and keeps its CPU until the kernel's time
// slice ends), so an MPI job's f is 1, whatever its ranks per CPU.
void set_calc(model_params& mp, double calc_s, long side, double f) {
    mp.share = std::max(1.0, f);
    mp.t_point_s = calc_s / (static_cast<double>(side) * static_cast<double>(side) * mp.share);
}

std::vector<long> parse_longs(std::string const& option, std::vector<std::string> const& items, long lo, long hi) {
    std::vector<long> v;
    for (auto const& s : items) {
        char* end = nullptr;
        long const x = std::strtol(s.c_str(), &end, 10);
        if (s.empty() || *end != '\0' || x < lo || x > hi)
            throw usage_error("--" + option + ": '" + s + "' is not an integer in [" + std::to_string(lo) + ", " +
                              std::to_string(hi) + "]");
        v.push_back(x);
    }
    return v;
}

// What an MPI child of pde (pde_experiment.hpp, child; pde_weft_versions.hpp, weft_mpi_child)
// printed: every (version, side)'s sweeps and timed rounds. A checked result
// that differs from the serial program's stops the experiment, and so does a
// missing line.
struct child_output {
    std::map<std::pair<std::string, long>, int> sweeps;
    std::map<std::pair<std::string, long>, std::vector<double>> times;
    std::map<long, double> calc;  // per side: the slowest rank's calc(n), seconds per sweep
};

child_output read_child(std::string const& out, long p, std::vector<long> const& sides,
                        std::vector<std::string> const& versions, int rounds, char const* transport) {
    child_output c;
    for (auto const& line : mpi::lines_tagged(out, "check")) {
        char name[32];
        long side = 0;
        int sw = 0;
        double diff = -1;
        if (std::sscanf(line.c_str(), "%31s %ld %d %lf", name, &side, &sw, &diff) != 4)
            die("pde child: bad line 'check %s'", line.c_str());
        if (diff != 0)
            die("pde: version %s over %s on %ld ranks, side %ld: the result differs from the serial program's by up "
                "to %g (it must equal it)",
                name, transport, p, side, diff);
        c.sweeps[{name, side}] = sw;
    }
    for (auto const& line : mpi::lines_tagged(out, "pde")) {
        char name[32];
        long side = 0;
        int round = 0;
        double secs = 0;
        if (std::sscanf(line.c_str(), "%31s %ld %d %lf", name, &side, &round, &secs) != 4)
            die("pde child: bad line 'pde %s'", line.c_str());
        c.times[{name, side}].push_back(secs);
    }
    // calc(n) of a round is its slowest rank's; the side's, the median over the rounds.
    std::map<std::pair<long, int>, std::pair<double, int>> calc_round;  // (side, round) -> (slowest, ranks)
    for (auto const& line : mpi::lines_tagged(out, "calc")) {
        long side = 0;
        int rank = 0, round = 0;
        double secs = 0;
        if (std::sscanf(line.c_str(), "%ld %d %d %lf", &side, &rank, &round, &secs) != 4 || secs <= 0)
            die("pde child: bad line 'calc %s'", line.c_str());
        auto& [slowest, count] = calc_round[{side, round}];
        slowest = std::max(slowest, secs);
        ++count;
    }
    for (long s : sides) {
        std::vector<double> slowest;
        for (int r = 0; r < rounds; ++r)
            if (auto it = calc_round.find({s, r}); it != calc_round.end() && it->second.second == p)
                slowest.push_back(it->second.first);
        if (static_cast<int>(slowest.size()) != rounds)
            die("pde child (%s, %ld ranks): side %ld: calc(n) not from all %ld ranks in each of %d rounds; its output: "
                "%s",
                transport, p, s, p, rounds, out.c_str());
        c.calc[s] = summarize(slowest).median;
        for (auto const& v : versions) {
            auto const& ts = c.times[{v, s}];
            if (static_cast<int>(ts.size()) != rounds || !c.sweeps.count({v, s}))
                die("pde child (%s, %ld ranks): version %s side %ld reported %zu of %d rounds; its output: %s",
                    transport, p, v.c_str(), s, ts.size(), rounds, out.c_str());
        }
    }
    return c;
}

// --- The MPI jobs, raw and weft, paired round by round ----------------------------
//
// transport raw_mpi runs apps/pde's MPI versions (mpi_plain, blocking1,
// handcoded) in a job of this executable (pde_experiment.hpp, child); transport mpi runs
// weft's versions over weft's mpi transport, one node and one worker per rank
// (pde_weft_versions.hpp, weft_mpi_child). This host's speed moves 2x for minutes at a
// time, so for every P each round runs one job of each transport of one timed
// round (raw first in even rounds, weft first in odd ones), and weft's
// blocking1 and handcoded are compared with raw MPI's of the same round
// (paired_ratio; threads2 and threads4 with raw handcoded, the program the
// paper's threads are measured against). Every job measures the model's
// inputs on itself (one round of the exchanges) and checks each version
// against the serial program; the model's fits are over each size's median
// of the rounds' jobs' samples, and calc(n) is the median of theirs.

struct mpi_transport {
    char const* transport;  // "raw_mpi" or "mpi"
    char const* what;       // the job, in errors
    std::vector<std::string> versions;
    std::vector<std::string> fit_names;
};

// The grain exchanges of the model's o (pde_model.hpp, overhead_at_grain):
// per (side, threads), every round's computation and time per step.
struct grain_samples {
    struct series {
        std::vector<double> compute_ns, step_ns;
    };
    std::map<std::pair<long, int>, series> samples;

    void add(long side, int threads, double compute_ns, double step_ns) {
        auto& x = samples[{side, threads}];
        x.compute_ns.push_back(compute_ns);
        x.step_ns.push_back(step_ns);
    }
};

// What the rounds' jobs of one transport measured, merged: per round, every
// (version, side)'s time, each side's calc(n) and the fits.
struct job_rounds {
    std::map<std::pair<std::string, long>, std::vector<double>> times;
    std::map<std::pair<std::string, long>, int> sweeps;
    std::map<long, std::vector<double>> calc;
    std::map<std::string, std::vector<pingpong::point>> points;  // per fit: every job's samples per size
    grain_samples grain;                                         // the weft jobs' grain exchanges

    // The fit over each size's median of the rounds' jobs' samples.
    pingpong::fit fit(std::string const& name) const {
        auto const it = points.find(name);
        return it == points.end() ? pingpong::fit{} : pingpong::fit_alpha_beta(it->second, kFitSizes.back());
    }
};

void run_job_round(mpi_transport const& tr, long p, std::vector<long> const& sides, double work, int max_sweeps,
                   job_rounds& into) {
    std::vector<std::string> side_text;
    for (long s : sides) side_text.push_back(std::to_string(s));
    std::vector<std::string> args = {
        "pde",        "--mpi-child",          "--child-transport", tr.transport,
        "--ranks",    std::to_string(p),      "--sides",           join(side_text, ","),
        "--versions", join(tr.versions, ","), "--rounds",          "1",
        "--work",     json_number(work),      "--max-sweeps",      std::to_string(max_sweeps)};
    std::string const out = mpi::run(static_cast<int>(p), args, tr.what);
    child_output const c = read_child(out, p, sides, tr.versions, 1, tr.transport);
    if (read_points(out, tr.fit_names, into.points) != tr.fit_names.size() && p > 1)
        die("pde child (%s, %ld ranks): no 'fitpoint %s' lines; its output: %s", tr.transport, p,
            join(tr.fit_names, ",").c_str(), out.c_str());
    for (auto const& [key, ts] : c.times) into.times[key].push_back(ts.front());
    for (auto const& [key, sw] : c.sweeps) into.sweeps[key] = sw;
    for (auto const& [side, secs] : c.calc) into.calc[side].push_back(secs);
    for (auto const& line : mpi::lines_tagged(out, "grain")) {
        long side = 0;
        int threads = 0;
        double compute_ns = -1, step_ns = 0;
        if (std::sscanf(line.c_str(), "%ld %d %lf %lf", &side, &threads, &compute_ns, &step_ns) != 4 ||
            compute_ns < 0 || step_ns <= 0 || threads < 1)
            die("pde child: bad line 'grain %s'", line.c_str());
        into.grain.add(side, threads, compute_ns, step_ns);
    }
}

// The model's o for a version with shape.threads threads per node at one
// block size (pde_model.hpp, overhead_at_grain), from the medians of its
// grain exchanges' steps and computations, with L the model's latency at the
// exchange's message size; 0 for blocking1 (it waits for its messages) and
// where none was measured (a job of one node).
struct grain_o {
    bool measured = false;
    double o_s = 0, step_ns = 0, compute_ns = 0;
};

grain_o grain_overhead(grain_samples const& g, long side, app::weft_version v, model_params const& mp,
                       model_shape const& shape) {
    grain_o r;
    if (v == app::weft_version::blocking1) return r;
    auto const it = g.samples.find({side, shape.threads});
    if (it == g.samples.end() || it->second.step_ns.empty()) return r;
    r.measured = true;
    r.step_ns = summarize(it->second.step_ns).median;
    r.compute_ns = summarize(it->second.compute_ns).median;
    r.o_s = overhead_at_grain(r.step_ns * 1e-9, r.compute_ns * 1e-9, latency_remote(mp, shape), shape.threads,
                              std::max(1, shape.remote));
    return r;
}

void add_grain(json_object& rec, grain_o const& g) {
    if (!g.measured) {
        rec.add_null("o_grain_ns").add_null("grain_step_ns").add_null("grain_compute_ns");
        return;
    }
    rec.add("o_grain_ns", g.o_s * 1e9).add("grain_step_ns", g.step_ns).add("grain_compute_ns", g.compute_ns);
}

// The model's measured message costs in a row: remote latency and overhead,
// and the same-node latency where there is one.
void add_fits(json_object& rec, pingpong::fit const& remote, pingpong::fit const& overhead,
              pingpong::fit const* local) {
    rec.add("alpha_r_ns", remote.alpha_ns).add("beta_r_ns_per_byte", remote.beta_ns_per_byte);
    rec.add("o_r_ns", overhead.alpha_ns).add("o_beta_r_ns_per_byte", overhead.beta_ns_per_byte);
    if (local != nullptr) rec.add("alpha_l_ns", local->alpha_ns).add("beta_l_ns_per_byte", local->beta_ns_per_byte);
}

// Per round, a[r] / b[r]; their summary.
summary paired(std::vector<double> const& a, std::vector<double> const& b) {
    std::vector<double> r;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) r.push_back(a[i] / b[i]);
    return summarize(r);
}

void emit_raw_rows(context& ctx, table& t, long p, std::vector<long> const& sides, job_rounds const& raw,
                   std::vector<std::string> const& versions, int cpus) {
    pingpong::fit const remote = raw.fit("remote"), overhead = raw.fit("overhead");
    for (long s : sides)
        for (auto const& v : versions) {
            auto const& ts = raw.times.at({v, s});
            summary const sum = summarize(ts);
            double const calc_s = summarize(raw.calc.at(s)).median;
            // The weft rows' equations (pde_model.hpp) with one thread per
            // rank: T_b for mpi_plain and blocking1, T_opt for handcoded.
            model_shape const shape = weft_shape(static_cast<int>(p), s, 1);
            model_params mp;
            set_calc(mp, calc_s, s, 1);
            set_remote(mp, remote, overhead);
            bool const plain = v == "mpi_plain", blocking = plain || v == "blocking1";
            double const model_s = blocking ? t_blocking(mp, shape) : t_handcoded(mp, shape);
            // mpi_plain's four MPI_Sendrecv shifts run one after the other,
            // and each shift along a dimension with two blocks waits for its
            // message: 2 k one-way latencies in a row, as eq. (1) adds them
            // (apps/pde/pde_mpi.cpp). blocking1 sends all four edges first,
            // as weft's blocking1, and its overlap form is that one's.
            model_shape shifts = shape;
            shifts.remote = 2 * shape.remote;
            double const overlap_s = plain      ? t_blocking(mp, shifts)
                                     : blocking ? t_blocking_overlap(mp, shape)
                                                : t_handcoded_overlap(mp, shape);
            json_object rec = ctx.record();
            rec.add("transport", "raw_mpi").add("ranks", p).add("n", s * s).add("side", s).add("version", v);
            rec.add("time_s", sum.median).add("time_s_spread", sum.spread).add("model_s", model_s);
            rec.add("time_over_model", model_s > 0 ? sum.median / model_s : 0.0);
            rec.add("model_overlap_s", overlap_s).add("time_over_model_overlap", sum.median / overlap_s);
            rec.add("sweeps", raw.sweeps.at({v, s})).add("rounds", static_cast<unsigned long long>(sum.n));
            rec.add("neighbours", shape.remote).add("oversubscribed", p > cpus).add("calc_s", calc_s);
            rec.add("overlap_f", mp.share).add("t_point_ns", mp.t_point_s * 1e9);
            add_fits(rec, remote, overhead, nullptr);
            rec.add("checked", true);
            add_provenance(rec);
            ctx.emit(rec);
            t.add_row({"raw_mpi", std::to_string(p), fmt_sig(static_cast<double>(s * s)), v, fmt(sum.median * 1e6, 2),
                       fmt(model_s * 1e6, 2), fmt(model_s > 0 ? sum.median / model_s : 0, 2), fmt(overlap_s * 1e6, 2),
                       fmt(sum.median / overlap_s, 2), "-", "-"});
        }
}

// The raw MPI version a weft version is compared with in the same round: the
// same shape for blocking1 and handcoded; raw handcoded for the threads.
std::string raw_peer_of(std::string const& weft_version) {
    return weft_version == "blocking1" ? "blocking1" : "handcoded";
}

void emit_weft_rows(context& ctx, table& t, long p, std::vector<long> const& sides, job_rounds const& wj,
                    job_rounds const* raw, std::vector<std::string> const& versions, int cpus,
                    std::vector<target_point>& points) {
    pingpong::fit const remote = wj.fit("remote"), overhead = wj.fit("overhead"), local = wj.fit("local");
    model_params mp;
    set_remote(mp, remote, overhead);
    mp.alpha_l_s = std::max(0.0, local.alpha_ns * 1e-9);
    mp.beta_l_s = std::max(0.0, local.beta_ns_per_byte * 1e-9);
    for (long s : sides) {
        summary const calc = summarize(wj.calc.at(s));
        set_calc(mp, calc.median, s, 1);
        auto const base_it = wj.times.find({"blocking1", s});
        for (auto const& name : versions) {
            app::weft_version v{};
            (void)app::parse_weft_version(name, v);
            auto const& ts = wj.times.at({name, s});
            summary const sum = summarize(ts);
            model_shape const shape = weft_shape(static_cast<int>(p), s, app::threads_per_node(v));
            grain_o const go = grain_overhead(wj.grain, s, v, mp, shape);
            mp.o_r_s = go.o_s;
            mp.o_beta_r_s = 0;
            double const model_s = weft_model(v, mp, shape);
            double const overlap_s = weft_model(v, mp, shape, true);
            json_object rec = ctx.record();
            rec.add("transport", "mpi").add("ranks", p).add("n", s * s).add("side", s).add("version", name);
            rec.add("time_s", sum.median).add("time_s_spread", sum.spread).add("model_s", model_s);
            rec.add("time_over_model", model_s > 0 ? sum.median / model_s : 0.0);
            rec.add("model_overlap_s", overlap_s).add("time_over_model_overlap", sum.median / overlap_s);
            points.push_back({"mpi", p, s * s, name, sum.median, overlap_s, ts});
            if (base_it != wj.times.end())
                rec.add("time_over_blocking1", median_of_ratios(ts, base_it->second));
            else
                rec.add_null("time_over_blocking1");
            std::string const peer = raw_peer_of(name);
            auto const raw_it = raw != nullptr ? raw->times.find({peer, s}) : decltype(raw->times.end()){};
            bool const has_raw = raw != nullptr && raw_it != raw->times.end();
            summary const ratio = has_raw ? paired(ts, raw_it->second) : summary{};
            if (has_raw) rec.add("paired_ratio_to", "raw_mpi " + peer).add_summary("paired_ratio", ratio);
            rec.add("threads_per_node", app::threads_per_node(v)).add("sweeps", wj.sweeps.at({name, s}));
            rec.add("rounds", static_cast<unsigned long long>(sum.n)).add("workers_per_rank", 1);
            rec.add("oversubscribed", p > cpus);
            rec.add("remote_msgs", shape.remote).add("remote_bytes", shape.remote_bytes);
            rec.add("local_msgs", shape.local).add("local_bytes", shape.local_bytes);
            rec.add("calc_s", calc.median).add("calc_s_spread", calc.spread).add("overlap_f", mp.share);
            rec.add("t_point_ns", mp.t_point_s * 1e9);
            add_fits(rec, remote, overhead, &local);
            add_grain(rec, go);
            rec.add("checked", true);
            add_provenance(rec);
            ctx.emit(rec);
            if (has_raw)
                for (std::size_t r = 0; r < ts.size(); ++r) {
                    json_object rr = ctx.record();
                    rr.add("transport", "mpi").add("ranks", p).add("n", s * s).add("side", s).add("version", name);
                    rr.add("round", static_cast<unsigned long long>(r)).add("time_s", ts[r]);
                    rr.add("raw_time_s", raw_it->second[r]).add("paired_ratio_to", "raw_mpi " + peer);
                    rr.add("paired_ratio", ts[r] / raw_it->second[r]);
                    ctx.emit(rr);
                }
            t.add_row({"mpi", std::to_string(p), fmt_sig(static_cast<double>(s * s)), name, fmt(sum.median * 1e6, 2),
                       fmt(model_s * 1e6, 2), fmt(model_s > 0 ? sum.median / model_s : 0, 2), fmt(overlap_s * 1e6, 2),
                       fmt(sum.median / overlap_s, 2),
                       base_it == wj.times.end() ? "-" : fmt(median_of_ratios(ts, base_it->second), 2),
                       has_raw ? fmt(ratio.median, 2) + " (" + peer + ")" : "-"});
        }
    }
}

void run_mpi_jobs(context& ctx, std::vector<long> const& ranks, std::vector<long> const& sides,
                  std::vector<std::string> const& raw_versions, std::vector<std::string> const& weft_versions,
                  int rounds, double work, int max_sweeps, std::vector<target_point>& points) {
    if (raw_versions.empty() && weft_versions.empty()) return;
    if (!mpi::built()) {
        ctx.warn("raw_mpi and mpi not run: %s", mpi::not_built_reason().c_str());
        return;
    }
    mpi_transport const raw{"raw_mpi", "the PDE solver's MPI job", raw_versions, {"remote", "overhead"}};
    mpi_transport const weft{"mpi",
                             "the PDE solver's weft versions over weft's mpi transport",
                             weft_versions,
                             {"remote", "overhead", "local"}};
    int const cpus = static_cast<int>(allowed_cpus().size());
    table t({"transport", "ranks", "n", "version", "sweep us", "model us", "time/model", "overlap us", "time/overlap",
             "vs blocking1", "x raw (paired)"});
    for (long p : ranks) {
        job_rounds raw_r, weft_r;
        for (int r = 0; r < rounds; ++r) {
            ctx.progress("mpiexec -n %ld, round %d of %d:%s%s%s", p, r + 1, rounds,
                         raw_versions.empty() ? "" : (" raw MPI (" + join(raw_versions, ",") + ")").c_str(),
                         weft_versions.empty() ? "" : (" weft over mpi (" + join(weft_versions, ",") + ")").c_str(),
                         p > cpus ? " (oversubscribed)" : "");
            auto raw_job = [&] {
                if (!raw_versions.empty()) run_job_round(raw, p, sides, work, max_sweeps, raw_r);
            };
            auto weft_job = [&] {
                if (!weft_versions.empty()) run_job_round(weft, p, sides, work, max_sweeps, weft_r);
            };
            if (r % 2 == 0)
                raw_job(), weft_job();
            else
                weft_job(), raw_job();
        }
        if (!raw_versions.empty()) {
            emit_raw_rows(ctx, t, p, sides, raw_r, raw_versions, cpus);
            pingpong::fit const remote = raw_r.fit("remote"), overhead = raw_r.fit("overhead");
            ctx.say(
                "raw MPI, %ld ranks: alpha_R %.0f ns, beta_R %.3f ns/B, o %.0f ns, o_beta %.3f ns/B (the rounds' "
                "jobs: MPI exchanges, 8 B..2 KiB); %d CPUs\n",
                p, remote.alpha_ns, remote.beta_ns_per_byte, overhead.alpha_ns, overhead.beta_ns_per_byte, cpus);
        }
        if (!weft_versions.empty()) {
            emit_weft_rows(ctx, t, p, sides, weft_r, raw_versions.empty() ? nullptr : &raw_r, weft_versions, cpus,
                           points);
            pingpong::fit const remote = weft_r.fit("remote"), overhead = weft_r.fit("overhead"),
                                local = weft_r.fit("local");
            ctx.say(
                "weft over mpi, %ld ranks: alpha_R %.0f ns, beta_R %.3f ns/B, o %.0f ns, o_beta %.3f ns/B, "
                "alpha_L %.0f ns, beta_L %.4f ns/B (the rounds' jobs: weft port exchanges, 8 B..2 KiB)\n",
                p, remote.alpha_ns, remote.beta_ns_per_byte, overhead.alpha_ns, overhead.beta_ns_per_byte,
                local.alpha_ns, local.beta_ns_per_byte);
        }
        t.add_separator();
    }
    ctx.print(t,
              "pde over MPI, raw MPI and weft's mpi transport in alternating jobs: seconds per sweep (slowest rank, "
              "median over rounds) against the model; x raw: weft / raw MPI within a round (median); every result "
              "equals the serial one");
}

// The weft versions (apps/pde/pde_weft.hpp) on the inproc transport: for
// every P of `ranks`, a job of P in-process nodes on `workers` workers with
// the injected latency; the model's inputs measured on that job; rounds
// interleaved over sides and versions; rows with transport "inproc".
void run_inproc(context& ctx, std::vector<long> const& ranks, std::vector<long> const& sides,
                std::vector<std::string> const& versions, int rounds, double work, int max_sweeps, int workers,
                std::int64_t inj_alpha_ns, std::int64_t inj_beta_ns, double run_s, std::vector<target_point>& points) {
    if (versions.empty()) return;
    std::vector<app::weft_version> vs;
    for (auto const& name : versions) {
        app::weft_version v{};
        if (!app::parse_weft_version(name, v)) die("pde: '%s' is not a weft version", name.c_str());
        vs.push_back(v);
    }
    int const cpus = static_cast<int>(allowed_cpus().size());
    // The injected latency is a timer on which an idle worker sleeps in
    // futex_wait; Linux lets such a sleep overrun by the thread's timer slack,
    // 50 us by default, which would add up to 50 us to every message. The
    // workers inherit this thread's slack: 1 us makes the injected latency the
    // one asked for (the rows carry the measured alpha_R either way).
    (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
    weft_config_t cfg{};
    cfg.workers = workers;
    cfg.adapt = "off";
    check(weft_init(&cfg), "weft_init");
    table t(
        {"nodes", "n", "version", "sweep us", "model us", "time/model", "overlap us", "time/overlap", "vs blocking1"});
    for (long p : ranks) {
        int const nodes = static_cast<int>(p);
        weft_net_config_t ncfg{};
        ncfg.nodes = nodes;
        ncfg.transport = "inproc";
        ncfg.latency_alpha_ns = inj_alpha_ns;
        ncfg.latency_beta_ns = inj_beta_ns;
        check(weft_net_init(&ncfg), "weft_net_init");
        ctx.progress("inproc, %d nodes on %d workers: alpha and beta, remote (node 0 - node 1) and same-node", nodes,
                     workers);
        pingpong::fit const remote = weft_message_fit(0, 1, kFitSizes, rounds, 100);
        // The overhead exchange computes twice the largest message's measured
        // latency between send and receive (the injected latency is far above
        // kOverheadComputeNs), so that the message is in by then.
        double const cover_ns = 2 * (remote.alpha_ns + remote.beta_ns_per_byte * static_cast<double>(kFitSizes.back()));
        pingpong::fit const overhead = weft_message_fit(
            0, 1, kFitSizes, rounds, 100, static_cast<std::uint64_t>(std::max(cover_ns, 0.0)) + kOverheadComputeNs);
        pingpong::fit const local = weft_message_fit(0, 0, kFitSizes, rounds, 5000);
        model_params mp;
        set_remote(mp, remote, overhead);
        double const node_share = static_cast<double>(nodes) / static_cast<double>(std::min(workers, cpus));
        // A same-node message costs tens of ns, so its fitted intercept can
        // come out below 0: the model takes 0 then (the rows keep the fit).
        mp.alpha_l_s = std::max(0.0, local.alpha_ns * 1e-9);
        mp.beta_l_s = std::max(0.0, local.beta_ns_per_byte * 1e-9);
        // Sweeps per run: about run_s of the blocking model's time, from a
        // first calc(n).
        std::map<long, int> sweeps, calc_sweeps;
        std::map<long, double> first_calc;
        for (long s : sides) {
            calc_sweeps[s] = sweeps_for(s, work, max_sweeps);
            first_calc[s] = weft_calc_time(nodes, s, calc_sweeps[s]);
            set_calc(mp, first_calc[s], s, node_share);
            double const est = t_blocking(mp, weft_shape(nodes, s, 1));
            sweeps[s] = static_cast<int>(std::clamp(run_s / est, 3.0, static_cast<double>(max_sweeps)));
        }
        ctx.progress("inproc, %d nodes: checking every version against the serial program", nodes);
        for (long s : sides)
            for (auto v : vs) (void)weft_run(nodes, s, v, 3, true);
        std::vector<int> const grain_ts = grain_threads(vs);
        grain_samples grain;
        std::map<std::pair<long, int>, std::vector<double>> times;
        std::map<long, std::vector<double>> calc;
        for (int r = 0; r < rounds; ++r) {
            ctx.progress("inproc, %d nodes: round %d of %d", nodes, r + 1, rounds);
            for (long s : sides) {
                calc[s].push_back(weft_calc_time(nodes, s, calc_sweeps[s]));
                if (nodes >= 2)
                    for (int th : grain_ts) {
                        model_shape const shape = weft_shape(nodes, s, th);
                        // About 20 ms of steps, each at least the latency
                        // and the block's computation (first calc(n)).
                        double const lat_ns = remote.alpha_ns + remote.beta_ns_per_byte * shape.remote_bytes;
                        double const per_step = std::max({first_calc[s] * 1e9 / mp.share, lat_ns, 1000.0});
                        auto const iters = static_cast<long>(std::clamp(2e7 / per_step, 10.0, 2000.0));
                        grain_step const g = weft_grain_step(0, 1, th, std::max(1, shape.remote),
                                                             static_cast<std::size_t>(shape.remote_bytes), iters,
                                                             grain_rect_of(nodes, s, th));
                        grain.add(s, th, g.compute_ns, g.step_ns);
                    }
                for (auto v : vs) times[{s, static_cast<int>(v)}].push_back(weft_run(nodes, s, v, sweeps[s], false));
            }
        }
        check(weft_net_finalize(), "weft_net_finalize");
        for (long s : sides) {
            summary const calc_s = summarize(calc[s]);
            set_calc(mp, calc_s.median, s, node_share);
            auto const& base = times[{s, static_cast<int>(app::weft_version::blocking1)}];
            for (auto v : vs) {
                auto const& ts = times[{s, static_cast<int>(v)}];
                summary const sum = summarize(ts);
                model_shape const shape = weft_shape(nodes, s, app::threads_per_node(v));
                grain_o const go = grain_overhead(grain, s, v, mp, shape);
                mp.o_r_s = go.o_s;
                mp.o_beta_r_s = 0;
                double const model_s = weft_model(v, mp, shape);
                double const overlap_s = weft_model(v, mp, shape, true);
                json_object rec = ctx.record();
                rec.add("transport", "inproc").add("ranks", p).add("n", s * s).add("side", s);
                rec.add("version", app::weft_version_name(v));
                rec.add("time_s", sum.median).add("time_s_spread", sum.spread).add("model_s", model_s);
                rec.add("time_over_model", sum.median / model_s);
                rec.add("model_overlap_s", overlap_s).add("time_over_model_overlap", sum.median / overlap_s);
                points.push_back({"inproc", p, s * s, app::weft_version_name(v), sum.median, overlap_s, ts});
                if (!base.empty())
                    rec.add("time_over_blocking1", median_of_ratios(ts, base));
                else
                    rec.add_null("time_over_blocking1");
                rec.add("threads_per_node", app::threads_per_node(v)).add("sweeps", sweeps[s]).add("rounds", rounds);
                rec.add("workers", workers).add("oversubscribed", nodes > cpus);
                rec.add("remote_msgs", shape.remote).add("remote_bytes", shape.remote_bytes);
                rec.add("local_msgs", shape.local).add("local_bytes", shape.local_bytes);
                rec.add("calc_s", calc_s.median).add("calc_s_spread", calc_s.spread).add("overlap_f", mp.share);
                rec.add("t_point_ns", mp.t_point_s * 1e9);
                rec.add("injected_alpha_ns", static_cast<double>(inj_alpha_ns));
                rec.add("injected_beta_ns_per_byte", static_cast<double>(inj_beta_ns));
                add_fits(rec, remote, overhead, &local);
                add_grain(rec, go);
                rec.add("checked", true);
                add_provenance(rec);
                ctx.emit(rec);
                t.add_row({std::to_string(p), fmt_sig(static_cast<double>(s * s)), app::weft_version_name(v),
                           fmt(sum.median * 1e6, 1), fmt(model_s * 1e6, 1), fmt(sum.median / model_s, 2),
                           fmt(overlap_s * 1e6, 1), fmt(sum.median / overlap_s, 2),
                           base.empty() ? "-" : fmt(median_of_ratios(ts, base), 2)});
            }
        }
        t.add_separator();
        ctx.say(
            "inproc, %d nodes: alpha_R %.0f ns, beta_R %.3f ns/B, o %.0f ns, o_beta %.3f ns/B, alpha_L %.0f ns, "
            "beta_L %.4f ns/B (injected %lld ns + %lld ns/B)\n",
            nodes, remote.alpha_ns, remote.beta_ns_per_byte, overhead.alpha_ns, overhead.beta_ns_per_byte,
            local.alpha_ns, local.beta_ns_per_byte, static_cast<long long>(inj_alpha_ns),
            static_cast<long long>(inj_beta_ns));
    }
    check(weft_finalize(), "weft_finalize");
    ctx.print(t, "pde on weft's ports (inproc): seconds per sweep (slowest node, median) against the model");
}

std::pair<std::int64_t, std::int64_t> parse_latency(std::string const& s) {
    auto const comma = s.find(',');
    char* end = nullptr;
    auto bad = [&]() -> usage_error {
        return usage_error("--latency: '" + s + "' is not ALPHA_NS,BETA_NS_PER_BYTE (two integers >= 0, e.g. 50000,1)");
    };
    if (comma == std::string::npos) throw bad();
    std::string const a = s.substr(0, comma), b = s.substr(comma + 1);
    long long const alpha = std::strtoll(a.c_str(), &end, 10);
    if (a.empty() || *end != '\0' || alpha < 0) throw bad();
    long long const beta = std::strtoll(b.c_str(), &end, 10);
    if (b.empty() || *end != '\0' || beta < 0) throw bad();
    return {alpha, beta};
}

int run(context& ctx) {
    auto const& o = ctx.opts();
    std::vector<long> const ranks = parse_longs("ranks", o.list("ranks"), 1, 64);
    std::vector<long> const sides = parse_longs("sides", o.list("sides"), 2, 8192);
    std::vector<std::string> const versions = o.list("versions");
    std::vector<std::string> const transports = o.list("transports");
    int const rounds = static_cast<int>(o.integer("rounds"));
    double const work = o.number("work");
    int const max_sweeps = static_cast<int>(o.integer("max-sweeps"));
    if (o.flag("mpi-child")) {
#if WEFT_HAVE_MPI
        if (o.string("child-transport") == "mpi")
            return weft_mpi_child(static_cast<int>(ranks.front()), sides, versions, rounds, work, max_sweeps);
        return child(static_cast<int>(ranks.front()), sides, versions, rounds, work, max_sweeps);
#else
        die("--mpi-child: %s", mpi::not_built_reason().c_str());
#endif
    }
    auto const [inj_alpha, inj_beta] = parse_latency(o.string("latency"));
    std::vector<target_point> points;
    auto has = [](std::vector<std::string> const& v, char const* x) {
        return std::find(v.begin(), v.end(), x) != v.end();
    };
    if (has(transports, "inproc")) {
        std::vector<std::string> weft_versions;
        for (auto const& v : versions)
            if (v != "mpi_plain") weft_versions.push_back(v);
        run_inproc(ctx, ranks, sides, weft_versions, rounds, work, max_sweeps, static_cast<int>(o.integer("workers")),
                   inj_alpha, inj_beta, o.number("run-ms") * 1e-3, points);
    }
    std::vector<std::string> raw_versions, weft_mpi_versions;
    if (has(transports, "raw_mpi"))
        for (auto const& v : versions)
            if (v == "mpi_plain" || v == "blocking1" || v == "handcoded") raw_versions.push_back(v);
    if (has(transports, "mpi"))
        for (auto const& v : versions)
            if (v != "mpi_plain") weft_mpi_versions.push_back(v);
    run_mpi_jobs(ctx, ranks, sides, raw_versions, weft_mpi_versions, rounds, work, max_sweeps, points);
    emit_targets(ctx, points, static_cast<int>(allowed_cpus().size()));
    return 0;
}

registrar const reg{experiment{
    .name = "pde",
    .description = "Felten & McNamee's PDE solver on weft's ports (inproc) and over raw MPI, against their model",
    .details = "Jacobi relaxation of Laplace's equation (five-point stencil) on P 2-D blocks of side x side points\n"
               "(apps/pde), for every P of --ranks and side of --sides. inproc: the weft versions (blocking1: one\n"
               "blocking thread per node; threads2/threads4: the block in 2/4 strips, one blocking weft thread\n"
               "each; handcoded: sends, inner points, receives, edge points) on P in-process nodes with the\n"
               "injected --latency, rounds interleaved over sides and versions. raw_mpi: mpi_plain (blocking\n"
               "MPI_Sendrecv), blocking1 (MPI_Isend x4, then blocking receives: weft's blocking1's shape) and\n"
               "handcoded (MPI_Isend/Irecv) in MPI jobs of this executable (P above the CPU count is\n"
               "oversubscribed). mpi: the weft versions over weft's mpi transport, one node (one worker) per rank.\n"
               "raw_mpi and mpi run paired: per P and round, one job of each in alternating order; weft's rows\n"
               "carry paired_ratio, weft / raw MPI's same-shaped version within a round (median over rounds).\n"
               "Each (P, side, version) is first checked against the serial program. time_s: median of the slowest\n"
               "node's seconds per sweep; model_overlap_s: weft's model; model_s: the paper's equations as printed,\n"
               "T_b (eq. 1), T_2 (eq. 2, generalised to 4 threads) or T_opt (eq. 3) from alpha and beta (weft\n"
               "port exchanges on the same job, remote and same-node, for inproc and mpi; raw MPI ping-pong for\n"
               "raw_mpi) and calc(n), every node's block swept with no messages, the nodes at once, all\n"
               "measured in the same invocation. See docs/bench.md and docs/design/pde.md.",
    .options = {{.name = "ranks",
                 .kind = opt_kind::list,
                 .metavar = "LIST",
                 .default_value = "2,4",
                 .help = "nodes (inproc) and MPI ranks (mpi, raw_mpi); blocks: px x py as square as P allows"},
                {.name = "sides",
                 .kind = opt_kind::list,
                 .metavar = "LIST",
                 .default_value = "16,32,64,128,256,512,1024",
                 .help = "block sides: n = side^2 points per node"},
                {.name = "versions",
                 .kind = opt_kind::list,
                 .metavar = "LIST",
                 .default_value = "blocking1,threads2,threads4,handcoded,mpi_plain",
                 .help = "versions to run (blocking1 and handcoded run on every transport, mpi_plain on raw_mpi only)",
                 .choices = {"blocking1", "threads2", "threads4", "handcoded", "mpi_plain"}},
                {.name = "transports",
                 .kind = opt_kind::list,
                 .metavar = "LIST",
                 .default_value = "inproc,mpi,raw_mpi",
                 .help = "inproc: the weft versions on in-process nodes; mpi: the weft versions over weft's mpi "
                         "transport, one node per rank under mpiexec; raw_mpi: the MPI versions under mpiexec",
                 .choices = {"inproc", "mpi", "raw_mpi"}},
                {.name = "latency",
                 .kind = opt_kind::string,
                 .metavar = "A,B",
                 .default_value = "50000,1",
                 .help = "inproc: injected latency of a message between nodes, A ns + B ns per byte"},
                {.name = "run-ms",
                 .kind = opt_kind::number,
                 .metavar = "MS",
                 .default_value = "150",
                 .help = "inproc: sweeps per run chosen for about this long a run (3..--max-sweeps)",
                 .min = 0.1,
                 .max = 1e6},
                {.name = "work",
                 .kind = opt_kind::number,
                 .metavar = "W",
                 .default_value = "3e7",
                 .help = "mpi, raw_mpi: points x sweeps per rank per run; all: the serial time per point's run",
                 .min = 1,
                 .max = 1e12},
                {.name = "max-sweeps",
                 .kind = opt_kind::integer,
                 .metavar = "N",
                 .default_value = "20000",
                 .help = "at most this many sweeps per run",
                 .min = 3,
                 .max = 100000000},
                {.name = "mpi-child",
                 .kind = opt_kind::flag,
                 .help = "internal: a rank of the solver's job on the first --ranks count (pde starts itself so)"},
                {.name = "child-transport",
                 .kind = opt_kind::string,
                 .metavar = "T",
                 .default_value = "raw_mpi",
                 .help = "internal: what the --mpi-child runs: raw_mpi, the MPI versions; mpi, the weft versions "
                         "over weft's mpi transport",
                 .choices = {"raw_mpi", "mpi"}},
                opt_workers(2),
                opt_rounds(5)},
    .run = run,
    .in_demo = true,
    .demo_args = {"--sides", "16,64,256", "--work", "2e6", "--rounds", "3", "--run-ms", "20", "--transports",
                  "inproc,raw_mpi"},
    .demo_order = 61,
}};

}  // namespace
}  // namespace weft::bench::pde
