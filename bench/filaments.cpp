// weft-bench filaments — seed 004's application suite (apps/, apps/app.hpp):
// every application in its serial, coarse-grain, filaments and peer versions,
// at each worker count, with the ratios the paper's Tables 1-4 report.
//
// Per application: the serial version runs first (no runtime involved) and is
// the reference every other version's output is checked against (a mismatch
// stops the run: a fast wrong answer is not a result). Then, per --workers
// count, weft is started with that many workers and each version runs one
// untimed warm-up round and --rounds timed rounds. Peers run last, so that an
// OpenMP team spinning after its region does not steal the CPUs of weft.
//
// One JSON line per (application, version, workers):
//   app, version, workers, size, time_s (median; _spread/_min/_max),
//   vs_serial (serial time / this time: the speedup), vs_coarse (coarse-grain
//   time / this time, same workers); for the filaments version the filament
//   statistics of its timed rounds: filaments_created, filaments_run, forks,
//   forks_pruned, steals, pools_coarsened (1-D + 2-D dense sweeps),
//   pools_general, sweeps.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "apps/app.hpp"
#include "harness.hpp"
#include "weft/weft.h"

namespace weft::bench::filaments {
namespace {

using apps::version;

// Runs version v of inst once after a reset (the reset is not timed).
struct timed_run {
    apps::instance& inst;
    version v;
    int workers;
    std::uint64_t run() {
        inst.reset();
        std::uint64_t t0 = now_ns();
        inst.run(v, workers);
        return now_ns() - t0;
    }
};

summary time_version(apps::instance& inst, version v, int workers, int rounds) {
    timed_run t{inst, v, workers};
    t.run();  // warm-up
    std::vector<double> s;
    for (int r = 0; r < rounds; ++r) s.push_back(static_cast<double>(t.run()) * 1e-9);
    return summarize(s);
}

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

int run(context& ctx) {
    const int rounds = static_cast<int>(ctx.opts().integer("rounds"));
    const long size_opt = static_cast<long>(ctx.opts().integer("size"));
    const bool demo_sizes = ctx.opts().flag("demo-sizes");
    const std::vector<const apps::app*> chosen = selected_apps(ctx.opts().string("app"));
    if (size_opt && chosen.size() != 1) die("filaments: --size needs exactly one --app (sizes differ per application)");
    std::vector<std::string> ws = ctx.opts().list("workers");

    table t({"app", "size", "workers", "serial s", "coarse s", "filaments s", "fil/serial", "fil/coarse", "speedup",
             "omp s", "tbb s", "forks", "pruned", "coarsened", "steals"});
    for (const apps::app* a : chosen) {
        const long size = size_opt ? size_opt : demo_sizes ? a->demo_size : a->bench_size;
        // The reference output comes from its own instance; every version,
        // serial included, is timed on `inst`, so that all of them run on the
        // same memory (where two grids fall relative to each other, 4 KiB
        // aliasing among others, moves a stencil's time by tens of percent).
        auto reference = apps::make_instance(*a, size);
        reference->reset();
        reference->run(version::serial, 1);
        auto inst = apps::make_instance(*a, size);
        summary serial = time_version(*inst, version::serial, 1, rounds);
        {
            json_object rec = ctx.record();
            rec.add("app", a->name).add("version", "serial").add("workers", 1).add("size", size);
            rec.add_summary("time_s", serial).add("vs_serial", 1.0);
            add_provenance(rec);
            ctx.emit(rec);
        }
        for (const std::string& w : ws) {
            weft_config_t cfg{};
            cfg.workers = std::stoi(w);
            check(weft_init(&cfg), "weft_init");
            std::map<version, summary> times;
            weft_fil_stats_t st{};
            std::vector<version> order = apps::versions_of(*a);
            for (version v : order) {
                if (v == version::serial) continue;
                if (v == version::filaments) check(weft_fil_stats_reset(), "weft_fil_stats_reset");
                times[v] = time_version(*inst, v, cfg.workers, rounds);
                if (v == version::filaments) check(weft_fil_stats_get(&st), "weft_fil_stats_get");
                if (std::string diff = inst->compare(*reference); !diff.empty())
                    die("filaments: %s %s on %d workers differs from serial: %s", a->name, apps::version_name(v),
                        cfg.workers, diff.c_str());
            }
            check(weft_finalize(), "weft_finalize");

            const double coarse = times[version::coarse].median;
            for (auto& [v, s] : times) {
                json_object rec = ctx.record();
                rec.add("app", a->name).add("version", apps::version_name(v)).add("workers", cfg.workers);
                rec.add("size", size).add_summary("time_s", s);
                rec.add("vs_serial", serial.median / s.median).add("vs_coarse", coarse / s.median);
                if (v == version::filaments) {
                    rec.add("filaments_created", static_cast<unsigned long long>(st.filaments_created))
                        .add("filaments_run", static_cast<unsigned long long>(st.filaments_run))
                        .add("forks", static_cast<unsigned long long>(st.forks))
                        .add("forks_pruned", static_cast<unsigned long long>(st.forks_pruned))
                        .add("steals", static_cast<unsigned long long>(st.steals))
                        .add("pools_coarsened", static_cast<unsigned long long>(st.pools_dense_1d + st.pools_dense_2d))
                        .add("pools_general", static_cast<unsigned long long>(st.pools_general))
                        .add("sweeps", static_cast<unsigned long long>(st.sweeps));
                }
                add_provenance(rec);
                ctx.emit(rec);
            }
            const double fil = times[version::filaments].median;
            auto peer = [&](version v) { return times.count(v) ? fmt(times[v].median, 3) : std::string("-"); };
            t.add_row({a->name, std::to_string(size), w, fmt(serial.median, 3), fmt(coarse, 3), fmt(fil, 3),
                       fmt_ratio(fil / serial.median), fmt_ratio(fil / coarse), fmt_ratio(serial.median / fil),
                       peer(version::omp), peer(version::tbb), fmt_sig(static_cast<double>(st.forks)),
                       fmt_sig(static_cast<double>(st.forks_pruned)),
                       fmt_sig(static_cast<double>(st.pools_dense_1d + st.pools_dense_2d)),
                       fmt_sig(static_cast<double>(st.steals))});
        }
        t.add_separator();
    }
    ctx.print(t, "filaments: seed 004's applications, serial / coarse-grain / filaments / peers (medians, s)");
    if (std::string w = build_warning(); !w.empty()) ctx.warn("%s", w.c_str());
    return 0;
}

registrar const reg{experiment{
    .name = "filaments",
    .description = "seed 004's applications: serial, coarse-grain (a thread per core), filaments, OpenMP, oneTBB",
    .details = "Runs each application of apps/ (--app NAME[,NAME...] or all) at its benchmark size (serial\n"
               "1-3 s; --size for one application, --demo-sizes for the smaller demo ones), serial first,\n"
               "then every other version at each --workers count; each output is checked against serial.\n"
               "Figures per (app, version, workers): time_s (median over --rounds; also _spread/_min/_max),\n"
               "vs_serial, vs_coarse, and for filaments: filaments_created, filaments_run, forks,\n"
               "forks_pruned, steals, pools_coarsened, pools_general, sweeps.",
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
        },
    .run = run,
    .in_demo = true,
    .demo_args = {"--rounds", "1", "--demo-sizes"},
    .demo_order = 30,
}};

}  // namespace
}  // namespace weft::bench::filaments
