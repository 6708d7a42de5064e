// weft-bench filaments — the Filaments paper's application suite (Lowenthal, Freeh & Andrews;
// apps/, apps/app.hpp):
// every application in its serial, coarse-grain, filaments and peer versions,
// at each worker count, with the ratios the paper's Tables 1-4 report.
//
// Per application: a reference instance runs the serial version first (no
// runtime involved); every timed run's output is checked against it (a
// mismatch stops the run: a fast wrong answer is not a result). Then, per
// --workers count, weft is started with that many workers, each version runs
// one untimed warm-up round, and the --rounds timed rounds are interleaved:
// round r runs serial, coarse-grain and filaments in turn (and, at more than
// one worker, W copies of the serial program at once: the machine's ceiling,
// serial_copies.hpp). This VM's speed
// drifts by 5-10% over minutes; run back to back, each version would get its
// own stretch of the drift, interleaved they share it, and a ratio compares
// like with like. Every version's ratios to serial and to coarse-grain are
// medians over rounds of the ratio within each round (a round's runs see
// nearly the same machine). Short programs get more rounds (at least
// --min-seconds of serial time in all); a peer runs in the first
// max(--rounds, --min-seconds / its warm-up time) of them, so that a slow one
// does not run as often as the short serial program. The serial time
// reported pools every block's serial rounds. The peers (OpenMP, oneTBB) take their turn in each
// round like the others; after each peer run the process waits until its idle
// threads have stopped spinning (settle()), so that an OpenMP team spinning
// after its region does not take the CPUs of the version that follows.
//
// One JSON line per (application, version, workers):
//   app, version, workers, size, time_s (median; _spread/_min/_max),
//   vs_serial (the median over rounds of the round's serial time / this
//   version's: the speedup), vs_coarse (likewise with the round's coarse-grain
//   time, same workers); for the filaments version the filament
//   statistics of one untimed run on a measuring runtime (the only kind that
//   counts pruned forks): filaments_created, filaments_run, forks,
//   forks_pruned, steals, pools_coarsened (1-D + 2-D dense sweeps),
//   pools_general, sweeps, and fil_over_serial / fil_over_coarse / speedup
//   (the medians of the per-round ratios); rounds
//   (the timed rounds this version ran) for every version;
//   and per worker count above 1 a serial_copies line: time_s and ceiling.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/app.hpp"
#include "harness.hpp"
#include "serial_copies.hpp"
#include "settle.hpp"
#include "weft/weft.h"

namespace weft::bench::filaments {
namespace {

using apps::version;

std::vector<const apps::app*> selected_apps(const std::string& arg) {
    std::vector<const apps::app*> out;
    if (arg == "all") {
        for (const apps::app& a : apps::all_apps()) out.push_back(&a);
        return out;
    }
    std::string::size_type pos = 0;
    while (pos <= arg.size()) {
        std::string::size_type comma = arg.find(',', pos);
        std::string name = arg.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        const apps::app* a = apps::find_app(name);
        if (!a) {
            std::string valid = "all";
            for (const apps::app& x : apps::all_apps()) valid += std::string(", ") + x.name;
            die("filaments: --app: unknown application '%s' (valid: %s)", name.c_str(), valid.c_str());
        }
        out.push_back(a);
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return out;
}

// One run of version v of inst, timed (the reset before it is not), and its
// output checked against the reference: a fast wrong answer is not a result.
double timed_checked_run(apps::instance& inst, const apps::instance& reference, const apps::app& a, version v,
                         int workers) {
    inst.reset();
    const std::uint64_t t0 = now_ns();
    inst.run(v, workers);
    const double s = static_cast<double>(now_ns() - t0) * 1e-9;
    if (std::string diff = inst.compare(reference); !diff.empty())
        die("filaments: %s %s on %d workers differs from serial: %s", a.name, apps::version_name(v), workers,
            diff.c_str());
    return s;
}

int run(context& ctx) {
    const int min_rounds = static_cast<int>(ctx.opts().integer("rounds"));
    const double min_seconds = ctx.opts().number("min-seconds");
    const long size_opt = static_cast<long>(ctx.opts().integer("size"));
    const bool demo_sizes = ctx.opts().flag("demo-sizes");
    const bool no_peers = ctx.opts().flag("no-peers");
    const std::vector<const apps::app*> chosen = selected_apps(ctx.opts().string("app"));
    if (size_opt && chosen.size() != 1) die("filaments: --size needs exactly one --app (sizes differ per application)");
    std::vector<std::string> ws = ctx.opts().list("workers");

    table t({"app", "size", "workers", "serial s", "coarse s", "filaments s", "fil/serial", "fil/coarse", "speedup",
             "ceiling", "omp s", "tbb s", "forks", "pruned", "coarsened", "steals"});
    std::size_t app_index = 0;
    for (const apps::app* a : chosen) {
        ++app_index;
        const long size = size_opt ? size_opt : demo_sizes ? a->demo_size : a->bench_size;
        // The reference output comes from its own instance; every version,
        // serial included, is timed on `inst`, so that all of them run on the
        // same memory (where two grids fall relative to each other, 4 KiB
        // aliasing among others, moves a stencil's time by tens of percent).
        auto reference = apps::make_instance(*a, size);
        reference->reset();
        const std::uint64_t ref_t0 = now_ns();
        reference->run(version::serial, 1);
        const double ref_s = static_cast<double>(now_ns() - ref_t0) * 1e-9;
        auto inst = apps::make_instance(*a, size);
        // Short programs (fib(35): ~20 ms) get more rounds, so that each
        // version is timed for at least --min-seconds in all: a single
        // disturbance of this machine lasts longer than one of their rounds.
        const int rounds = std::max(min_rounds, static_cast<int>(std::min(1000.0, std::ceil(min_seconds / ref_s))));

        // The versions each round runs, in turn: serial, coarse-grain,
        // filaments and the peers that were built.
        std::vector<version> versions;
        for (version v : apps::versions_of(*a))
            if (!(no_peers && (v == version::omp || v == version::tbb))) versions.push_back(v);
        auto is_peer = [](version v) { return v == version::omp || v == version::tbb; };
        auto timed = [&](version v, int workers) {
            const double s = timed_checked_run(*inst, *reference, *a, v, workers);
            if (is_peer(v)) settle();
            return s;
        };

        struct block {
            int workers;
            std::map<version, summary> times;
            // Per version, medians over rounds of the round's serial time and
            // its coarse-grain time over the version's (the rounds interleave
            // them): vs_serial is the speedup.
            std::map<version, double> vs_serial, vs_coarse;
            // The filaments version's ratios the other way round: its time
            // over the round's serial and coarse-grain time.
            double fil_vs_serial = 0, fil_vs_coarse = 0;
            // W copies of the serial program at once (workers > 1): their
            // times, and W x the median of (the round's serial) / (them).
            std::vector<double> copies_times;
            double ceiling = 0;
            weft_fil_stats_t st{};
        };
        std::vector<block> blocks;
        std::vector<double> serial_samples;  // every block's serial rounds
        for (std::size_t wi = 0; wi < ws.size(); ++wi) {
            weft_config_t cfg{};
            cfg.workers = std::stoi(ws[wi]);
            ctx.progress("[%zu/%zu] %s %ld, %d worker%s: up to %d round%s of %zu versions%s", app_index, chosen.size(),
                         a->name, size, cfg.workers, cfg.workers == 1 ? "" : "s", rounds, rounds == 1 ? "" : "s",
                         versions.size(), cfg.workers > 1 ? " + the ceiling" : "");
            block b{};
            b.workers = cfg.workers;
            // The machine's ceiling at this worker count (serial_copies.hpp),
            // one round of it after each round of the versions: each copy has
            // an instance of its own, reset before the round, checked after.
            std::vector<std::unique_ptr<apps::instance>> copy_inst;
            std::optional<serial_copies> copies;
            if (cfg.workers > 1) {
                for (int i = 0; i < cfg.workers; ++i) copy_inst.push_back(apps::make_instance(*a, size));
                copies.emplace(cfg.workers, [&copy_inst](int i) {
                    copy_inst[static_cast<std::size_t>(i)]->run(version::serial, 1);
                });
            }
            auto copies_round = [&] {
                for (auto& c : copy_inst) c->reset();
                return copies->round();
            };
            // The statistics come from one untimed run on a measuring runtime:
            // only that one counts pruned forks (a memory increment per join,
            // which the timed rounds must not pay).
            cfg.measure = 1;
            check(weft_init(&cfg), "weft_init");
            check(weft_fil_stats_reset(), "weft_fil_stats_reset");
            (void)timed_checked_run(*inst, *reference, *a, version::filaments, cfg.workers);
            check(weft_fil_stats_get(&b.st), "weft_fil_stats_get");
            check(weft_finalize(), "weft_finalize");
            cfg.measure = 0;
            check(weft_init(&cfg), "weft_init");
            // Serial, coarse-grain and filaments run in every round. A peer's
            // warm-up sizes its share: it takes part in the first
            // max(--rounds, --min-seconds / its time) rounds, so that a slow
            // one (OpenMP's fib: tens of times the serial time) is timed about
            // --rounds times, not as often as the short serial program.
            std::map<version, int> rounds_of;
            for (version v : versions) {
                const double warm = timed(v, cfg.workers);
                const int wanted = static_cast<int>(std::min(1000.0, std::ceil(min_seconds / warm)));
                rounds_of[v] = is_peer(v) ? std::min(rounds, std::max(min_rounds, wanted)) : rounds;
            }
            if (copies) (void)copies_round();
            std::map<version, std::vector<double>> samples;
            for (int r = 0; r < rounds; ++r) {
                for (version v : versions)
                    if (r < rounds_of[v]) samples[v].push_back(timed(v, cfg.workers));
                if (copies) b.copies_times.push_back(copies_round());
            }
            for (auto& c : copy_inst)
                if (std::string diff = c->compare(*reference); !diff.empty())
                    die("filaments: %s, one of %d serial copies run at once differs from serial: %s", a->name,
                        cfg.workers, diff.c_str());
            check(weft_finalize(), "weft_finalize");
            for (auto& [v, s] : samples) {
                if (v == version::serial) {
                    serial_samples.insert(serial_samples.end(), s.begin(), s.end());
                    continue;
                }
                b.times[v] = summarize(s);
                // Paired over the rounds both versions ran: the first ones
                // (median_of_ratios pairs the common prefix).
                b.vs_serial[v] = median_of_ratios(samples[version::serial], s);
                b.vs_coarse[v] = median_of_ratios(samples[version::coarse], s);
            }
            b.fil_vs_serial = median_of_ratios(samples[version::filaments], samples[version::serial]);
            b.fil_vs_coarse = median_of_ratios(samples[version::filaments], samples[version::coarse]);
            if (copies) b.ceiling = cfg.workers * median_of_ratios(samples[version::serial], b.copies_times);
            blocks.push_back(std::move(b));
        }

        const summary serial = summarize(serial_samples);
        {
            json_object rec = ctx.record();
            rec.add("app", a->name).add("version", "serial").add("workers", 1).add("size", size);
            rec.add_summary("time_s", serial).add("vs_serial", 1.0);
            add_provenance(rec);
            ctx.emit(rec);
        }
        for (block& b : blocks) {
            const double coarse = b.times[version::coarse].median;
            for (auto& [v, s] : b.times) {
                json_object rec = ctx.record();
                rec.add("app", a->name).add("version", apps::version_name(v)).add("workers", b.workers);
                rec.add("size", size).add_summary("time_s", s);
                rec.add("vs_serial", b.vs_serial[v]).add("vs_coarse", b.vs_coarse[v]);
                if (v != version::filaments) rec.add("rounds", s.n);
                if (v == version::filaments) {
                    rec.add("filaments_created", static_cast<unsigned long long>(b.st.filaments_created))
                        .add("filaments_run", static_cast<unsigned long long>(b.st.filaments_run))
                        .add("forks", static_cast<unsigned long long>(b.st.forks))
                        .add("forks_pruned", static_cast<unsigned long long>(b.st.forks_pruned))
                        .add("steals", static_cast<unsigned long long>(b.st.steals))
                        .add("pools_coarsened", static_cast<unsigned long long>(b.st.pools_dense_1d + b.st.pools_dense_2d))
                        .add("pools_general", static_cast<unsigned long long>(b.st.pools_general))
                        .add("sweeps", static_cast<unsigned long long>(b.st.sweeps))
                        .add("fil_over_serial", b.fil_vs_serial)
                        .add("fil_over_coarse", b.fil_vs_coarse)
                        .add("speedup", b.vs_serial[v])
                        .add("rounds", s.n);
                }
                add_provenance(rec);
                ctx.emit(rec);
            }
            if (!b.copies_times.empty()) {
                json_object rec = ctx.record();
                rec.add("app", a->name).add("version", "serial_copies").add("workers", b.workers).add("size", size);
                rec.add_summary("time_s", summarize(b.copies_times)).add("ceiling", b.ceiling);
                add_provenance(rec);
                ctx.emit(rec);
            }
            const double fil = b.times[version::filaments].median;
            auto peer = [&](version v) { return b.times.count(v) ? fmt(b.times[v].median, 3) : std::string("-"); };
            t.add_row({a->name, std::to_string(size), std::to_string(b.workers), fmt(serial.median, 3), fmt(coarse, 3),
                       fmt(fil, 3), fmt_ratio(b.fil_vs_serial), fmt_ratio(b.fil_vs_coarse),
                       fmt_ratio(b.vs_serial[version::filaments]), b.ceiling > 0 ? fmt_ratio(b.ceiling) : std::string("-"),
                       peer(version::omp), peer(version::tbb),
                       fmt_sig(static_cast<double>(b.st.forks)), fmt_sig(static_cast<double>(b.st.forks_pruned)),
                       fmt_sig(static_cast<double>(b.st.pools_dense_1d + b.st.pools_dense_2d)),
                       fmt_sig(static_cast<double>(b.st.steals))});
        }
        t.add_separator();
    }
    ctx.print(t, "filaments: the Filaments paper's applications, serial / coarse / filaments / peers (medians, s)");
    if (std::string w = build_warning(); !w.empty()) ctx.warn("%s", w.c_str());
    return 0;
}

registrar const reg{experiment{
    .name = "filaments",
    .description = "the Filaments paper's applications: serial, coarse-grain (a thread per core), filaments, peers",
    .details = "Runs each application of apps/ (--app NAME[,NAME...] or all) at its benchmark size (serial\n"
               "1-3 s; --size for one application, --demo-sizes for the smaller demo ones). At each --workers\n"
               "count the rounds of serial, coarse-grain, filaments and the peers are interleaved (round r\n"
               "runs each in turn); every output is checked against a serial reference. Programs shorter\n"
               "than --min-seconds get more rounds. fil/serial and fil/coarse are medians of the per-round\n"
               "ratios, and so are vs_serial (the speedup) and vs_coarse of every version. At more than one worker\n"
               "each round also runs W copies of the serial program at once (each on a kernel thread and an\n"
               "instance of its own): 'ceiling' is W x the median of (the round's serial) / (the copies), about\n"
               "the most any parallel version can reach on this machine in this run (docs/bench.md).\n"
               "Figures per (app, version, workers): time_s (median over the rounds; also _spread/_min/_max),\n"
               "vs_serial, vs_coarse, and for filaments: filaments_created, filaments_run, forks,\n"
               "forks_pruned, steals, pools_coarsened, pools_general, sweeps (of one untimed run on a\n"
               "measuring runtime, which counts pruned forks), fil_over_serial, fil_over_coarse, speedup,\n"
               "rounds; version serial_copies: time_s and ceiling.",
    .options =
        {
            {.name = "app", .kind = opt_kind::string, .metavar = "NAME", .default_value = "all",
             .help = "applications, comma-separated, or all (an unknown name lists the valid ones)"},
            {.name = "rounds", .kind = opt_kind::integer, .metavar = "N", .default_value = "3",
             .help = "timed rounds per version (the median is reported)", .min = 1, .max = 1000},
            {.name = "size", .kind = opt_kind::integer, .metavar = "N", .default_value = "0",
             .help = "problem size of the one --app (0: its benchmark size)", .min = 0, .max = 1e12},
            {.name = "demo-sizes", .kind = opt_kind::flag, .help = "use each application's demo size"},
            {.name = "workers", .kind = opt_kind::list, .metavar = "LIST", .default_value = "1,2",
             .help = "worker counts, comma-separated"},
            {.name = "no-peers", .kind = opt_kind::flag, .help = "skip the OpenMP and oneTBB versions"},
            {.name = "min-seconds", .kind = opt_kind::number, .metavar = "S", .default_value = "1",
             .help = "more rounds for short programs: at least S seconds of serial time per version", .min = 0,
             .max = 3600},
        },
    .run = run,
    .in_demo = true,
    .demo_args = {"--app", "fib,quadrature,quicksort,jacobi,matmul", "--demo-sizes", "--rounds", "2", "--min-seconds",
                  "0.3", "--no-peers"},
    .demo_order = 30,
}};

}  // namespace
}  // namespace weft::bench::filaments
