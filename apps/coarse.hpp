// What the applications' coarse-grain versions and checks share (apps/app.hpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "src/core/sleep/stages.hpp"

namespace weft::apps {

// Runs work(t) for every t in [0, workers): t = 0 on the calling thread, the
// others each on a kernel thread of its own (std::thread), and returns when
// all have returned. The shape of every coarse-grain version: one thread per
// processor with a static share, as the paper's coarse programs.
template <class I, class Work>
void on_kernel_threads(I workers, Work work) {
    std::vector<std::thread> threads;
    for (I t = 1; t < workers; ++t) threads.emplace_back(work, t);
    work(I{0});
    for (std::thread& t : threads) t.join();
}

// The barrier of the coarse-grain versions that sweep (Jacobi, LU, Tomcatv,
// multigrid, the FFT): std::barrier's interface (arrive_and_wait; the
// completion runs on the last thread to arrive, before any is released), but
// waiting as the filaments' own sweep barrier waits: spin, then yield, then
// block, with the filaments' own stages and constants (the core's sleep
// module: src/core/sleep/stages.hpp, filament_stages; the blocking kind is
// std::atomic::wait, src/core/sleep/README.md). std::barrier blocks almost at
// once, and a kernel wake-up per sweep costs the coarse-grain Jacobi (10,000 sweeps) more
// than it costs the filaments version: 1.22-1.45 s on two workers where
// OpenMP's spinning barrier took 0.87-0.94 s (Zen 4; `weft-bench filaments
// --app jacobi --workers 2` with std::barrier in its place). A baseline should
// wait no worse than what it is compared with.
//
// Memory ordering: arrivals are a release sequence on `arrived_` (acq_rel),
// so the last arrival, which runs the completion, sees every thread's work;
// it resets `arrived_` and then publishes the next generation with a release
// store, which the waiters acquire: they see the completion's writes, and
// their next arrival counts from 0.
template <class Completion>
class sweep_barrier {
public:
    sweep_barrier(std::ptrdiff_t threads, Completion done) : threads_(threads), done_(std::move(done)) {}
    sweep_barrier(const sweep_barrier&) = delete;
    sweep_barrier& operator=(const sweep_barrier&) = delete;

    void arrive_and_wait() {
        const unsigned gen = generation_.load(std::memory_order_acquire);
        if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
            done_();
            arrived_.store(0, std::memory_order_relaxed);
            generation_.store(gen + 1, std::memory_order_release);
            generation_.notify_all();
            return;
        }
        namespace sleep = weft::detail::sleep;
        auto stages = sleep::filament_stages();
        while (generation_.load(std::memory_order_acquire) == gen) {
            switch (stages.next()) {
            case sleep::stage::spin:
                break;
            case sleep::stage::yield:
                std::this_thread::yield();
                break;
            case sleep::stage::block:
                // std::atomic::wait announces, fences and re-checks the value
                // itself (sleep::fall_asleep): nothing to add around it.
                sleep::fall_asleep([] {}, [] {}, [&] { return generation_.load(std::memory_order_acquire) != gen; },
                                   [&] { generation_.wait(gen, std::memory_order_acquire); }, [] {});
                break;
            }
        }
    }

private:
    const std::ptrdiff_t threads_;
    Completion done_;
    alignas(64) std::atomic<std::ptrdiff_t> arrived_{0};
    alignas(64) std::atomic<unsigned> generation_{0};
};

// Exact comparison of two row-major arrays of `cols` columns (every version
// does the same arithmetic per element, so any difference is an error; a NaN
// never compares equal, which catches an element nobody computed): empty if
// equal, else "B of N elements of WHAT differ; first (i, j) = x, serial gives y".
std::string compare_exact(std::span<const double> mine, std::span<const double> serial, std::size_t cols,
                          const char* what);

}  // namespace weft::apps
