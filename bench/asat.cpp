// weft-bench asat: Severance & Enbody's "Automatic Self-Allocating Threads
// (ASAT) on an SGI Challenge", Figures 2-5, on this machine.
//
// The paper's program (asat_kernel.hpp: a parallel loop of 3 flops and 5
// memory references per iteration inside a time-step loop with a serial part
// between the loops) runs as weft::parallel_for over filaments, one pool-set
// sweep per time step, on --workers workers (2), with the whole run confined
// to --cpus CPUs (2). Modes, each run in a child process of this executable
// (`--asat-child MODE`) started with its environment set, since the runtimes
// read it once at start-up:
//   fts          WEFT_ADAPT=off: a fixed number of workers (the paper's Fixed
//                Thread Scheduling);
//   asat         WEFT_ADAPT=asat: the paper's timed barrier drops a worker
//                when it sees one descheduled and later dips a toe in again;
//   schedstat    WEFT_ADAPT=schedstat: weft's probe, each worker's run-queue
//                delay from /proc/self/task/TID/schedstat;
//   omp_dynamic  the same loop as `#pragma omp parallel` + `omp for` on
//                libgomp with OMP_DYNAMIC=true, OMP_NUM_THREADS=--workers.
// Scenarios (the paper's Figure 2 and 5 bars, and its Figure 4/7 load
// changes):
//   alone        the program by itself;
//   competitor   beside one CPU-bound single-threaded process (a fixed number
//                of iterations of a busy loop) that starts with the program's
//                timed run and has 1.25x the program's CPU time alone of work,
//                so that it runs for the whole of an ideal run;
//   changing     the competitor starts a quarter into an ideal run and, unslowed,
//                stops at three quarters.
// The child reports its wall time, its CPU time (getrusage RUSAGE_SELF, all
// threads) and the active worker count over time, sampled every --sample-ms by
// a plain thread (weft_stats_get's active_workers; for OpenMP, the size of the
// last team). The competitor is a fork of this process and reports its own
// start, stop and wall time.
//
// The figures, per (scenario, mode), medians over interleaved rounds (each
// round runs the competitor alone, then every mode in an order rotated by one
// each round, each mode in every scenario):
//   wall_s, cpu_s        the program's;
//   ideal_wall_s         the wall time the program would have on the CPUs left
//                        to it (ideal_wall below), from fts alone in the same
//                        round: W2 = its wall time, C = its CPU time (the time
//                        it would take on one CPU);
//   competitor_slowdown  the competitor's wall time beside the program over
//                        its wall time alone with a CPU of its own (the same
//                        round);
//   wall_over_ideal, cpu_over_alone   the paper's Figure 2/5 ratios: medians of
//                        the per-round wall / ideal and cpu / (fts alone's CPU
//                        time).
// And a target per scenario: each adaptive mode (asat, schedstat) within 1.10x
// of the ideal wall time and of fts alone's CPU time, the competitor slowed by
// at most 10%, and weft's best mode at least as fast as omp_dynamic.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
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
// --quick: fts alone takes this long, and this many rounds: the whole run
// took 13 s on the 2-CPU VM at a load average of 5 (`time weft-bench asat
// --quick`).
constexpr double quick_seconds = 0.15;
constexpr int quick_rounds = 3;

struct mode {
    char const* name;   // the JSON "mode" and --modes
    char const* label;  // the table's and the plot's
    char const* adapt;  // WEFT_ADAPT; nullptr for OpenMP
    bool adaptive;      // held to the target
    bool built;
};

std::vector<mode> const& modes() {
    static std::vector<mode> const all = {
        {"fts", "weft, fixed workers (WEFT_ADAPT=off)", "off", false, true},
        {"asat", "weft, ASAT timed barrier (WEFT_ADAPT=asat)", "asat", true, true},
        {"schedstat", "weft, run delay probe (WEFT_ADAPT=schedstat)", "schedstat", true, true},
        {"omp_dynamic", "OpenMP, OMP_DYNAMIC=true", nullptr, false, WEFT_HAVE_OPENMP != 0},
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
// on one (its CPU time alone: with no CPU wasted, one CPU does the same work
// in that time), when a competitor holds one of the two CPUs from `start` for
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

double cpu_seconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// --asat-child MODE: the parent set WEFT_ADAPT and WEFT_WORKERS (weft) or
// OMP_DYNAMIC and OMP_NUM_THREADS (OpenMP). Prints "start T0_NS" when the
// timed run begins, then after it "wall_s", "cpu_s", "checksum" and one
// "sample T_NS ACTIVE" line per sample.
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

    double const cpu0 = cpu_seconds();
    std::uint64_t const t0 = now_ns();
    std::printf("start %" PRIu64 "\n", t0);
    std::fflush(stdout);
    sampler s(active, period_ns);
    run_steps(warmup_steps, steps);
    std::uint64_t const t1 = now_ns();
    double const cpu1 = cpu_seconds();
    auto const samples = s.stop(t1);
    if (m.adapt != nullptr) check(weft_finalize(), "weft_finalize");

    if (std::size_t const i = x.first_wrong(); i != x.size()) {
        ctx.warn("mode %s: a[%zu] = %.17g, expected b*c + d*e = %.17g", m.name, i, x.a[i],
                 x.b[i] * x.c[i] + x.d[i] * x.e[i]);
        return 1;
    }
    std::printf("wall_s %.9g\ncpu_s %.9g\nchecksum %.17g\n", seconds(t1 - t0), cpu1 - cpu0, x.checksum);
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
    std::optional<competitor_run> comp;
};

struct run_params {
    std::string exe;
    std::size_t n;
    std::uint64_t steps;
    int workers;
    int sample_ms;
    int asat_interval_ms;  // WEFT_ADAPT_INTERVAL of the asat mode
};

// Runs one mode in a child process; if comp_iters > 0, starts the competitor
// comp_delay_s after the child's timed run begins.
program_run run_program(run_params const& p, mode const& m, std::uint64_t comp_iters, double comp_delay_s) {
    // A weft run gets a core budget of its own (WEFT_BUDGET names its
    // shared-memory segment, removed after the run): the competitor is not a
    // weft program, and other weft programs on the machine must not take part.
    static int runs = 0;
    std::string const budget = "/weft-bench-asat-" + std::to_string(getpid()) + "-" + std::to_string(++runs);
    std::vector<std::string> env;
    if (m.adapt != nullptr)
        env = {std::string("WEFT_ADAPT=") + m.adapt, "WEFT_WORKERS=" + std::to_string(p.workers), "WEFT_BUDGET=" + budget};
    else
        env = {"OMP_DYNAMIC=true", "OMP_NUM_THREADS=" + std::to_string(p.workers)};
    // ASAT tests once per interval and drops after two bad tests: the paper's
    // 1 s interval suits its runs of minutes; these runs last seconds, so the
    // interval is scaled down with them (--asat-interval-ms, 100 ms: as often
    // as the schedstat probe reads).
    if (m.adapt != nullptr && std::string(m.adapt) == "asat")
        env.push_back("WEFT_ADAPT_INTERVAL=" + std::to_string(p.asat_interval_ms));
    piped_child const child = spawn_piped(p.exe,
                                          {p.exe, "asat", "--asat-child", m.name, "--n", std::to_string(p.n),
                                           "--steps", std::to_string(p.steps), "--sample-ms",
                                           std::to_string(p.sample_ms), "--workers", std::to_string(p.workers)},
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
    return r;
}

// --- the experiment -------------------------------------------------------------------

// What one (scenario, mode) collects, one entry per round.
struct cell {
    std::vector<double> wall, cpu, ideal, wall_over_ideal, cpu_over_alone, active_mean;
    std::vector<double> comp_wall, comp_ref, comp_slowdown, comp_start, comp_stop;  // with a competitor
    std::vector<program_run> runs;
};

double median(std::vector<double> v) { return summarize(std::move(v)).median; }

std::string json_array(std::vector<double> const& v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (i > 0) s += ',';
        s += json_number(v[i]);
    }
    return s + "]";
}

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
    run_params params{self_exe(), n, 0, workers, sample_ms, static_cast<int>(o.integer("asat-interval-ms"))};
    if (params.exe.empty()) die("cannot find this executable through /proc/self/exe (needed for the child runs)");

    // fts alone is every round's reference (ideal_wall_s, cpu_over_alone): it
    // always runs.
    std::vector<mode> ms;
    std::vector<std::string> wanted = o.list("modes");
    if (std::find(wanted.begin(), wanted.end(), "fts") == wanted.end()) wanted.insert(wanted.begin(), "fts");
    for (mode const& m : modes()) {
        if (std::find(wanted.begin(), wanted.end(), m.name) == wanted.end()) continue;
        if (!m.built) {
            ctx.warn("%s is not built into this weft-bench: no %s rows (make deps installs OpenMP)", m.label, m.name);
            continue;
        }
        ms.push_back(m);
    }
    std::vector<std::string> scs;
    std::vector<std::string> const wanted_sc = o.list("scenarios");
    for (auto const& s : scenario_names)
        if (s == "alone" || std::find(wanted_sc.begin(), wanted_sc.end(), s) != wanted_sc.end()) scs.push_back(s);

    // Calibration. The time steps: --steps, or as many as make fts alone take
    // --seconds, from a probe run. Then fts alone at that size (also a warm-up
    // of the page cache) and the competitor's loop speed give the competitors'
    // work and the changing scenario's start.
    ctx.progress("calibration");
    if (o.given("steps")) {
        params.steps = static_cast<std::uint64_t>(o.integer("steps"));
    } else {
        params.steps = probe_steps;
        program_run const probe = run_program(params, modes().front(), 0, 0);
        params.steps = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(target_s / probe.wall_s * probe_steps));
    }
    std::uint64_t const steps = params.steps;
    program_run const cal = run_program(params, modes().front(), 0, 0);
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
        for (std::size_t k = 0; k < ms.size(); ++k) {
            mode const& m = ms[(k + static_cast<std::size_t>(r)) % ms.size()];
            for (auto const& sc : scs) {
                std::uint64_t const iters = sc == "alone" ? 0 : sc == "competitor" ? iters_long : iters_short;
                double const delay = sc == "changing" ? changing_delay_s : 0.0;
                round_runs[{sc, m.name}] = run_program(params, m, iters, delay);
            }
        }
        program_run const& ref = round_runs[{"alone", "fts"}];
        double const w2 = ref.wall_s, cpu_alone = ref.cpu_s, c1 = std::max(cpu_alone, w2);
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
            c.wall.push_back(pr.wall_s);
            c.cpu.push_back(pr.cpu_s);
            c.ideal.push_back(ideal);
            c.wall_over_ideal.push_back(pr.wall_s / ideal);
            c.cpu_over_alone.push_back(pr.cpu_s / cpu_alone);
            c.active_mean.push_back(pr.active_mean);
            c.runs.push_back(std::move(pr));
        }
    }

    // Rows per (scenario, mode).
    table t({"scenario", "mode", "wall s", "spread", "ideal s", "wall/ideal", "cpu s", "cpu/alone", "competitor",
             "workers"});
    for (auto const& sc : scs) {
        if (t.rows() > 0) t.add_separator();
        for (mode const& m : ms) {
            cell const& c = cells[{sc, m.name}];
            json_object rec = ctx.record();
            rec.add("scenario", sc).add("mode", m.name).add("label", m.label).add("workers", workers);
            rec.add("run_cpus", cpus).add("n", n).add("steps", static_cast<unsigned long long>(steps));
            rec.add_summary("wall_s", summarize(c.wall)).add_summary("cpu_s", summarize(c.cpu));
            rec.add_summary("ideal_wall_s", summarize(c.ideal));
            rec.add("wall_over_ideal", median(c.wall_over_ideal)).add("cpu_over_alone", median(c.cpu_over_alone));
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
                       fmt(median(c.wall_over_ideal), 2), fmt(median(c.cpu), 3), fmt(median(c.cpu_over_alone), 2),
                       comp_cell, fmt(median(c.active_mean), 2)});
        }
    }
    ctx.print(t, "asat: the paper's kernel on weft (fts, asat, schedstat) and OpenMP (omp_dynamic); ideal and "
                 "cpu/alone from fts alone in the same round; competitor = its slowdown; workers = mean active");

    // The changing scenario's active workers over time, from each mode's
    // median round (the plot's Figure 4/7).
    if (std::find(scs.begin(), scs.end(), "changing") != scs.end()) {
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
            rec.add_raw("t_s", json_array(ts)).add_raw("active_workers", json_array(act));
            ctx.emit(rec);
        }
    }

    // The targets, per scenario.
    for (auto const& sc : scs) {
        json_object rec = ctx.record();
        rec.add("target", true).add("scenario", sc).add("limit", target_limit);
        bool met = true, any = false;
        std::string say;
        for (mode const& m : ms) {
            if (!m.adaptive) continue;
            any = true;
            cell const& c = cells[{sc, m.name}];
            double const wi = median(c.wall_over_ideal), ca = median(c.cpu_over_alone);
            std::string const p = m.name;
            rec.add(p + "_wall_over_ideal", wi).add(p + "_cpu_over_alone", ca);
            bool ok = wi <= target_limit && ca <= target_limit;
            if (!c.comp_slowdown.empty()) {
                double const cs = median(c.comp_slowdown);
                rec.add(p + "_competitor_slowdown", cs);
                ok = ok && cs <= target_limit;
                say += " " + p + " " + fmt(wi, 2) + "/" + fmt(ca, 2) + "/" + fmt(cs, 2);
            } else {
                say += " " + p + " " + fmt(wi, 2) + "/" + fmt(ca, 2);
            }
            rec.add(p + "_met", ok);
            met = met && ok;
        }
        std::string best;
        double best_wall = 0;
        for (mode const& m : ms) {
            if (m.adapt == nullptr) continue;
            double const w = median(cells[{sc, m.name}].wall);
            if (best.empty() || w < best_wall) best = m.name, best_wall = w;
        }
        rec.add("best_weft_mode", best).add("best_weft_wall_s", best_wall);
        auto const omp = std::find_if(ms.begin(), ms.end(), [](mode const& m) { return m.adapt == nullptr; });
        if (omp != ms.end()) {
            any = true;
            double const ow = median(cells[{sc, omp->name}].wall);
            bool const ok = best_wall <= ow;
            rec.add("omp_dynamic_wall_s", ow).add("best_weft_over_omp_dynamic", best_wall / ow).add("weft_vs_omp_met", ok);
            met = met && ok;
            say += ", best weft (" + best + ") " + fmt(best_wall / ow, 2) + "x omp_dynamic's wall";
        }
        if (!any) continue;
        rec.add("met", met).add("rounds", rounds);
        add_provenance(rec);
        ctx.emit(rec);
        ctx.say("target %s: wall/ideal, cpu/alone%s <= %.2f:%s [%s]\n", sc.c_str(),
                sc == "alone" ? "" : ", competitor slowdown", target_limit, say.c_str(), met ? "MET" : "MISSED");
    }
    return 0;
}

registrar const reg{experiment{
    .name = "asat",
    .description = "Severance & Enbody's ASAT (Figures 2-5): a parallel loop beside a CPU-bound competitor on 2 CPUs, "
                   "fixed workers against WEFT_ADAPT=asat|schedstat and OMP_DYNAMIC",
    .details =
        "The paper's kernel, a[i] = b[i]*c[i] + d[i]*e[i] (3 flops, 5 memory references) over --n elements in a\n"
        "time-step loop with a serial part between the loops (as many steps as make fts alone take --seconds, or\n"
        "--steps), on weft::parallel_for with --workers workers, confined to --cpus CPUs. Modes, each run in a\n"
        "child process with its environment: fts (WEFT_ADAPT=off), asat (WEFT_ADAPT=asat), schedstat\n"
        "(WEFT_ADAPT=schedstat), omp_dynamic (OpenMP, OMP_DYNAMIC=true). Scenarios: alone; competitor (a\n"
        "single-threaded busy loop with 1.25x the program's CPU time of work, started with it); changing (the\n"
        "competitor runs from a quarter to three quarters of an ideal run). Per (scenario, mode), medians over\n"
        "interleaved rounds: wall_s, cpu_s, ideal_wall_s (the wall time on the CPUs the competitor leaves, from\n"
        "fts alone in the same round), wall_over_ideal, cpu_over_alone, competitor_slowdown (its wall beside the\n"
        "program / alone); the changing scenario's active workers over time; and a target per scenario: asat and\n"
        "schedstat within 1.10x of the ideal wall time and of fts's CPU time alone, the competitor slowed <= 10%,\n"
        "weft's best mode at least as fast as omp_dynamic. fts alone always runs (it is the reference). See\n"
        "docs/bench.md.",
    .options = {{.name = "n", .kind = opt_kind::integer, .metavar = "N", .default_value = "100000",
                 .help = "elements per array (five arrays of doubles)", .min = 1000, .max = 1e9},
                {.name = "seconds", .kind = opt_kind::number, .metavar = "S", .default_value = "2",
                 .help = "size the run so that fts alone takes about S seconds (from a probe run)", .min = 0.01,
                 .max = 3600},
                {.name = "asat-interval-ms", .kind = opt_kind::integer, .metavar = "MS", .default_value = "100",
                 .help = "WEFT_ADAPT_INTERVAL of the asat mode (the paper's 1000 suits runs of minutes)", .min = 10,
                 .max = 60000},
                {.name = "steps", .kind = opt_kind::integer, .metavar = "N",
                 .help = "time steps (parallel loops) per run, instead of sizing by --seconds", .min = 1, .max = 1e12},
                opt_workers(2),
                {.name = "cpus", .kind = opt_kind::integer, .metavar = "N", .default_value = "2",
                 .help = "confine the run to the first N CPUs this process may use", .min = 1, .max = 1024},
                {.name = "modes", .kind = opt_kind::list, .metavar = "LIST",
                 .default_value = "fts,asat,schedstat,omp_dynamic", .help = "modes to run (fts always runs)",
                 .choices = mode_names()},
                {.name = "scenarios", .kind = opt_kind::list, .metavar = "LIST",
                 .default_value = "alone,competitor,changing", .help = "scenarios to run (alone always runs)",
                 .choices = scenario_names},
                {.name = "sample-ms", .kind = opt_kind::integer, .metavar = "MS", .default_value = "20",
                 .help = "period of the active-workers samples", .min = 1, .max = 10000},
                {.name = "quick", .kind = opt_kind::flag,
                 .help = "demo size: --seconds 0.15 --rounds 3 unless given"},
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
