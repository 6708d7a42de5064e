// weft-bench suite000: Narlikar & Blelloch's application suite ("Pthreads for
// Dynamic and Irregular Parallelism", §4, Figures 8-11): the plain Pthreads
// programs of apps/ (docs/design/pthreads-apps.md), each binary run as it is
// on glibc's threads and under libweft-pthread (LD_PRELOAD).
//
// Per program, three families of runs (the JSON field `figure`):
//  - "8": per worker count W, the serial version (on glibc, and under the shim
//    for its heap); the coarse-grained version (W threads) on glibc and under
//    the shim (ws); the fine-grained version on glibc and under the shim with
//    each --sched; for the FFT also FFTW, threads off and on W threads.
//  - "10" (the FFT): p threads (the coarse version under ws) against the fine
//    version's 256 leaves under fifo and dfs, as the workers go over
//    --sweep-workers; past the CPUs the workers are oversubscribed.
//  - "11" (volume rendering): the fine version under fifo and dfs on 2
//    workers as the tiles per thread go over --sweep-tiles.
// Under the shim WEFT_WORKERS=W, WEFT_ADAPT=off and WEFT_STATS=1: the most
// threads live, work T1, span T-inf, the stacks' and the heap's high-water
// marks come from weft's statistics (the heap's when it prints one; null
// otherwise). Every configuration runs once per round, in turn (interleaved,
// so the machine's drift falls on all); the first round runs with the
// program's own check against its serial version, later ones with --no-check.
// Times are the programs' own (the timed part, without input generation and
// the check).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "harness.hpp"

namespace weft::bench::suite000 {
namespace {

namespace fs = std::filesystem;

// One program's sizes: size parameters for the JSON rows, the arguments that
// select them, and those only the program's own versions take (not a peer's).
struct sizes {
    std::vector<std::string> args;
    std::vector<std::pair<std::string, long>> params;
    std::vector<std::string> own_args{};
};

// The value of a size parameter at each --size.
long at(std::string const& size, long full, long demo, long quick, long test) {
    return size == "full" ? full : size == "demo" ? demo : size == "quick" ? quick : test;
}

sizes sizes_of(std::string const& app, std::string const& size) {
    if (app == "fft1d") {
        // The leaf: 256 leaves at every size, the paper's 256 threads.
        long const log2n = at(size, 22, 18, 18, 12), leaf = 1L << (log2n - 8);
        return {
            {"--log2n", std::to_string(log2n)}, {{"log2n", log2n}, {"leaf", leaf}}, {"--leaf", std::to_string(leaf)}};
    }
    if (app == "spmv") {
        long const rows = at(size, 30169, 30169, 30169, 2000), products = at(size, 20, 20, 20, 5);
        return {{"--rows", std::to_string(rows), "--products", std::to_string(products)},
                {{"rows", rows}, {"products", products}}};
    }
    if (app == "barnes") {
        long const bodies = at(size, 100000, 20000, 5000, 2000), steps = at(size, 4, 4, 3, 3);
        return {{"--bodies", std::to_string(bodies), "--steps", std::to_string(steps)},
                {{"bodies", bodies}, {"steps", steps}}};
    }
    if (app == "fmm") {
        long const particles = at(size, 10000, 10000, 4000, 1000), levels = at(size, 4, 4, 3, 3), terms = 5;
        return {{"--particles", std::to_string(particles), "--levels", std::to_string(levels), "--terms",
                 std::to_string(terms)},
                {{"particles", particles}, {"levels", levels}, {"terms", terms}}};
    }
    if (app == "dtree") {
        long const instances = at(size, 133999, 40000, 20000, 3000), min_node = at(size, 64, 64, 32, 16);
        return {{"--instances", std::to_string(instances), "--min-node", std::to_string(min_node)},
                {{"instances", instances}, {"min_node", min_node}}};
    }
    long const volume = at(size, 256, 128, 64, 32), image = at(size, 375, 188, 128, 40), frames = at(size, 4, 2, 1, 2);
    return {{"--volume", std::to_string(volume), "--image", std::to_string(image), "--frames", std::to_string(frames)},
            {{"volume", volume}, {"image", image}, {"frames", frames}}};
}

struct config {
    std::string figure;   // "8" (the suite's table), "10" (FFT sweep), "11" (volrend sweep)
    std::string version;  // serial, coarse, fine, fftw
    bool weft = false;    // under the shim
    std::string sched;    // weft's scheduler ("" on glibc)
    int workers = 1;
    std::vector<std::string> args;  // the version's own arguments
    long program_threads = -1;      // --threads given to the program (-1: none)
    long tiles_per_thread = -1;     // volrend's fine version (-1: not given)
    std::string label() const {
        std::string s =
            "fig" + figure + " " + version + (weft ? " weft " + sched : " glibc") + " w" + std::to_string(workers);
        if (program_threads < 0 && version == "fftw") s += " threads off";
        if (tiles_per_thread >= 0) s += " g" + std::to_string(tiles_per_thread);
        return s;
    }
};

struct run_result {
    double time_s = 0;
    long created = 0, max_live = 0;  // the program's counts
    long weft_max_live = -1;         // weft's statistics (shim runs)
    double t1_s = -1, tinf_s = -1;
    long long stack_peak = -1, heap_peak = -1;  // weft's high-water marks (-1: not printed)
};

run_result run_once(std::string const& program, std::string const& shim, config const& c, sizes const& s, bool check) {
    // sh puts the preload on the program only (not on sh) and merges its
    // stderr, where weft's statistics go, into the pipe.
    std::vector<std::string> args{"sh",
                                  "-c",
                                  "p=$1; shift; if [ -n \"$p\" ]; then LD_PRELOAD=$p; export LD_PRELOAD; fi; "
                                  "exec \"$0\" \"$@\" 2>&1",
                                  program,
                                  c.weft ? shim : "",
                                  "--version",
                                  c.version};
    args.insert(args.end(), s.args.begin(), s.args.end());
    args.insert(args.end(), c.args.begin(), c.args.end());
    if (c.version != "fftw") args.insert(args.end(), s.own_args.begin(), s.own_args.end());
    if (!check) args.push_back("--no-check");
    std::vector<std::string> env{"LD_PRELOAD", "WEFT_ADAPT=off"};
    if (c.weft) {
        env.push_back("WEFT_STATS=1");
        env.push_back("WEFT_SCHED=" + c.sched);
        env.push_back("WEFT_WORKERS=" + std::to_string(c.workers));
    }
    int status = 0;
    std::string const out = run_piped("/bin/sh", args, env, &status);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("suite000: %s %s failed (status %d):\n%s", program.c_str(), c.label().c_str(), status, out.c_str());
    run_result r;
    r.time_s = number_after(out, ": time ");
    r.created = static_cast<long>(number_after(out, "threads created "));
    r.max_live = static_cast<long>(number_after(out, "most alive at once "));
    if (c.weft) {
        r.weft_max_live = static_cast<long>(number_after(out, "most threads live"));
        r.t1_s = number_after(out, "work T1 / span Tinf") * 1e-3;
        auto const slash = out.find(" ms / ", out.find("work T1 / span Tinf"));
        if (slash != std::string::npos) r.tinf_s = std::strtod(out.c_str() + slash + 6, nullptr) * 1e-3;
        r.stack_peak = peak_on_line(out, "stack bytes mapped");
        r.heap_peak = peak_on_line(out, "heap bytes");
    }
    if (!(r.time_s >= 0))
        die("suite000: no time line in the output of %s %s:\n%s", program.c_str(), c.label().c_str(), out.c_str());
    return r;
}

bool has_fftw(std::string const& program) {
    int status = 0;
    run_piped(program, {program, "--version", "fftw", "--log2n", "2"}, {"LD_PRELOAD"}, &status);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::vector<std::string> threads_arg(long p) { return {"--threads", std::to_string(p)}; }
std::vector<std::string> tiles_arg(long g) { return {"--tiles-per-thread", std::to_string(g)}; }

// Figure 8's runs. tiles: volrend's --tiles-per-thread for the fine version
// (-1: none, the other programs).
std::vector<config> table_configs(std::vector<int> const& workers, std::vector<std::string> const& scheds, bool fftw,
                                  long tiles) {
    std::vector<config> out{{"8", "serial", false, "", 1, {}}, {"8", "serial", true, "dfs", 1, {}}};
    if (fftw) out.push_back({"8", "fftw", false, "", 1, {}});
    std::vector<std::string> const fine_args = tiles >= 0 ? tiles_arg(tiles) : std::vector<std::string>{};
    for (int w : workers) {
        out.push_back({"8", "coarse", false, "", w, threads_arg(w), w});
        out.push_back({"8", "coarse", true, "ws", w, threads_arg(w), w});
        out.push_back({"8", "fine", false, "", w, fine_args, -1, tiles});
        for (auto const& s : scheds) out.push_back({"8", "fine", true, s, w, fine_args, -1, tiles});
        if (fftw) {
            out.push_back({"8", "fftw", false, "", w, threads_arg(w), w});
            out.push_back({"8", "fftw", true, "ws", w, threads_arg(w), w});
        }
    }
    return out;
}

// Figure 10: the FFT with p threads (the coarse version, p = workers) against
// its 256 leaves under fifo (the paper's original scheduler) and dfs.
std::vector<config> fft_sweep_configs(std::vector<long> const& workers) {
    std::vector<config> out;
    for (long w : workers) {
        int const wi = static_cast<int>(w);
        out.push_back({"10", "coarse", true, "ws", wi, threads_arg(w), w});
        for (char const* s : {"fifo", "dfs"}) out.push_back({"10", "fine", true, s, wi, {}});
    }
    return out;
}

// Figure 11: volume rendering's fine version under fifo and dfs on 2 workers
// as the tiles per thread vary.
std::vector<config> tiles_sweep_configs(std::vector<long> const& tiles) {
    std::vector<config> out;
    for (long g : tiles)
        for (char const* s : {"fifo", "dfs"}) out.push_back({"11", "fine", true, s, 2, tiles_arg(g), -1, g});
    return out;
}

// A list option's items as integers from 1 to max (none for "none"), or a usage
// error naming the item.
std::vector<long> counts(std::vector<std::string> const& items, char const* name, long max) {
    std::vector<long> out;
    if (items == std::vector<std::string>{"none"}) return out;
    for (auto const& item : items) {
        char* end = nullptr;
        long const v = std::strtol(item.c_str(), &end, 10);
        if (end == item.c_str() || *end != '\0' || v < 1 || v > max)
            throw usage_error(std::string("weft-bench suite000: --") + name + ": '" + item +
                              "' is not an integer from 1 to " + std::to_string(max));
        out.push_back(v);
    }
    return out;
}

// "a,b,c" as its items.
std::vector<std::string> split(std::string const& text) {
    std::vector<std::string> out;
    for (std::size_t start = 0; start < text.size();) {
        std::size_t const comma = std::min(text.find(',', start), text.size());
        if (comma > start) out.push_back(text.substr(start, comma - start));
        start = comma + 1;
    }
    return out;
}

// One configuration's figures over the rounds.
struct figures {
    summary time;
    double speedup = 0;
    long live = 0;
    double t1 = -1, tinf = -1;
    long long stack_peak = -1, heap_peak = -1;
};

figures figures_of(config const& c, std::vector<run_result> const& runs, std::vector<double> const& serial_times) {
    figures f;
    std::vector<double> times, t1, tinf;
    for (auto const& rr : runs) {
        times.push_back(rr.time_s);
        t1.push_back(rr.t1_s);
        tinf.push_back(rr.tinf_s);
        f.live = std::max(f.live, c.weft ? rr.weft_max_live : rr.max_live);
        f.stack_peak = std::max(f.stack_peak, rr.stack_peak);
        f.heap_peak = std::max(f.heap_peak, rr.heap_peak);
    }
    f.time = summarize(times);
    f.speedup = median_of_ratios(serial_times, times);
    if (c.weft) {
        f.t1 = summarize(t1).median;
        f.tinf = summarize(tinf).median;
    }
    return f;
}

void add_or_null(json_object& rec, char const* key, long long v) {
    if (v >= 0)
        rec.add(key, v);
    else
        rec.add_null(key);
}

std::string mib_or_dash(long long v) { return v >= 0 ? fmt(static_cast<double>(v) / (1 << 20), 2) : "-"; }

// Emits a target row: {"target":NAME,"value":..,"bound":..,"met":..}; a
// missing value (why non-empty) is null and not met.
void target(context& ctx, std::string const& name, std::string const& app, double value, double bound, bool met,
            std::string const& why = {}) {
    json_object rec = ctx.record();
    rec.add("target", name).add("app", app);
    if (why.empty())
        rec.add("value", value);
    else
        rec.add_null("value").add("why", why);
    rec.add("bound", bound).add("met", why.empty() && met);
    ctx.emit(rec);
    if (why.empty())
        ctx.say("target %s: %.3f (bound %.2f, %s)\n", name.c_str(), value, bound, met ? "met" : "missed");
    else
        ctx.say("target %s: unknown, not met (%s)\n", name.c_str(), why.c_str());
}

int run(context& ctx) {
    auto const& o = ctx.opts();
    bool const quick = o.flag("quick");
    // --quick: the demo's size; options given explicitly win.
    auto list_of = [&](char const* name, char const* quick_value) {
        return quick && !o.given(name) ? split(quick_value) : o.list(name);
    };
    int const rounds = quick && !o.given("rounds") ? 1 : static_cast<int>(o.integer("rounds"));
    std::string const size = quick && !o.given("size") ? "quick" : o.string("size");
    std::vector<long> const worker_list = counts(list_of("workers", "2"), "workers", 256);
    std::vector<int> const workers(worker_list.begin(), worker_list.end());
    std::vector<std::string> const scheds = o.list("sched");
    long const tiles = o.integer("tiles-per-thread");
    std::vector<long> const sweep_workers = counts(list_of("sweep-workers", "1,2,4,8"), "sweep-workers", 256);
    // 8,836: the tiles of the paper's 375x375 image.
    std::vector<long> const sweep_tiles = counts(list_of("sweep-tiles", "1,4,16,64,256,1024"), "sweep-tiles", 8836);
    int const cpus = static_cast<int>(allowed_cpus().size());
    fs::path const bin = fs::path(self_exe()).parent_path();
    std::string const shim =
        o.given("shim") ? o.string("shim") : (bin.parent_path() / "lib" / "libweft-pthread.so").string();
    if (!fs::is_regular_file(shim))
        die("suite000: libweft-pthread not found at %s (build it, or give --shim)", shim.c_str());

    for (auto const& app : o.list("apps")) {
        std::string const program = (bin / ("pthreads_" + app)).string();
        if (!fs::is_regular_file(program))
            die("suite000: %s not found (build the target pthreads_%s)", program.c_str(), app.c_str());
        sizes const s = sizes_of(app, size);
        std::vector<config> configs =
            table_configs(workers, scheds, app == "fft1d" && has_fftw(program), app == "volrend" ? tiles : -1);
        std::vector<config> sweep;
        if (app == "fft1d") sweep = fft_sweep_configs(sweep_workers);
        if (app == "volrend") {
            // Groupings larger than the image's tiles would all be one thread.
            long const image = s.params[1].second, image_tiles = ((image + 3) / 4) * ((image + 3) / 4);
            std::vector<long> fit;
            for (long g : sweep_tiles)
                if (g <= image_tiles) fit.push_back(g);
            if (fit.size() < sweep_tiles.size())
                ctx.say("volrend: Figure 11 leaves out the tiles per thread above the %ld tiles of a %ldx%ld image\n",
                        image_tiles, image, image);
            sweep = tiles_sweep_configs(fit);
        }
        configs.insert(configs.end(), sweep.begin(), sweep.end());

        // The first round checks each result against the serial version's;
        // --quick checks one run per program (the first fine one under the
        // shim), as some checks cost more than the run.
        auto const first_fine_weft =
            std::find_if(configs.begin(), configs.end(), [](config const& c) { return c.version == "fine" && c.weft; });
        std::vector<std::vector<run_result>> results(configs.size());
        for (int r = 0; r < rounds; ++r) {
            ctx.progress("%s: round %d of %d (%zu configurations)", app.c_str(), r + 1, rounds, configs.size());
            for (std::size_t i = 0; i < configs.size(); ++i) {
                bool const check = r == 0 && (!quick || configs.begin() + static_cast<long>(i) == first_fine_weft);
                results[i].push_back(run_once(program, shim, configs[i], s, check));
            }
        }
        std::vector<double> serial_times;
        for (auto const& rr : results[0]) serial_times.push_back(rr.time_s);
        long long const serial_heap = figures_of(configs[1], results[1], serial_times).heap_peak;

        std::map<std::string, figures> by_label;
        std::map<std::string, table> tables;
        for (std::size_t i = 0; i < configs.size(); ++i) {
            auto const& c = configs[i];
            figures const f = figures_of(c, results[i], serial_times);
            by_label[c.label()] = f;
            bool const oversubscribed = c.weft && c.workers > cpus;
            json_object rec = ctx.record();
            rec.add("app", app).add("figure", c.figure).add("version", c.version);
            rec.add("threads", c.weft ? "weft" : "glibc");
            if (c.weft)
                rec.add("sched", c.sched);
            else
                rec.add_null("sched");
            add_or_null(rec, "program_threads", c.program_threads);
            if (c.tiles_per_thread >= 0) rec.add("tiles_per_thread", c.tiles_per_thread);
            rec.add("workers", c.workers).add("oversubscribed", oversubscribed).add("size", size);
            rec.add_summary("time_s", f.time).add("speedup", f.speedup);
            add_or_null(rec, "peak_heap_bytes", f.heap_peak);
            add_or_null(rec, "stack_bytes_peak", f.stack_peak);
            rec.add("max_live_threads", f.live).add("threads_created", results[i][0].created);
            if (c.weft)
                rec.add("t1_s", f.t1).add("tinf_s", f.tinf);
            else
                rec.add_null("t1_s").add_null("tinf_s");
            for (auto const& [k, v] : s.params) rec.add(k, v);
            rec.add("rounds", rounds);
            add_provenance(rec);
            ctx.emit(rec);
            std::string const tiles_or_oversub = c.figure == "11" ? std::to_string(c.tiles_per_thread)
                                                 : oversubscribed ? "yes"
                                                                  : "";
            std::vector<std::string> const headers{
                "version",    "threads", "sched",   "workers",      c.figure == "11" ? "tiles/thread" : "oversub",
                "time (s)",   "spread",  "speedup", "threads live", "heap MiB",
                "stacks MiB", "T1 (s)",  "Tinf (s)"};
            auto const it = tables.try_emplace(c.figure, table(headers)).first;
            it->second.add_row({c.version, c.weft ? "weft" : "glibc", c.sched, std::to_string(c.workers),
                                tiles_or_oversub, fmt(f.time.median, 4), fmt_pct(f.time.spread), fmt_ratio(f.speedup),
                                std::to_string(f.live), mib_or_dash(f.heap_peak), mib_or_dash(f.stack_peak),
                                c.weft ? fmt(f.t1, 3) : "", c.weft ? fmt(f.tinf, 3) : ""});
        }
        ctx.print(tables.at("8"), app + " (" + size + " size; Narlikar & Blelloch, Figure 8)");
        if (tables.count("10"))
            ctx.print(tables.at("10"),
                      "fft1d: p threads (coarse, ws) against 256 leaves (fine, fifo and dfs) as the "
                      "workers grow (Figure 10); workers past the " +
                          std::to_string(cpus) + " CPUs are oversubscribed (oversub: yes)");
        if (tables.count("11"))
            ctx.print(tables.at("11"),
                      "volrend: the fine version on 2 workers as the tiles per thread grow, fifo "
                      "against dfs (Figure 11)");

        // The targets at 2 workers.
        if (std::find(workers.begin(), workers.end(), 2) == workers.end()) continue;
        auto median = [&](std::string const& label) {
            auto const it = by_label.find(label);
            return it == by_label.end() ? -1.0 : it->second.time.median;
        };
        double const coarse = median("fig8 coarse glibc w2");
        std::string const g = app == "volrend" ? " g" + std::to_string(tiles) : "";
        double const fine_glibc = median("fig8 fine glibc w2" + g);
        for (auto const& s2 : {"dfs", "ws"}) {
            double const fine = median(std::string("fig8 fine weft ") + s2 + " w2" + g);
            if (fine < 0) continue;
            target(ctx, app + "_fine_" + s2 + "_w2_over_coarse", app, fine / coarse, 1.10, fine <= 1.10 * coarse);
            target(ctx, app + "_fine_" + s2 + "_w2_over_fine_glibc", app, fine / fine_glibc, 1.0, fine < fine_glibc);
        }
        if ((app == "fmm" || app == "dtree") && by_label.count("fig8 fine weft dfs w2")) {
            long long const heap = by_label["fig8 fine weft dfs w2"].heap_peak;
            std::string const why = heap < 0 || serial_heap <= 0
                                        ? "weft's statistics print no heap high-water mark: libweft-pthread does not "
                                          "account the program's malloc in this build"
                                        : "";
            double const ratio = why.empty() ? static_cast<double>(heap) / static_cast<double>(serial_heap) : 0;
            target(ctx, app + "_fine_dfs_w2_heap_over_serial", app, ratio, 1.25, ratio <= 1.25, why);
        }
        if (app == "fft1d" && median("fig8 fftw glibc w2") > 0 && median("fig8 fine weft ws w2") > 0) {
            // The FFT against FFTW's threaded transform (docs/design/pthreads-apps.md states the gap).
            double const ratio = median("fig8 fine weft ws w2") / median("fig8 fftw glibc w2");
            target(ctx, "fft1d_fine_ws_w2_over_fftw_threads", app, ratio, 1.0, ratio <= 1.0);
        }
    }
    return 0;
}

registrar const reg{experiment{
    .name = "suite000",
    .description =
        "Narlikar & Blelloch's suite (FFT, sparse matrix-vector, volume rendering, decision tree, Barnes-Hut, "
        "FMM): glibc vs libweft-pthread, Figures 8-11",
    .details =
        "Runs apps/'s plain Pthreads programs (bin/pthreads_<app>) as they are on glibc's threads and under\n"
        "libweft-pthread (LD_PRELOAD). Figure 8: serial (on glibc, and under the shim for its heap); coarse-grained\n"
        "(W threads) on glibc and weft ws; fine-grained on glibc and weft under each --sched; FFTW for the FFT\n"
        "where built. Figure 10: the FFT with p threads (coarse, ws) against 256 leaves (fine, fifo and dfs) over\n"
        "--sweep-workers, oversubscribed past the CPUs. Figure 11: volume rendering's fine version under fifo and\n"
        "dfs on 2 workers over --sweep-tiles. Each configuration once per round, interleaved; times are the\n"
        "programs' own; speedup is the median of each round's ratio to its serial run. Weft's statistics\n"
        "(WEFT_STATS=1) give the most threads live, T1/T-inf and the stacks' and heap's high-water marks\n"
        "(peak_heap_bytes is null where the shim prints none). See docs/bench.md and docs/design/pthreads-apps.md.",
    .options = {{.name = "apps",
                 .kind = opt_kind::list,
                 .metavar = "LIST",
                 .default_value = "fft1d,spmv,volrend,dtree,barnes,fmm",
                 .help = "programs to run",
                 .choices = {"fft1d", "spmv", "volrend", "dtree", "barnes", "fmm"}},
                {.name = "size",
                 .kind = opt_kind::string,
                 .metavar = "NAME",
                 .default_value = "full",
                 .help = "full (the paper's), demo (shorter), quick (the demo's; --quick) or test (the tests')",
                 .choices = {"full", "demo", "quick", "test"}},
                opt_rounds(3),
                {.name = "workers",
                 .kind = opt_kind::list,
                 .metavar = "LIST",
                 .default_value = "1,2",
                 .help = "Figure 8's worker counts (coarse: as many threads; --quick: 2)"},
                opt_sched_list("fifo,lifo,dfs,ws", "weft schedulers for Figure 8's fine-grained runs"),
                {.name = "tiles-per-thread",
                 .kind = opt_kind::integer,
                 .metavar = "G",
                 .default_value = "64",
                 .help = "volrend's fine version in Figure 8: 4x4 tiles per thread (the paper's 64)",
                 .min = 1,
                 .max = 8836},
                {.name = "sweep-workers",
                 .kind = opt_kind::list,
                 .metavar = "LIST",
                 .default_value = "1,2,3,4,5,6,7,8,12,16",
                 .help = "Figure 10: the FFT's worker counts, past the CPUs oversubscribed (none: no sweep; --quick: "
                         "1,2,4,8)"},
                {.name = "sweep-tiles",
                 .kind = opt_kind::list,
                 .metavar = "LIST",
                 .default_value = "1,2,4,8,16,32,64,128,256,512,1024",
                 .help = "Figure 11: volrend's tiles per thread (none: no sweep; --quick: 1,4,16,64,256,1024)"},
                {.name = "quick",
                 .kind = opt_kind::flag,
                 .help = "the demo's short run: --size quick --rounds 1 --workers 2 and shorter sweeps (options "
                         "given explicitly win)"},
                {.name = "shim",
                 .kind = opt_kind::string,
                 .metavar = "PATH",
                 .default_value = "",
                 .help = "libweft-pthread.so (default: ../lib/ beside this executable)"}},
    .run = run,
    .in_demo = true,
    .demo_args = {"--quick"},
    .demo_order = 70,
}};

}  // namespace
}  // namespace weft::bench::suite000
