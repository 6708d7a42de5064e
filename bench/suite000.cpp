// weft-bench suite000: Narlikar & Blelloch's application suite ("Pthreads for
// Dynamic and Irregular Parallelism", §4, Figures 8, 10 and 11): the plain
// Pthreads programs of apps/ (docs/design/pthreads-apps.md), each binary run
// as it is on glibc's threads and under libweft-pthread (LD_PRELOAD).
//
// Per program and worker count W: the serial version; the coarse-grained
// version (W threads) on glibc and under the shim (ws); the fine-grained
// version on glibc and under the shim with each --sched; for the FFT also
// FFTW, threads off and on W threads (where the program was built with it).
// Under the shim WEFT_WORKERS=W, WEFT_ADAPT=off and WEFT_STATS=1 (the most
// threads live, work T1 and span T-inf come from weft's statistics). Every
// configuration runs once per round, in turn (interleaved, so the machine's
// drift falls on all); the first round runs with the program's own check
// against its serial version, later ones with --no-check. Times are the
// programs' own (the timed part, without input generation and the check).
// peak_heap_bytes is null: the shim does not yet account the program's malloc
// (docs/shim.md).
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

sizes sizes_of(std::string const& app, std::string const& size) {
    if (app == "fft1d") {
        // The leaf: 256 leaves at every size, the paper's 256 threads.
        long const log2n = size == "full" ? 22 : size == "demo" ? 18 : 12, leaf = 1L << (log2n - 8);
        return {
            {"--log2n", std::to_string(log2n)}, {{"log2n", log2n}, {"leaf", leaf}}, {"--leaf", std::to_string(leaf)}};
    }
    if (app == "spmv") {
        long const rows = size == "test" ? 2000 : 30169, products = size == "test" ? 5 : 20;
        return {{"--rows", std::to_string(rows), "--products", std::to_string(products)},
                {{"rows", rows}, {"products", products}}};
    }
    if (app == "barnes") {
        long const bodies = size == "full" ? 100000 : size == "demo" ? 20000 : 2000, steps = size == "test" ? 3 : 4;
        return {{"--bodies", std::to_string(bodies), "--steps", std::to_string(steps)},
                {{"bodies", bodies}, {"steps", steps}}};
    }
    if (app == "fmm") {
        long const particles = size == "test" ? 1000 : 10000, levels = size == "test" ? 3 : 4, terms = 5;
        return {{"--particles", std::to_string(particles), "--levels", std::to_string(levels), "--terms",
                 std::to_string(terms)},
                {{"particles", particles}, {"levels", levels}, {"terms", terms}}};
    }
    if (app == "dtree") {
        long const instances = size == "full" ? 133999 : size == "demo" ? 40000 : 3000;
        long const min_node = size == "test" ? 16 : 64;
        return {{"--instances", std::to_string(instances), "--min-node", std::to_string(min_node)},
                {{"instances", instances}, {"min_node", min_node}}};
    }
    long const volume = size == "full" ? 256 : size == "demo" ? 128 : 32;
    long const image = size == "full" ? 375 : size == "demo" ? 188 : 40;
    long const frames = size == "full" ? 4 : 2;
    return {{"--volume", std::to_string(volume), "--image", std::to_string(image), "--frames", std::to_string(frames)},
            {{"volume", volume}, {"image", image}, {"frames", frames}}};
}

struct config {
    std::string version;  // serial, coarse, fine, fftw
    bool weft = false;    // under the shim
    std::string sched;    // weft's scheduler ("" on glibc)
    int workers = 1;
    std::vector<std::string> args;  // the version's own arguments
    long program_threads = -1;      // --threads given to the program (-1: none)
    long tiles_per_thread = -1;     // volrend's fine version (-1: not given)
    std::string label() const {
        std::string s = version + (weft ? " weft " + sched : " glibc") + " w" + std::to_string(workers);
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
};

// A line's number after `key`, or -1.
double number_after(std::string const& out, char const* key) {
    auto const at = out.find(key);
    if (at == std::string::npos) return -1;
    return std::strtod(out.c_str() + at + std::strlen(key), nullptr);
}

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

// tiles: volrend's --tiles-per-thread values for the fine version (empty:
// the program's default, given to none).
std::vector<config> configs_of(std::vector<int> const& workers, std::vector<std::string> const& scheds, bool fftw,
                               std::vector<long> const& tiles) {
    std::vector<config> out{{"serial", false, "", 1, {}}};
    if (fftw) out.push_back({"fftw", false, "", 1, {}});
    std::vector<long> const groups = tiles.empty() ? std::vector<long>{-1} : tiles;
    for (int w : workers) {
        std::vector<std::string> const threads{"--threads", std::to_string(w)};
        out.push_back({"coarse", false, "", w, threads, w});
        out.push_back({"coarse", true, "ws", w, threads, w});
        for (long g : groups) {
            std::vector<std::string> args;
            if (g >= 0) args = {"--tiles-per-thread", std::to_string(g)};
            out.push_back({"fine", false, "", w, args, -1, g});
            for (auto const& s : scheds) out.push_back({"fine", true, s, w, args, -1, g});
        }
        if (fftw) {
            out.push_back({"fftw", false, "", w, threads, w});
            out.push_back({"fftw", true, "ws", w, threads, w});
        }
    }
    return out;
}

// A list option's items as integers from 1 to max, or a usage error naming the item.
std::vector<long> counts(options const& o, char const* name, long max) {
    std::vector<long> out;
    for (auto const& item : o.list(name)) {
        char* end = nullptr;
        long const v = std::strtol(item.c_str(), &end, 10);
        if (end == item.c_str() || *end != '\0' || v < 1 || v > max)
            throw usage_error(std::string("weft-bench suite000: --") + name + ": '" + item +
                              "' is not an integer from 1 to " + std::to_string(max));
        out.push_back(v);
    }
    return out;
}

int run(context& ctx) {
    auto const& o = ctx.opts();
    int const rounds = static_cast<int>(o.integer("rounds"));
    std::string const size = o.string("size");
    std::vector<long> const worker_list = counts(o, "workers", 256);
    std::vector<int> const workers(worker_list.begin(), worker_list.end());
    std::vector<std::string> const scheds = o.list("sched");
    // 8,836: the tiles of the paper's 375x375 image.
    std::vector<long> const tiles =
        o.given("tiles-per-thread") ? counts(o, "tiles-per-thread", 8836) : std::vector<long>{};
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
        std::vector<config> const configs = configs_of(workers, scheds, app == "fft1d" && has_fftw(program),
                                                       app == "volrend" ? tiles : std::vector<long>{});
        std::vector<std::vector<run_result>> results(configs.size());
        for (int r = 0; r < rounds; ++r) {
            ctx.progress("%s: round %d of %d (%zu configurations)", app.c_str(), r + 1, rounds, configs.size());
            for (std::size_t i = 0; i < configs.size(); ++i)
                results[i].push_back(run_once(program, shim, configs[i], s, r == 0));
        }
        std::vector<double> serial_times;
        for (auto const& rr : results[0]) serial_times.push_back(rr.time_s);
        std::map<std::string, double> median_by_label;
        table t({"version", "threads", "sched", "workers", "time (s)", "spread", "speedup", "threads live", "T1 (s)",
                 "Tinf (s)"});
        for (std::size_t i = 0; i < configs.size(); ++i) {
            auto const& c = configs[i];
            std::vector<double> times, t1, tinf;
            long live = 0;
            for (auto const& rr : results[i]) {
                times.push_back(rr.time_s);
                t1.push_back(rr.t1_s);
                tinf.push_back(rr.tinf_s);
                live = std::max(live, c.weft ? rr.weft_max_live : rr.max_live);
            }
            summary const ts = summarize(times);
            double const speedup = median_of_ratios(serial_times, times);
            median_by_label[c.label()] = ts.median;
            json_object rec = ctx.record();
            rec.add("app", app).add("version", c.version).add("threads", c.weft ? "weft" : "glibc");
            if (c.weft)
                rec.add("sched", c.sched);
            else
                rec.add_null("sched");
            if (c.program_threads >= 0)
                rec.add("program_threads", c.program_threads);
            else
                rec.add_null("program_threads");
            if (c.tiles_per_thread >= 0) rec.add("tiles_per_thread", c.tiles_per_thread);
            rec.add("workers", c.workers).add("size", size).add_summary("time_s", ts).add("speedup", speedup);
            rec.add_null("peak_heap_bytes").add("max_live_threads", live).add("threads_created", results[i][0].created);
            if (c.weft)
                rec.add("t1_s", summarize(t1).median).add("tinf_s", summarize(tinf).median);
            else
                rec.add_null("t1_s").add_null("tinf_s");
            for (auto const& [k, v] : s.params) rec.add(k, v);
            rec.add("rounds", rounds);
            add_provenance(rec);
            ctx.emit(rec);
            t.add_row({c.version, c.weft ? "weft" : "glibc", c.sched, std::to_string(c.workers), fmt(ts.median, 4),
                       fmt_pct(ts.spread), fmt_ratio(speedup), std::to_string(live),
                       c.weft ? fmt(summarize(t1).median, 3) : "", c.weft ? fmt(summarize(tinf).median, 3) : ""});
        }
        ctx.print(t, app + " (" + size + " size)");

        // The targets at 2 workers: the fine-grained program under dfs
        // and ws within 10% of the coarse-grained one on glibc's threads, and
        // faster than the same fine-grained binary on glibc's threads.
        if (std::find(workers.begin(), workers.end(), 2) == workers.end()) continue;
        if (app == "fft1d" && median_by_label.count("fftw glibc w2") && median_by_label.count("fine weft ws w2")) {
            // The FFT against FFTW's threaded transform (docs/design/pthreads-apps.md states the gap).
            double const ratio = median_by_label["fine weft ws w2"] / median_by_label["fftw glibc w2"];
            json_object rec = ctx.record();
            rec.add("target", "fft_vs_fftw_threads").add("app", app).add("sched", "ws").add("workers", 2);
            rec.add("ratio", ratio).add("bound", 1.0).add("met", ratio <= 1.0);
            ctx.emit(rec);
            ctx.say("target fft1d ws w2: fine/FFTW threaded %.2f (bound 1.00, %s)\n", ratio,
                    ratio <= 1.0 ? "met" : "missed");
        }
        if (!tiles.empty() && app == "volrend") continue;  // the targets are at the default grouping
        double const coarse = median_by_label["coarse glibc w2"], fine_glibc = median_by_label["fine glibc w2"];
        for (auto const& s2 : {"dfs", "ws"}) {
            auto const it = median_by_label.find(std::string("fine weft ") + s2 + " w2");
            if (it == median_by_label.end()) continue;
            json_object rec = ctx.record();
            rec.add("target", "fine_vs_coarse").add("app", app).add("sched", s2).add("workers", 2);
            rec.add("ratio", it->second / coarse).add("bound", 1.10).add("met", it->second <= 1.10 * coarse);
            rec.add("vs_fine_glibc", it->second / fine_glibc).add("faster_than_glibc", it->second < fine_glibc);
            ctx.emit(rec);
            ctx.say("target %s %s w2: fine/coarse %.2f (bound 1.10, %s), fine weft/fine glibc %.2f\n", app.c_str(), s2,
                    it->second / coarse, it->second <= 1.10 * coarse ? "met" : "missed", it->second / fine_glibc);
        }
    }
    return 0;
}

registrar const reg{experiment{
    .name = "suite000",
    .description =
        "Narlikar & Blelloch's suite (FFT, sparse matrix-vector, volume rendering, decision tree, Barnes-Hut, "
        "FMM): glibc vs libweft-pthread",
    .details =
        "Runs apps/'s plain Pthreads programs (bin/pthreads_<app>) as they are on glibc's threads and under\n"
        "libweft-pthread (LD_PRELOAD): serial; coarse-grained (W threads) on glibc and weft ws; fine-grained on\n"
        "glibc and weft under each --sched; FFTW for the FFT where built. Each configuration once per round,\n"
        "interleaved; times are the programs' own; speedup is the median of each round's ratio to its serial\n"
        "run. Weft's statistics (WEFT_STATS=1) give the most threads live and T1/T-inf. peak_heap_bytes is null\n"
        "until the shim accounts malloc. See docs/bench.md and docs/design/pthreads-apps.md.",
    .options = {{.name = "apps",
                 .kind = opt_kind::list,
                 .metavar = "LIST",
                 .default_value = "fft1d,spmv,volrend,dtree,barnes,fmm",
                 .help = "programs to run",
                 .choices = {"fft1d", "spmv", "volrend", "dtree", "barnes", "fmm"}},
                {.name = "size",
                 .kind = opt_kind::string,
                 .metavar = "NAME",
                 .default_value = "demo",
                 .help = "full (the paper's), demo (short runs) or test (the tests' sizes)",
                 .choices = {"full", "demo", "test"}},
                opt_rounds(3),
                {.name = "workers",
                 .kind = opt_kind::list,
                 .metavar = "LIST",
                 .default_value = "1,2",
                 .help = "worker counts (coarse: as many threads); more than the CPUs oversubscribes (Figure 10)"},
                {.name = "sched",
                 .kind = opt_kind::list,
                 .metavar = "LIST",
                 .default_value = "fifo,lifo,dfs,ws",
                 .help = "weft schedulers for the fine-grained runs",
                 .choices = {"fifo", "lifo", "dfs", "ws"}},
                {.name = "tiles-per-thread",
                 .kind = opt_kind::list,
                 .metavar = "LIST",
                 .default_value = "64",
                 .help = "volrend's fine version: 4x4 tiles per thread, one run each (Figure 11: 1..1024)"},
                {.name = "shim",
                 .kind = opt_kind::string,
                 .metavar = "PATH",
                 .default_value = "",
                 .help = "libweft-pthread.so (default: ../lib/ beside this executable)"}},
    .run = run,
}};

}  // namespace
}  // namespace weft::bench::suite000
