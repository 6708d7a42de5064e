// weft-bench share: the worker program each child process runs
// (`weft-bench share --share-child`; the experiment: share.cpp).
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include <weft/weft.h>
#include <weft/filament.hpp>
#include <weft/weft.hpp>

#include "asat_kernel.hpp"
#include "harness.hpp"
#include "share.hpp"

namespace weft::bench::share {
namespace {

// A work unit: a binary fork/join tree of 2^unit_depth leaves, each a thread
// running unit_spin steps of a 64-bit LCG seeded by its position; the unit's
// result (the leaves' values combined) is checked against the serial one. One
// unit is about 1.1 ms of CPU on the 2-core AMD EPYC VM (1,160 units in 1.32 s
// of user time: `WEFT_WORKERS=1 WEFT_ADAPT=off time weft-bench share
// --share-child --seconds 2 --start-at-ns NOW`), so an interval of 50 ms holds
// dozens of units, and each leaf (~9 us) is about 100 times a thread's create
// + join: fine-grain parallel work, placed by the runtime, not by the program.
constexpr int unit_depth = 7;
constexpr long unit_spin = 8000;

[[gnu::noinline]] std::uint64_t leaf(std::uint64_t seed) {
    std::uint64_t x = seed;
    for (long i = 0; i < unit_spin; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        asm volatile("" : "+r"(x));
    }
    return x;
}

std::uint64_t combine(std::uint64_t a, std::uint64_t b) { return (a ^ (b >> 1)) * 0x9E3779B97F4A7C15ULL + b; }

std::uint64_t tree_parallel(int depth, std::uint64_t pos) {
    if (depth == 0) return leaf(pos);
    auto left = weft::spawn(&tree_parallel, depth - 1, 2 * pos);
    std::uint64_t const right = tree_parallel(depth - 1, 2 * pos + 1);
    return combine(left.join(), right);
}

std::uint64_t tree_serial(int depth, std::uint64_t pos) {
    if (depth == 0) return leaf(pos);
    std::uint64_t const l = tree_serial(depth - 1, 2 * pos);
    return combine(l, tree_serial(depth - 1, 2 * pos + 1));
}

// The loop program's arrays: the paper's n of Severance & Enbody's kernel
// (asat_kernel.hpp), about 0.1-0.2 ms per time step on two CPUs.
constexpr std::size_t loop_n = 100'000;

// The programs a child runs (--program): "tree", work units of fine-grain
// fork/join threads, which run well however many workers the kernel
// time-slices; "loop", Severance & Enbody's time-step loop, a parallel loop
// per step whose end waits for every worker: a worker that has lost its CPU
// holds up the step, so running more workers than the CPUs left to the
// program costs it.
class program {
public:
    explicit program(std::string const& name) : loop_(name == "loop") {
        if (name != "loop" && name != "tree") die("share: unknown program '%s' (valid: tree, loop)", name.c_str());
        if (loop_)
            x_.emplace(loop_n);
        else
            expected_ = tree_serial(unit_depth, 1);
    }
    // One work unit: a tree, checked against the serial one, or a time step.
    void unit() {
        if (loop_) {
            x_->serial(step_);
            auto const n = static_cast<std::int64_t>(x_->size());
            weft::parallel_for(std::int64_t{0}, n,
                               [this](std::int64_t i) { x_->iteration(static_cast<std::size_t>(i)); });
            ++step_;
            return;
        }
        std::uint64_t const got = tree_parallel(unit_depth, 1);
        if (got != expected_)
            die("share child %d: a work unit computed %llx, the serial tree %llx", static_cast<int>(getpid()),
                static_cast<unsigned long long>(got), static_cast<unsigned long long>(expected_));
    }
    // The loop's result: after the last step every a[i] matches the formula.
    void check_end() const {
        if (!loop_) return;
        if (std::size_t const i = x_->first_wrong(); i != x_->size())
            die("share child %d: after %llu steps a[%zu] = %.17g, expected %.17g", static_cast<int>(getpid()),
                static_cast<unsigned long long>(step_), i, x_->a[i], x_->b[i] * x_->c[i] + x_->d[i] * x_->e[i]);
    }

private:
    bool loop_;
    std::uint64_t expected_ = 0;
    std::optional<asat::arrays> x_;
    std::uint64_t step_ = 0;
};

}  // namespace

// The child's lines on its stdout (a pipe to the parent), all times in
// nanoseconds of CLOCK_MONOTONIC, which every process of the machine shares:
//   ready T                                   started, waiting for the common start
//   start T WORKERS SCHED ACTIVE SHARE MEMBERS runtime started and warmed up, units begin
//   tick T UNITS ACTIVE SHARE MEMBERS          every --interval-ms
//   end T UNITS ACTIVE SHARE MEMBERS           the run's end (after --seconds)
// ACTIVE is weft_stats_t.active_workers; SHARE and MEMBERS are the process's
// share of the core budget and the processes in it at the controller's last
// reading (weft_adapt_get; 0 and 0 without a budget).
// The runtime starts at the common start, as that of programs launched
// together would, rather than idling until then.
int run_child(std::string const& program_name, long long start_at_ns, double seconds, long interval_ms) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) die("prctl(PR_SET_PDEATHSIG): %s", std::strerror(errno));
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    program prog(program_name);
    std::printf("ready %llu\n", static_cast<unsigned long long>(now_ns()));
    timespec const at{static_cast<time_t>(start_at_ns / 1000000000), static_cast<long>(start_at_ns % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR) {
    }
    // The environment (WEFT_WORKERS, WEFT_ADAPT, ...) configures the runtime,
    // as it would any weft program's.
    if (int rc = weft_init(nullptr); rc != 0) die("share child: weft_init failed: %s", std::strerror(rc));
    auto unit = [&] { prog.unit(); };
    unit();  // warm-up: stacks, pages
    weft_stats_t st{};
    weft_adapt_info_t ad{};
    check(weft_stats_get(&st), "weft_stats_get");
    check(weft_adapt_get(&ad), "weft_adapt_get");
    std::uint64_t t = now_ns();
    std::printf("start %llu %d %s %d %d %d\n", static_cast<unsigned long long>(t), st.workers, weft_sched_name(),
                st.active_workers, ad.budget_share, ad.budget_members);

    std::uint64_t const start = static_cast<std::uint64_t>(start_at_ns);
    std::uint64_t const end = start + static_cast<std::uint64_t>(seconds * 1e9);
    std::uint64_t const interval = static_cast<std::uint64_t>(interval_ms) * 1000000ULL;
    unsigned long long units = 0;
    auto report = [&](char const* what) {
        check(weft_stats_get(&st), "weft_stats_get");
        check(weft_adapt_get(&ad), "weft_adapt_get");
        std::printf("%s %llu %llu %d %d %d\n", what, static_cast<unsigned long long>(t), units, st.active_workers,
                    ad.budget_share, ad.budget_members);
    };
    std::uint64_t next = start + interval;
    while (t < end) {
        unit();
        ++units;
        t = now_ns();
        if (t >= next && t < end) {
            report("tick");
            while (next <= t) next += interval;
        }
    }
    report("end");
    check(weft_finalize(), "weft_finalize");
    prog.check_end();
    return 0;
}

}  // namespace weft::bench::share
