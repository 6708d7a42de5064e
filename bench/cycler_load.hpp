// The cycler of Arora, Blumofe & Plaxton ("Varying number of processors"):
// a competing load whose processor use grows and shrinks at random while
// `weft-bench cycler` runs knary beside it.
//
// Repeatedly, the cycler starts a random number of kernel processes (uniform
// in 0..max_processes), each of which runs for a random time (uniform in
// [min_ms, max_ms]) incrementing a counter, and waits for them all to end
// before it starts the next batch (an empty batch is a pause of such a
// random time). At regular intervals the counter's value and a timestamp are
// written to a log. The processes are forked, so their CPU time is never the
// benchmark's: the processor average PA that knary measures for itself (its
// process's CPU time over wall time) excludes them by construction.
//
// Processes, all forked before any weft runtime exists (a fork copies only
// the calling thread):
//   weft-bench ── controller ── cycler processes (one batch at a time)
// The controller starts the batches, reaps them and writes the log; it and
// the cycler processes die with their parent (PR_SET_PDEATHSIG), so a
// benchmark that stops early leaves nothing running.
//
// Shared state: one MAP_SHARED anonymous mapping. The "shared counter" is
// kept as one counter per process slot, each on its own cache line, and read
// as their sum: a single counter incremented by several processes at once
// would make every increment a cache-line transfer, and the increments per
// CPU-second would then depend on how many processes run, which is the thing
// being measured. Each process also publishes its own CPU time in its slot
// (every 2^18 increments, about 0.1 ms). So the cycler's processor average
// over an interval is known two ways:
//   - from CPU time: the slots' CPU time gained over the interval / its length;
//   - from the counter, as the paper does: the increments over the interval /
//     (increments per CPU-second) / its length, the rate being the one all
//     cycler processes achieved over the whole run (total increments / total
//     CPU time).
// Memory ordering: the counters, CPU times and flags are atomics read and
// written relaxed: each is written by one process at a time (a slot by the
// process that holds it; the controller starts a slot's next process only
// after reaping the previous one, and waitpid orders the two), and readers
// want the latest value of each word, not an order between words. The log's
// length is stored with release after its new entry, and read with acquire,
// so a reader sees every entry it counts.
#pragma once

#include <cstdint>
#include <sys/types.h>
#include <vector>

namespace weft::bench::cycler {

struct settings {
    int max_processes = 2;     // a batch has 0..max_processes processes, uniformly
    double min_ms = 10;        // each process (or pause) lasts uniformly in [min_ms, max_ms]
    double max_ms = 300;
    double interval_ms = 250;  // the log's sampling period
    std::uint64_t seed = 1;    // of the controller's random numbers
};

// The cycler's totals at one moment: increments and CPU time of all its
// processes so far, and when they were read (now_ns()).
struct reading {
    std::uint64_t t_ns = 0;
    std::uint64_t count = 0;
    std::uint64_t cpu_ns = 0;
};

// A log entry: a reading and the processes running when it was taken.
struct sample {
    reading at;
    std::uint32_t running = 0;
};

struct shared_state;

class load {
public:
    // Maps the shared state and forks the controller, which waits for start().
    // Dies (exit 1, message on stderr) if the mapping or the fork fails.
    explicit load(settings const& s);
    // Stops the processes if they still run and reaps the controller.
    ~load();
    load(load const&) = delete;
    load& operator=(load const&) = delete;

    void start();
    // Ends the current batch (its processes stop within about 0.1 ms of CPU
    // time each), waits for the controller and takes the final log entry.
    // Dies if the controller failed (a fork it made failed: the message names it).
    void stop();

    reading read() const;
    std::vector<sample> log() const;  // complete after stop()
    std::uint64_t processes_started() const;
    // Increments per CPU-nanosecond over all processes so far (0 before any CPU
    // time was published).
    double increments_per_cpu_ns() const;

private:
    shared_state* sh_ = nullptr;
    pid_t controller_ = -1;
};

}  // namespace weft::bench::cycler
