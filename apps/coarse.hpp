// What the applications' coarse-grain versions and checks share (apps/app.hpp).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <thread>
#include <vector>

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

// Exact comparison of two row-major arrays of `cols` columns (every version
// does the same arithmetic per element, so any difference is an error; a NaN
// never compares equal, which catches an element nobody computed): empty if
// equal, else "B of N elements of WHAT differ; first (i, j) = x, serial gives y".
std::string compare_exact(std::span<const double> mine, std::span<const double> serial, std::size_t cols,
                          const char* what);

}  // namespace weft::apps
