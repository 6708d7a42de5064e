// The cycler's processes (cycler_load.hpp).
#include "cycler_load.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>
#include <random>

#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.hpp"

namespace weft::bench::cycler {

namespace {

constexpr int max_slots = 64;                  // the most processes in a batch
constexpr std::size_t log_capacity = 1 << 16;  // samples: 4.5 hours at 250 ms
// Increments between two publications of a process's CPU time and two looks at
// its deadline and the stop flag: about 0.1 ms of stores, so the
// clock_gettime call (a system call, about 0.3 us) costs under 1%.
constexpr std::uint64_t increments_per_check = 1u << 18;

enum : int {
    waiting = 0,
    running = 1,
    stopping = 2
};

struct alignas(64) slot {
    std::atomic<std::uint64_t> count{0};
    std::atomic<std::uint64_t> cpu_ns{0};
};

}  // namespace

struct shared_state {
    std::atomic<int> state{waiting};
    std::atomic<int> fork_errno{0};  // set by the controller when a fork failed
    std::atomic<std::uint64_t> started{0};
    std::atomic<std::uint64_t> samples{0};
    slot slots[max_slots];
    sample log[log_capacity];
};

namespace {

reading read_totals(shared_state const* sh) {
    reading r;
    for (slot const& s : sh->slots) {
        r.count += s.count.load(std::memory_order_relaxed);
        r.cpu_ns += s.cpu_ns.load(std::memory_order_relaxed);
    }
    r.t_ns = now_ns();
    return r;
}

// Dies with the process that forked the caller. (A parent that died before the
// prctl is seen by the getppid check.)
void die_with_parent(pid_t parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(0);
}

// A cycler process: increments its slot's counter for run_ns, or until the
// cycler stops.
[[noreturn]] void cycle(shared_state* sh, int index, std::uint64_t run_ns, pid_t controller) {
    die_with_parent(controller);
    slot& s = sh->slots[index];
    std::uint64_t const base_count = s.count.load(std::memory_order_relaxed);
    std::uint64_t const base_cpu = s.cpu_ns.load(std::memory_order_relaxed);
    std::uint64_t const cpu0 = process_cpu_ns();
    std::uint64_t const deadline = now_ns() + run_ns;
    std::uint64_t n = 0;
    for (;;) {
        for (std::uint64_t i = 0; i < increments_per_check; ++i)
            s.count.store(base_count + ++n, std::memory_order_relaxed);
        s.cpu_ns.store(base_cpu + (process_cpu_ns() - cpu0), std::memory_order_relaxed);
        if (now_ns() >= deadline || sh->state.load(std::memory_order_relaxed) != running) break;
    }
    _exit(0);
}

void append_sample(shared_state* sh, std::uint32_t alive) {
    std::uint64_t const i = sh->samples.load(std::memory_order_relaxed);
    if (i >= log_capacity) return;
    sh->log[i] = {read_totals(sh), alive};
    sh->samples.store(i + 1, std::memory_order_release);
}

void sleep_ns(std::uint64_t ns) {
    timespec ts{time_t(ns / 1000000000u), long(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

// The controller: batches of processes until the cycler stops, sampling the
// totals into the log every interval.
[[noreturn]] void control(shared_state* sh, settings const st, pid_t parent) {
    die_with_parent(parent);
    pid_t const self = getpid();
    while (sh->state.load(std::memory_order_relaxed) == waiting) sleep_ns(1000000);
    std::mt19937_64 rng(st.seed);
    std::uniform_int_distribution<int> count(0, st.max_processes);
    std::uniform_real_distribution<double> ms(st.min_ms, st.max_ms);
    auto const interval = std::uint64_t(st.interval_ms * 1e6);
    std::uint64_t next_sample = now_ns();
    std::uint64_t pause_until = 0;
    std::uint32_t alive = 0;
    while (sh->state.load(std::memory_order_relaxed) == running) {
        int status = 0;
        while (alive > 0 && waitpid(-1, &status, WNOHANG) > 0) --alive;
        std::uint64_t now = now_ns();
        if (alive == 0 && now >= pause_until) {
            int const m = count(rng);
            if (m == 0) pause_until = now + std::uint64_t(ms(rng) * 1e6);
            for (int i = 0; i < m; ++i) {
                std::uint64_t const run_ns = std::uint64_t(ms(rng) * 1e6);
                pid_t const pid = fork();
                if (pid == 0) cycle(sh, i, run_ns, self);
                if (pid < 0) {
                    sh->fork_errno.store(errno, std::memory_order_relaxed);
                    sh->state.store(stopping, std::memory_order_relaxed);
                    break;
                }
                ++alive;
                sh->started.fetch_add(1, std::memory_order_relaxed);
            }
        }
        now = now_ns();
        if (now >= next_sample) {
            append_sample(sh, alive);
            next_sample += interval;
        }
        // Wake for the next sample, and at least every millisecond to reap.
        sleep_ns(std::min<std::uint64_t>(next_sample > now ? next_sample - now : 0, 1000000));
    }
    while (alive > 0) {
        int status = 0;
        if (waitpid(-1, &status, 0) > 0 || errno == ECHILD) --alive;
    }
    append_sample(sh, 0);
    _exit(0);
}

}  // namespace

load::load(settings const& s) {
    if (s.max_processes < 0 || s.max_processes > max_slots)
        die("cycler: %d processes at most in a batch; valid: 0..%d", s.max_processes, max_slots);
    void* mem = mmap(nullptr, sizeof(shared_state), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        die("cycler: mmap of %zu shared bytes failed: %s", sizeof(shared_state), std::strerror(errno));
    sh_ = new (mem) shared_state;
    std::fflush(nullptr);  // the children must not flush our buffered output again
    pid_t const parent = getpid();
    controller_ = fork();
    if (controller_ < 0) die("cycler: fork failed: %s", std::strerror(errno));
    if (controller_ == 0) control(sh_, s, parent);
}

load::~load() {
    if (controller_ > 0) {
        sh_->state.store(stopping, std::memory_order_relaxed);
        wait_child(controller_);
    }
    if (sh_ != nullptr) {
        sh_->~shared_state();
        munmap(sh_, sizeof(shared_state));
    }
}

void load::start() { sh_->state.store(running, std::memory_order_relaxed); }

void load::stop() {
    sh_->state.store(stopping, std::memory_order_relaxed);
    int const status = wait_child(controller_);
    controller_ = -1;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("cycler: the controller process ended abnormally (status %d)", status);
    if (int const e = sh_->fork_errno.load(std::memory_order_relaxed); e != 0)
        die("cycler: the controller could not fork a cycler process: %s", std::strerror(e));
}

reading load::read() const { return read_totals(sh_); }

std::vector<sample> load::log() const {
    std::uint64_t const n = sh_->samples.load(std::memory_order_acquire);
    return {sh_->log, sh_->log + n};
}

std::uint64_t load::processes_started() const { return sh_->started.load(std::memory_order_relaxed); }

double load::increments_per_cpu_ns() const {
    reading const r = read_totals(sh_);
    return r.cpu_ns > 0 ? double(r.count) / double(r.cpu_ns) : 0.0;
}

}  // namespace weft::bench::cycler
