// weft-bench — the machine's ceiling for W workers: W copies of a serial
// program at once (docs/bench.md, "The ceiling").
//
// W x (one copy's time alone) / (the time of W copies at once) is about the
// most a parallel version of the program can reach on this machine: W where
// the CPUs are independent, less where they share a core, a cache, memory
// bandwidth or a power budget, or where another tenant of the host takes part
// of them. About: W copies need W times the cache of one parallel program, so
// a program whose data fits the caches once but not W times can beat it.
#pragma once

#include <barrier>
#include <functional>
#include <thread>
#include <vector>

namespace weft::bench {

class serial_copies {
public:
    // run(i) runs copy i (each into a result of its own); the copies 1..W-1
    // run on kernel threads that live through every round, as weft's workers
    // do, so that each round finds them settled on their CPUs. (Created per
    // round, a thread now and then starts on its creator's CPU and runs its
    // copy after the creator's, and the ceiling then reads far below what a
    // parallel version of the same program reaches.)
    serial_copies(int copies, std::function<void(int)> run);
    ~serial_copies();
    serial_copies(serial_copies const&) = delete;
    serial_copies& operator=(serial_copies const&) = delete;

    // Runs every copy once, copy 0 on the calling thread; seconds until the
    // last one has finished.
    double round();

private:
    std::function<void(int)> run_;
    std::barrier<> start_, finish_;
    bool stop_ = false;  // written before `start_`, read after it
    std::vector<std::thread> others_;
};

}  // namespace weft::bench
