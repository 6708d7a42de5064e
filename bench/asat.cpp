// weft-bench asat: Severance & Enbody's "Automatic Self-Allocating Threads
// (ASAT) on an SGI Challenge", Figures 2-5, on this machine.
//
// The paper's program (asat_kernel.hpp: a parallel loop of 3 flops and 5
// memory references per iteration inside a time-step loop with a serial part
// between the loops) runs as weft::parallel_for over filaments, one pool-set
// sweep per time step, on --workers workers (2), with the whole run confined
// to --cpus CPUs (2). Modes, each run in a child process of this executable
// (`--asat-child MODE`) started with its environment set, since the runtimes
// read it once at start-up; every controller reads at its default interval
// (WEFT_ADAPT_INTERVAL unset), the one users get:
//   fts          WEFT_ADAPT=off: a fixed number of workers (the paper's Fixed
//                Thread Scheduling);
//   one_worker   WEFT_WORKERS=1, WEFT_ADAPT=off, alone only: the reference of
//                the ideal times (the program on one CPU, no thief beside it);
//   asat         WEFT_ADAPT=asat: the paper's timed barrier (once a second)
//                drops a worker when it sees one descheduled and later dips a
//                toe in again;
//   schedstat    WEFT_ADAPT=schedstat, the default: weft's probe, each
//                worker's run-queue delay from /proc/self/task/TID/schedstat;
//   omp_static   the same loop as `#pragma omp parallel` + `omp for` on
//                libgomp with OMP_DYNAMIC=false, OMP_NUM_THREADS=--workers;
//   omp_dynamic  the same with OMP_DYNAMIC=true: libgomp sizes each team from
//                the CPUs less the 15-minute load average.
// Scenarios (the paper's Figure 2 and 5 bars, and its Figure 4/7 load
// changes):
//   alone        the program by itself;
//   competitor   beside one CPU-bound single-threaded process (a fixed number
//                of iterations of a busy loop) that starts with the program's
//                timed run and has 1.25x the program's CPU time alone of work,
//                so that it runs for the whole of an ideal run;
//   changing     the competitor starts a quarter into an ideal run and, unslowed,
//                stops at three quarters.
// The child reports its wall time, its CPU time (CLOCK_PROCESS_CPUTIME_ID, all
// threads), the 15-minute load average at its start and the active worker
// count over time, sampled every --sample-ms by a plain thread
// (weft_stats_get's active_workers; for OpenMP, the size of the last team).
// The competitor is a fork of this process and reports its own start, stop
// and wall time.
//
// The figures, per (scenario, mode), medians over interleaved rounds (each
// round runs the competitor alone and one_worker alone, then every mode in an
// order rotated by one each round, each mode in every scenario, fts alone
// always):
//   wall_s, cpu_s        the program's;
//   ideal_wall_s         the wall time the program would have on the CPUs left
//                        to it (ideal_wall below), from the same round: W2 =
//                        fts alone's wall time, C = one_worker's;
//   ideal_cpu_s          one_worker's CPU time (the program's work with no CPU
//                        wasted);
//   competitor_slowdown  the competitor's wall time beside the program over
//                        its wall time alone with a CPU of its own (the same
//                        round);
//   wall_over_ideal, cpu_over_ideal, wall_over_omp_static/_dynamic   medians
//                        of the per-round ratios.
// And target rows per scenario with a competitor and adaptive mode: within
// 1.10x of the ideal wall and CPU times, the competitor slowed by at most
// 10%, and faster than omp_static beside the same competitor.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <weft/filament.hpp>
#include <weft/weft.h>

#include "asat_kernel.hpp"
#include "harness.hpp"

namespace weft::bench::asat {
namespace {

// The target's bound on wall / ideal, cpu / cpu alone and the competitor's
// slowdown (the paper: ASAP on the Convex came within 1.05x of ideal, ASAT on
// the SGI within 1.14x in CPU time).
constexpr double target_limit = 1.10;
// The competitor scenario's work: this many times the program's CPU time
// alone, so that an ideal program (one CPU while the competitor runs, C
// seconds) ends before the competitor does.
constexpr double competitor_work_factor = 1.25;
// Untimed time steps a child runs before its timed run (threads started,
// pages touched, code warm).
constexpr std::uint64_t warmup_steps = 20;
// Time steps of the probe run that sizes the run to --seconds.
constexpr std::uint64_t probe_steps = 1000;
// --quick, the demo's size: fts and schedstat (the default) in the changing
// scenario, one round, with fts alone taking this long. An ideal changing run
// then lasts about 2.7 s (4/3 of it on two CPUs), the competitor runs for the
// middle 1.3 s and the program about 0.7 s after it: room for schedstat (a
// reading every 100 ms, a drop after two bad ones, one more after three good
// ones) to drop a worker and take it back while the plot watches. asat's
// reading once a second needs runs of tens of seconds for the same.
constexpr double quick_seconds = 2.0;
constexpr int quick_rounds = 1;
constexpr std::array<char const*, 2> quick_modes = {"fts", "schedstat"};
constexpr char const* quick_scenario = "changing";

// The mode WEFT_ADAPT selects when it is unset (src/core/env.cpp): the one
// users get, whose rows the targets are first about.
constexpr char const* default_adapt = "schedstat";

struct mode {
    char const* name;   // the JSON "mode" and --modes
    char const* label;  // the table's and the plot's
    char const* adapt;  // WEFT_ADAPT; nullptr for OpenMP
    bool omp_dynamic;   // OpenMP: OMP_DYNAMIC=true (else false: a team of --workers threads every time)
    bool one_worker;    // WEFT_WORKERS=1 instead of --workers (the reference of the ideal times)
    bool adaptive;      // held to the targets
    bool built;
};

std::vector<mode> const& modes() {
    static std::vector<mode> const all = {
        {"fts", "weft, fixed workers (WEFT_ADAPT=off)", "off", false, false, false, true},
        {"one_worker", "weft, one worker (WEFT_WORKERS=1, WEFT_ADAPT=off)", "off", false, true, false, true},
        {"asat", "weft, ASAT timed barrier (WEFT_ADAPT=asat)", "asat", false, false, true, true},
        {"schedstat", "weft, run delay probe (WEFT_ADAPT=schedstat, the default)", "schedstat", false, false, true,
         true},
        {"omp_static", "OpenMP, OMP_DYNAMIC=false (a fixed team)", nullptr, false, false, false,
         WEFT_HAVE_OPENMP != 0},
        {"omp_dynamic", "OpenMP, OMP_DYNAMIC=true", nullptr, true, false, false, WEFT_HAVE_OPENMP != 0},
    };
    return all;
}

mode const& mode_named(std::string const& name) {
    for (mode const& m : modes())
        if (name == m.name) return m;
    die("asat: unknown mode '%s'", name.c_str());
}

std::vector<std::string> mode_names() {
    std::vector<std::string> v;
    for (mode const& m : modes()) v.emplace_back(m.name);
    return v;
}

std::vector<std::string> const scenario_names = {"alone", "competitor", "changing"};

double seconds(std::uint64_t ns) { return static_cast<double>(ns) / 1e9; }

// --- the ideal wall time ------------------------------------------------------------

// The wall time of a program that takes w2 seconds on both CPUs and c1 seconds
// on one (measured: the one_worker run), when a competitor holds one of the two CPUs from `start` for
// `length` seconds (its time with a CPU of its own: an ideal neighbour does
// not slow it):
//   the program does a share 1/w2 of its work per second on two CPUs and 1/c1
//   on one, so with s = min(start, w2):
//     finished before the competitor starts:   ideal = w2                      (start >= w2)
//     finished while it runs:                  ideal = s + (1 - s/w2) * c1     (if <= s + length)
//     else:                                    ideal = s + length + (1 - s/w2 - length/c1) * w2.
// c1 is taken as at least w2 (one CPU is never faster than two).
double ideal_wall(double w2, double c1, double start, double length) {
    c1 = std::max(c1, w2);
    if (start >= w2) return w2;
    start = std::max(start, 0.0);
    double const left = 1.0 - start / w2;  // share of the work after `start`
    if (left * c1 <= length) return start + left * c1;
    return start + length + (left - length / c1) * w2;
}

// --- the child: one run of the program ----------------------------------------------

// Samples active() every period_ns on a plain thread until stop().
class sampler {
public:
    sampler(std::function<int()> active, std::uint64_t period_ns) : active_(std::move(active)), period_(period_ns) {
        thread_ = std::thread([this] { loop(); });
    }
    // Stops the thread and returns the (time, active workers) pairs up to
    // end_ns, the last one read now and dated end_ns (the run's end).
    std::vector<std::pair<std::uint64_t, int>> stop(std::uint64_t end_ns) {
        stop_.store(true, std::memory_order_relaxed);
        thread_.join();
        std::erase_if(samples_, [end_ns](auto const& s) { return s.first > end_ns; });
        samples_.emplace_back(end_ns, active_());
        return std::move(samples_);
    }

private:
    void loop() {
        timespec next{};
        clock_gettime(CLOCK_MONOTONIC, &next);
        while (!stop_.load(std::memory_order_relaxed)) {
            samples_.emplace_back(now_ns(), active_());
            next.tv_nsec += static_cast<long>(period_);
            while (next.tv_nsec >= 1'000'000'000L) {
                next.tv_nsec -= 1'000'000'000L;
                ++next.tv_sec;
            }
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr) == EINTR) {
            }
        }
    }
    std::function<int()> active_;
    std::uint64_t period_;
    std::atomic<bool> stop_{false};
    std::vector<std::pair<std::uint64_t, int>> samples_;
    std::thread thread_;
};

void run_weft(arrays& x, std::uint64_t first_step, std::uint64_t steps) {
    auto const n = static_cast<std::int64_t>(x.size());
    for (std::uint64_t t = first_step; t < first_step + steps; ++t) {
        x.serial(t);
        weft::parallel_for(std::int64_t{0}, n, [&x](std::int64_t i) { x.iteration(static_cast<std::size_t>(i)); });
    }
}

// --asat-child MODE: the parent set WEFT_ADAPT and WEFT_WORKERS (weft) or
// OMP_DYNAMIC and OMP_NUM_THREADS (OpenMP). Prints "start T0_NS" when the
// timed run begins, then after it "wall_s", "cpu_s", "checksum",
// "loadavg15 L" (the 15-minute load average at the start, from which libgomp
// sizes a dynamic team), for weft "adapt_interval_ms MS" (the controller's, 0
// when off), and one "sample T_NS ACTIVE" line per sample.
int run_child(context& ctx, mode const& m, std::size_t n, std::uint64_t steps, std::uint64_t period_ns) {
    arrays x(n);
    std::atomic<int> team{0};
    std::function<void(std::uint64_t, std::uint64_t)> run_steps;
    std::function<int()> active;
    if (m.adapt == nullptr) {
#if WEFT_HAVE_OPENMP
        run_steps = [&](std::uint64_t first, std::uint64_t count) { run_openmp(x, first, count, team); };
        active = [&team] { return team.load(std::memory_order_relaxed); };
#else
        ctx.warn("OpenMP is not built into this weft-bench");
        return 1;
#endif
    } else {
        weft_config_t cfg{};
        cfg.stats = WEFT_CONFIG_OFF;  // stdout carries the report
        check(weft_init(&cfg), "weft_init");
        run_steps = [&](std::uint64_t first, std::uint64_t count) { run_weft(x, first, count); };
        active = [] {
            weft_stats_t s{};
            return weft_stats_get(&s) == 0 ? s.active_workers : -1;
        };
    }
    run_steps(0, warmup_steps);
    int interval_ms = 0;
    if (m.adapt != nullptr) {
        weft_adapt_info_t ad{};
        check(weft_adapt_get(&ad), "weft_adapt_get");
        interval_ms = ad.interval_ms;
    }
    double load[3] = {};
    double const loadavg15 = getloadavg(load, 3) == 3 ? load[2] : -1;

    double const cpu0 = process_cpu_s();
    std::uint64_t const t0 = now_ns();
    std::printf("start %" PRIu64 "\n", t0);
    std::fflush(stdout);
    sampler s(active, period_ns);
    run_steps(warmup_steps, steps);
    std::uint64_t const t1 = now_ns();
    double const cpu1 = process_cpu_s();
    auto const samples = s.stop(t1);
    if (m.adapt != nullptr) check(weft_finalize(), "weft_finalize");

    if (std::size_t const i = x.first_wrong(); i != x.size()) {
        ctx.warn("mode %s: a[%zu] = %.17g, expected b*c + d*e = %.17g", m.name, i, x.a[i],
                 x.b[i] * x.c[i] + x.d[i] * x.e[i]);
        return 1;
    }
    std::printf("wall_s %.9g\ncpu_s %.9g\nchecksum %.17g\nloadavg15 %.4g\n", seconds(t1 - t0), cpu1 - cpu0,
                x.checksum, loadavg15);
    if (m.adapt != nullptr) std::printf("adapt_interval_ms %d\n", interval_ms);
    for (auto const& [t, a] : samples) std::printf("sample %" PRIu64 " %d\n", t, a);
    return 0;
}

// --- the parent: children and the competitor ------------------------------------------

// The competitor's busy loop: xorshift64, a chain of dependent shifts and xors
// that no compiler shortens.
[[gnu::noinline]] std::uint64_t spin(std::uint64_t iters) {
    std::uint64_t v = 88172645463325252ull;
    for (std::uint64_t i = 0; i < iters; ++i) {
        v ^= v << 13;
        v ^= v >> 7;
        v ^= v << 17;
    }
    return v;
}

// Busy-loop iterations per second of this CPU (the best of three timings of
// at least 50 ms each).
double spin_rate() {
    double best = 0;
    for (int k = 0; k < 3; ++k) {
        std::uint64_t iters = 1u << 20, elapsed = 0;
        for (;;) {
            std::uint64_t const t0 = now_ns();
            keep(spin(iters));
            elapsed = now_ns() - t0;
            if (elapsed >= 50'000'000) break;
            iters *= 2;
        }
        best = std::max(best, static_cast<double>(iters) / seconds(elapsed));
    }
    return best;
}

struct competitor_run {
    std::uint64_t start_ns = 0, stop_ns = 0;
    double wall_s() const { return seconds(stop_ns - start_ns); }
};

struct competitor {
    pid_t pid = -1;
    int fd = -1;
};

// Forks the competitor: it sleeps until start_at_ns (CLOCK_MONOTONIC, the clock
// of now_ns), runs `iters` iterations of the busy loop and reports its start
// and stop. This process has no other thread, so the fork is safe.
competitor start_competitor(std::uint64_t start_at_ns, std::uint64_t iters) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) die("pipe: %s", std::strerror(errno));
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t const pid = fork();
    if (pid < 0) die("fork: %s", std::strerror(errno));
    if (pid == 0) {
        close(fds[0]);
        timespec at{static_cast<time_t>(start_at_ns / 1'000'000'000u), static_cast<long>(start_at_ns % 1'000'000'000u)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR) {
        }
        std::uint64_t out[3];
        out[0] = now_ns();
        out[2] = spin(iters);
        out[1] = now_ns();
        ssize_t const w = write(fds[1], out, sizeof out);
        _exit(w == static_cast<ssize_t>(sizeof out) ? 0 : 1);
    }
    close(fds[1]);
    return {pid, fds[0]};
}

competitor_run finish_competitor(competitor c) {
    std::uint64_t in[3] = {};
    std::size_t got = 0;
    while (got < sizeof in) {
        ssize_t const r = read(c.fd, reinterpret_cast<char*>(in) + got, sizeof in - got);
        if (r > 0) got += static_cast<std::size_t>(r);
        else if (r == 0 || errno != EINTR) break;
    }
    close(c.fd);
    int const status = wait_child(c.pid);
    if (got != sizeof in || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("asat: the competitor process (pid %d) failed", static_cast<int>(c.pid));
    return {in[0], in[1]};
}

struct program_run {
    double wall_s = 0, cpu_s = 0;
    std::uint64_t t0_ns = 0;
    std::vector<std::pair<double, int>> samples;  // (seconds since t0, active workers)
    double active_mean = 0;                       // time-weighted over the run
    int team_size = 0;                            // the most frequent sample (OpenMP: its team size)
    double loadavg15 = -1;                        // at the start (-1: not read)
    int adapt_interval_ms = 0;                    // weft: the controller's interval (0: off)
    std::optional<competitor_run> comp;
};

struct run_params {
    std::string exe;
    std::size_t n;
    std::uint64_t steps;
    int workers;
    int sample_ms;
};

// Runs one mode in a child process; if comp_iters > 0, starts the competitor
// comp_delay_s after the child's timed run begins.
program_run run_program(run_params const& p, mode const& m, std::uint64_t comp_iters, double comp_delay_s) {
    // A weft run gets a core budget of its own (WEFT_BUDGET names its
    // shared-memory segment, removed after the run): the competitor is not a
    // weft program, and other weft programs on the machine must not take part.
    static int runs = 0;
    std::string const budget = "/weft-bench-asat-" + std::to_string(getpid()) + "-" + std::to_string(++runs);
    // Each controller reads at its default interval (WEFT_ADAPT_INTERVAL is
    // not set): the figures are those a user gets.
    int const workers = m.one_worker ? 1 : p.workers;
    std::vector<std::string> env;
    if (m.adapt != nullptr)
        env = {std::string("WEFT_ADAPT=") + m.adapt, "WEFT_WORKERS=" + std::to_string(workers), "WEFT_BUDGET=" + budget};
    else
        env = {std::string("OMP_DYNAMIC=") + (m.omp_dynamic ? "true" : "false"),
               "OMP_NUM_THREADS=" + std::to_string(workers)};
    piped_child const child = spawn_piped(p.exe,
                                          {p.exe, "asat", "--asat-child", m.name, "--n", std::to_string(p.n),
                                           "--steps", std::to_string(p.steps), "--sample-ms",
                                           std::to_string(p.sample_ms), "--workers", std::to_string(workers)},
                                          env);

    std::string out;
    std::optional<competitor> comp;
    char buf[4096];
    for (;;) {
        ssize_t const got = read(child.out_fd, buf, sizeof buf);
        if (got > 0) out.append(buf, static_cast<std::size_t>(got));
        else if (got == 0 || errno != EINTR) break;
        // The first line, "start T0_NS", is written when the timed run begins.
        if (comp_iters > 0 && !comp && out.find('\n') != std::string::npos) {
            std::uint64_t t0 = 0;
            if (std::sscanf(out.c_str(), "start %" SCNu64, &t0) == 1)
                comp = start_competitor(t0 + static_cast<std::uint64_t>(comp_delay_s * 1e9), comp_iters);
        }
    }
    close(child.out_fd);
    int const status = wait_child(child.pid);
    if (m.adapt != nullptr && shm_unlink(budget.c_str()) != 0 && errno != ENOENT)
        die("shm_unlink('%s'): %s", budget.c_str(), std::strerror(errno));
    program_run r;
    if (comp) r.comp = finish_competitor(*comp);
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    std::vector<std::pair<std::uint64_t, int>> raw;
    char const* line = out.c_str();
    while (ok && *line != '\0') {
        std::uint64_t t = 0;
        int a = 0;
        double v = 0;
        if (std::sscanf(line, "start %" SCNu64, &t) == 1) r.t0_ns = t;
        else if (std::sscanf(line, "wall_s %lf", &v) == 1) r.wall_s = v;
        else if (std::sscanf(line, "cpu_s %lf", &v) == 1) r.cpu_s = v;
        else if (std::sscanf(line, "loadavg15 %lf", &v) == 1) r.loadavg15 = v;
        else if (std::sscanf(line, "adapt_interval_ms %d", &a) == 1) r.adapt_interval_ms = a;
        else if (std::sscanf(line, "sample %" SCNu64 " %d", &t, &a) == 2) raw.emplace_back(t, a);
        char const* nl = std::strchr(line, '\n');
        if (nl == nullptr) break;
        line = nl + 1;
    }
    if (!ok || r.t0_ns == 0 || r.wall_s <= 0 || raw.empty() || (comp_iters > 0 && !r.comp))
        die("asat: the %s child failed: exit status %d, output '%.300s'", m.name,
            WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out.c_str());
    double weighted = 0;
    for (std::size_t i = 0; i < raw.size(); ++i) {
        double const t = raw[i].first >= r.t0_ns ? seconds(raw[i].first - r.t0_ns) : 0.0;
        r.samples.emplace_back(t, raw[i].second);
        if (i + 1 < raw.size()) weighted += raw[i].second * seconds(raw[i + 1].first - raw[i].first);
    }
    double const span = seconds(raw.back().first - raw.front().first);
    r.active_mean = span > 0 ? weighted / span : raw.front().second;
    std::map<int, int> seen;
    for (auto const& s : raw) ++seen[s.second];
    r.team_size = std::max_element(seen.begin(), seen.end(), [](auto const& a, auto const& b) {
                      return a.second < b.second;
                  })->first;
    return r;
}

// --- the experiment -------------------------------------------------------------------

// What one (scenario, mode) collects, one entry per round.
struct cell {
    std::vector<double> wall, cpu, ideal, ideal_cpu, wall_over_ideal, cpu_over_ideal, active_mean;
    // wall / the OpenMP mode's wall in the same round and scenario
    std::vector<double> over_omp_static, over_omp_dynamic;
    std::vector<double> team_size, loadavg15, adapt_interval_ms;
    std::vector<double> comp_wall, comp_ref, comp_slowdown, comp_start, comp_stop;  // with a competitor
    std::vector<program_run> runs;
};

std::string json_array(std::vector<double> const& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i > 0) s += ',';
        s += json_number(v[i]);
    }
    return s + "]";
}

bool contains(std::vector<std::string> const& v, std::string const& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

int run(context& ctx) {
    auto const& o = ctx.opts();
    std::string const command = "weft-bench asat";
    bool const quick = o.flag("quick");
    auto const n = static_cast<std::size_t>(o.integer("n"));
    int const rounds = static_cast<int>(quick && !o.given("rounds") ? quick_rounds : o.integer("rounds"));
    double const target_s = quick && !o.given("seconds") ? quick_seconds : o.number("seconds");
    int const workers = static_cast<int>(o.integer("workers"));
    int const sample_ms = static_cast<int>(o.integer("sample-ms"));
    if (o.given("asat-child")) {
        if (!o.given("steps")) throw usage_error(command + ": --asat-child needs --steps");
        return run_child(ctx, mode_named(o.string("asat-child")), n, static_cast<std::uint64_t>(o.integer("steps")),
                         static_cast<std::uint64_t>(sample_ms) * 1'000'000u);
    }

    int const cpus = confine_to_cpus(static_cast<int>(o.integer("cpus")));
    if (cpus < o.integer("cpus"))
        ctx.warn("only %d CPU%s available: --cpus %lld asks for more", cpus, cpus == 1 ? "" : "s", o.integer("cpus"));
    run_params params{self_exe(), n, 0, workers, sample_ms};
    if (params.exe.empty()) die("cannot find this executable through /proc/self/exe (needed for the child runs)");

    // fts alone and one_worker alone are every round's references (the ideal
    // wall and CPU times): they always run.
    std::vector<mode> ms;
    std::vector<std::string> const wanted =
        quick && !o.given("modes") ? std::vector<std::string>(quick_modes.begin(), quick_modes.end()) : o.list("modes");
    for (mode const& m : modes()) {
        if (m.one_worker || (!contains(wanted, m.name) && std::string(m.name) != "fts")) continue;
        if (!m.built) {
            ctx.warn("%s is not built into this weft-bench: no %s rows (make deps installs OpenMP)", m.label, m.name);
            continue;
        }
        ms.push_back(m);
    }
    std::vector<std::string> scs;
    std::vector<std::string> const wanted_sc =
        quick && !o.given("scenarios") ? std::vector<std::string>{quick_scenario} : o.list("scenarios");
    for (auto const& s : scenario_names)
        if (contains(wanted_sc, s)) scs.push_back(s);

    // Calibration. The time steps: --steps, or as many as make fts alone take
    // --seconds, from a probe run. Then fts alone at that size (also a warm-up
    // of the page cache) and the competitor's loop speed give the competitors'
    // work and the changing scenario's start.
    ctx.progress("calibration");
    mode const& fts = mode_named("fts");
    mode const& one = mode_named("one_worker");
    // --quick scales the probe run instead (the demo saves a run of --seconds).
    std::optional<program_run> probe;
    if (o.given("steps")) {
        params.steps = static_cast<std::uint64_t>(o.integer("steps"));
    } else {
        params.steps = probe_steps;
        probe = run_program(params, fts, 0, 0);
        params.steps = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(target_s / probe->wall_s * probe_steps));
    }
    std::uint64_t const steps = params.steps;
    program_run cal;
    if (quick && probe) {
        double const scale = static_cast<double>(steps) / static_cast<double>(probe_steps);
        cal.wall_s = probe->wall_s * scale;
        cal.cpu_s = probe->cpu_s * scale;
    } else {
        cal = run_program(params, fts, 0, 0);
    }
    double const w2_cal = cal.wall_s, c1_cal = std::max(cal.cpu_s, cal.wall_s);
    double const rate = spin_rate();
    // competitor: competitor_work_factor x C of work from the program's start.
    auto const iters_long = static_cast<std::uint64_t>(rate * competitor_work_factor * c1_cal);
    // changing: an ideal run of T seconds with the competitor in [T/4, 3T/4]:
    // T/4 on two CPUs + T/2 on one + T/4 on two is all the work, so
    // T/(2 W2) + T/(2 C) = 1.
    double const t_ideal_changing = 2.0 / (1.0 / w2_cal + 1.0 / c1_cal);
    double const changing_delay_s = t_ideal_changing / 4;
    auto const iters_short = static_cast<std::uint64_t>(rate * t_ideal_changing / 2);
    ctx.say("asat: a[i] = b[i]*c[i] + d[i]*e[i] (%d flops, %d memory references), n = %zu, %" PRIu64
            " time steps, %d workers on %d CPU%s; %d interleaved round(s)%s\n",
            flops_per_iteration, refs_per_iteration, n, steps, workers, cpus, cpus == 1 ? "" : "s", rounds,
            build_warning().empty() ? "" : (" [" + build_warning() + "]").c_str());
    ctx.say("calibration: fts alone %.3f s wall, %.3f s CPU; competitor %.3g iterations/s: %.3f s of work beside the "
            "program, %.3f s from %.3f s into it when it changes\n",
            w2_cal, cal.cpu_s, rate, static_cast<double>(iters_long) / rate, static_cast<double>(iters_short) / rate,
            changing_delay_s);

    std::map<std::pair<std::string, std::string>, cell> cells;  // (scenario, mode)
    std::vector<double> comp_ref_short;
    for (int r = 0; r < rounds; ++r) {
        ctx.progress("round %d/%d", r + 1, rounds);
        // The competitor alone, with a CPU of its own (nothing else of ours runs).
        comp_ref_short.push_back(finish_competitor(start_competitor(now_ns(), iters_short)).wall_s());
        // The long competitor's reference: the same loop, linear in its iterations.
        double const ref_long = comp_ref_short.back() * static_cast<double>(iters_long) / static_cast<double>(iters_short);
        std::map<std::pair<std::string, std::string>, program_run> round_runs;
        round_runs[{"alone", one.name}] = run_program(params, one, 0, 0);
        for (std::size_t k = 0; k < ms.size(); ++k) {
            mode const& m = ms[(k + static_cast<std::size_t>(r)) % ms.size()];
            for (auto const& sc : scs) {
                std::uint64_t const iters = sc == "alone" ? 0 : sc == "competitor" ? iters_long : iters_short;
                double const delay = sc == "changing" ? changing_delay_s : 0.0;
                round_runs[{sc, m.name}] = run_program(params, m, iters, delay);
            }
        }
        if (!round_runs.contains({"alone", fts.name})) round_runs[{"alone", fts.name}] = run_program(params, fts, 0, 0);
        // The ideal: C = one_worker's wall time (the program on one CPU, no
        // thief spinning beside it: what it takes when the competitor holds
        // the other CPU), its CPU time the ideal CPU time; W2 = fts alone's
        // wall time (the program on both CPUs), or C if that is shorter (a
        // machine so loaded that the second worker only costs).
        program_run const& ref2 = round_runs[{"alone", fts.name}];
        program_run const& ref1 = round_runs[{"alone", one.name}];
        double const c1 = ref1.wall_s, w2 = std::min(ref2.wall_s, c1), ideal_cpu = ref1.cpu_s;
        for (auto& [key, pr] : round_runs) {
            cell& c = cells[key];
            double ideal = w2;
            if (pr.comp) {
                double const comp_ref = key.first == "competitor" ? ref_long : comp_ref_short.back();
                double const start = pr.comp->start_ns >= pr.t0_ns ? seconds(pr.comp->start_ns - pr.t0_ns) : 0.0;
                ideal = ideal_wall(w2, c1, start, comp_ref);
                c.comp_wall.push_back(pr.comp->wall_s());
                c.comp_ref.push_back(comp_ref);
                c.comp_slowdown.push_back(pr.comp->wall_s() / comp_ref);
                c.comp_start.push_back(start);
                c.comp_stop.push_back(seconds(pr.comp->stop_ns - pr.t0_ns));
            }
            for (char const* omp : {"omp_static", "omp_dynamic"}) {
                auto const it = round_runs.find({key.first, omp});
                if (it == round_runs.end()) continue;
                (std::string(omp) == "omp_static" ? c.over_omp_static : c.over_omp_dynamic)
                    .push_back(pr.wall_s / it->second.wall_s);
            }
            c.wall.push_back(pr.wall_s);
            c.cpu.push_back(pr.cpu_s);
            c.ideal.push_back(ideal);
            c.ideal_cpu.push_back(ideal_cpu);
            c.wall_over_ideal.push_back(pr.wall_s / ideal);
            c.cpu_over_ideal.push_back(pr.cpu_s / ideal_cpu);
            c.active_mean.push_back(pr.active_mean);
            c.team_size.push_back(pr.team_size);
            c.loadavg15.push_back(pr.loadavg15);
            c.adapt_interval_ms.push_back(pr.adapt_interval_ms);
            c.runs.push_back(std::move(pr));
        }
    }

    // Every row names its ideal and where it came from.
    auto add_ideal = [](json_object& rec, cell const& c) {
        rec.add_summary("ideal_wall_s", summarize(c.ideal)).add_summary("ideal_cpu_s", summarize(c.ideal_cpu));
        rec.add("ideal_from", "one_worker");
    };

    // Rows per (scenario, mode), in the order of scenario_names and modes().
    table t({"scenario", "mode", "wall s", "spread", "ideal s", "wall/ideal", "cpu s", "cpu/ideal", "/omp_static",
             "competitor", "workers", "load15"});
    std::string last_sc;
    for (auto const& sc : scenario_names) {
        for (mode const& m : modes()) {
            auto const it = cells.find({sc, m.name});
            if (it == cells.end()) continue;
            cell const& c = it->second;
            if (!last_sc.empty() && sc != last_sc) t.add_separator();
            last_sc = sc;
            json_object rec = ctx.record();
            rec.add("scenario", sc).add("mode", m.name).add("label", m.label).add("workers", m.one_worker ? 1 : workers);
            rec.add("run_cpus", cpus).add("n", n).add("steps", static_cast<unsigned long long>(steps));
            rec.add_summary("wall_s", summarize(c.wall)).add_summary("cpu_s", summarize(c.cpu));
            add_ideal(rec, c);
            rec.add("wall_over_ideal", median(c.wall_over_ideal)).add("cpu_over_ideal", median(c.cpu_over_ideal));
            if (!c.over_omp_static.empty()) rec.add("wall_over_omp_static", median(c.over_omp_static));
            if (!c.over_omp_dynamic.empty()) rec.add("wall_over_omp_dynamic", median(c.over_omp_dynamic));
            if (m.adapt != nullptr) {
                rec.add("adapt", m.adapt).add("default_adapt", std::string(m.adapt) == default_adapt);
                rec.add("adapt_interval_ms", median(c.adapt_interval_ms));
            } else {
                rec.add("omp_dynamic", m.omp_dynamic).add_summary("team_size", summarize(c.team_size));
            }
            rec.add_summary("loadavg15", summarize(c.loadavg15));
            std::string comp_cell = "-";
            if (c.comp_slowdown.empty()) {
                rec.add_null("competitor_slowdown");
            } else {
                rec.add_summary("competitor_slowdown", summarize(c.comp_slowdown));
                rec.add("competitor_wall_s", median(c.comp_wall)).add("competitor_ref_s", median(c.comp_ref));
                rec.add("competitor_start_s", median(c.comp_start)).add("competitor_stop_s", median(c.comp_stop));
                rec.add("competitor_iters", static_cast<unsigned long long>(sc == "competitor" ? iters_long : iters_short));
                comp_cell = fmt(median(c.comp_slowdown), 2) + "x";
            }
            rec.add("active_workers_mean", median(c.active_mean)).add("rounds", rounds);
            add_provenance(rec);
            ctx.emit(rec);
            t.add_row({sc, m.name, fmt(median(c.wall), 3), fmt_pct(summarize(c.wall).spread), fmt(median(c.ideal), 3),
                       fmt(median(c.wall_over_ideal), 2), fmt(median(c.cpu), 3), fmt(median(c.cpu_over_ideal), 2),
                       c.over_omp_static.empty() ? "-" : fmt(median(c.over_omp_static), 2), comp_cell,
                       fmt(median(c.active_mean), 2), fmt(median(c.loadavg15), 1)});
        }
    }
    ctx.print(t, "asat: the paper's kernel on weft and OpenMP; ideal from fts alone (both CPUs) and one_worker alone "
                 "(one CPU) in the same round; cpu/ideal = cpu / one_worker's CPU time; /omp_static = wall over "
                 "omp_static's in the same round; competitor = its slowdown; workers = mean active (OpenMP: team); "
                 "load15 = the 15-minute load average libgomp sizes a dynamic team from");

    // The changing scenario's active workers over time, from each mode's
    // median round (the plot's Figure 4/7).
    if (contains(scs, "changing")) {
        for (mode const& m : ms) {
            cell const& c = cells[{"changing", m.name}];
            std::vector<std::size_t> order(c.wall.size());
            for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
            std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return c.wall[a] < c.wall[b]; });
            std::size_t const mid = order[(order.size() - 1) / 2];
            program_run const& pr = c.runs[mid];
            std::vector<double> ts, act;
            for (auto const& [ts_s, a] : pr.samples) {
                ts.push_back(ts_s);
                act.push_back(a);
            }
            json_object rec = ctx.record();
            rec.add("series", true).add("scenario", "changing").add("mode", m.name).add("label", m.label);
            rec.add("round", static_cast<int>(mid) + 1).add("workers", workers).add("sample_ms", sample_ms);
            rec.add("wall_s", pr.wall_s).add("competitor_start_s", c.comp_start[mid]);
            rec.add("competitor_stop_s", c.comp_stop[mid]);
            rec.add("ideal_wall_s", c.ideal[mid]).add("ideal_cpu_s", c.ideal_cpu[mid]).add("ideal_from", "one_worker");
            rec.add_raw("t_s", json_array(ts)).add_raw("active_workers", json_array(act));
            ctx.emit(rec);
        }
    }

    // The targets, per scenario with a competitor and adaptive mode: one row
    // each, {"target": NAME, "value", "bound", "met"}.
    bool const have_static = std::any_of(ms.begin(), ms.end(), [](mode const& m) { return m.name == std::string("omp_static"); });
    for (auto const& sc : scs) {
        if (sc == "alone") continue;
        for (mode const& m : ms) {
            if (!m.adaptive) continue;
            cell const& c = cells[{sc, m.name}];
            bool const is_default = std::string(m.adapt) == default_adapt;
            std::string say;
            bool all_met = true;
            auto target = [&](char const* name, double value, double bound, bool strict) {
                bool const met = strict ? value < bound : value <= bound;
                json_object rec = ctx.record();
                rec.add("target", name).add("scenario", sc).add("mode", m.name).add("default_adapt", is_default);
                rec.add("value", value).add("bound", bound).add("bound_kind", strict ? "below" : "at_most");
                rec.add("met", met).add("rounds", rounds);
                add_ideal(rec, c);
                add_provenance(rec);
                ctx.emit(rec);
                say += std::string(say.empty() ? "" : ", ") + name + " " + fmt(value, 2) + (strict ? " < " : " <= ") +
                       fmt(bound, 2) + (met ? "" : " (missed)");
                all_met = all_met && met;
            };
            target("wall_over_ideal", median(c.wall_over_ideal), target_limit, false);
            target("cpu_over_ideal", median(c.cpu_over_ideal), target_limit, false);
            target("competitor_slowdown", median(c.comp_slowdown), target_limit, false);
            if (have_static) target("wall_over_omp_static", median(c.over_omp_static), 1.0, true);
            ctx.say("target %s, %s%s: %s [%s]\n", sc.c_str(), m.name, is_default ? " (the default)" : "", say.c_str(),
                    all_met ? "MET" : "MISSED");
        }
    }
    return 0;
}

registrar const reg{experiment{
    .name = "asat",
    .description = "Severance & Enbody's ASAT (Figures 2-5): a parallel loop beside a CPU-bound competitor on 2 CPUs, "
                   "fixed workers against WEFT_ADAPT=asat|schedstat and OpenMP static and dynamic",
    .details =
        "The paper's kernel, a[i] = b[i]*c[i] + d[i]*e[i] (3 flops, 5 memory references) over --n elements in a\n"
        "time-step loop with a serial part between the loops (as many steps as make fts alone take --seconds, or\n"
        "--steps), on weft::parallel_for with --workers workers, confined to --cpus CPUs. Modes, each run in a\n"
        "child process with its environment: fts (WEFT_ADAPT=off), asat (WEFT_ADAPT=asat), schedstat\n"
        "(WEFT_ADAPT=schedstat, the default), each controller at its default interval; omp_static (OpenMP,\n"
        "OMP_DYNAMIC=false) and omp_dynamic (OMP_DYNAMIC=true), whose rows carry the team size and the 15-minute\n"
        "load average. Scenarios: alone; competitor (a single-threaded busy loop with 1.25x the program's CPU time\n"
        "of work, started with it); changing (the competitor runs from a quarter to three quarters of an ideal\n"
        "run). Every round also runs fts alone and one_worker alone (WEFT_WORKERS=1): the ideal wall and CPU\n"
        "times come from them. Per (scenario, mode), medians over interleaved rounds: wall_s, cpu_s,\n"
        "ideal_wall_s, ideal_cpu_s, wall_over_ideal, cpu_over_ideal, wall_over_omp_static/_dynamic (paired),\n"
        "competitor_slowdown; the changing scenario's active workers over time; and target rows per scenario\n"
        "with a competitor and adaptive mode: wall and CPU within 1.10x of ideal, the competitor slowed <= 10%,\n"
        "faster than omp_static. See docs/bench.md.",
    .options = {{.name = "n", .kind = opt_kind::integer, .metavar = "N", .default_value = "100000",
                 .help = "elements per array (five arrays of doubles)", .min = 1000, .max = 1e9},
                {.name = "seconds", .kind = opt_kind::number, .metavar = "S", .default_value = "2",
                 .help = "size the run so that fts alone takes about S seconds (from a probe run)", .min = 0.01,
                 .max = 3600},
                {.name = "steps", .kind = opt_kind::integer, .metavar = "N",
                 .help = "time steps (parallel loops) per run, instead of sizing by --seconds", .min = 1, .max = 1e12},
                opt_workers(2),
                {.name = "cpus", .kind = opt_kind::integer, .metavar = "N", .default_value = "2",
                 .help = "confine the run to the first N CPUs this process may use", .min = 1, .max = 1024},
                {.name = "modes", .kind = opt_kind::list, .metavar = "LIST",
                 .default_value = "fts,asat,schedstat,omp_static,omp_dynamic",
                 .help = "modes to run (fts always runs; one_worker runs alone every round: with fts alone, the "
                         "references)",
                 .choices = mode_names()},
                {.name = "scenarios", .kind = opt_kind::list, .metavar = "LIST",
                 .default_value = "alone,competitor,changing",
                 .help = "scenarios to run (fts and one_worker alone always run)",
                 .choices = scenario_names},
                {.name = "sample-ms", .kind = opt_kind::integer, .metavar = "MS", .default_value = "20",
                 .help = "period of the active-workers samples", .min = 1, .max = 10000},
                {.name = "quick", .kind = opt_kind::flag,
                 .help = "demo size: --seconds 2 --rounds 1 --modes fts,schedstat --scenarios changing unless given"},
                {.name = "asat-child", .kind = opt_kind::string, .metavar = "MODE",
                 .help = "internal: one timed run of MODE in this process, reported on stdout (asat starts itself "
                         "this way with the mode's environment)",
                 .choices = mode_names()},
                opt_rounds(5)},
    .run = run,
    .in_demo = true,
    .demo_args = {"--quick"},
    .demo_order = 50,
}};

}  // namespace
}  // namespace weft::bench::asat
