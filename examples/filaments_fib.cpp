// filaments_fib — fork/join filaments: a fork at every call of fib (Lowenthal,
// Freeh & Andrews §2.3, §4.4). While every worker is busy the forks are plain calls (pruning);
// an idle worker makes the busy ones fork again, at their shallowest joins.
//
//   build/release/bin/filaments_fib [n] [workers] [count]
//
// With count = 1 the runtime measures, and so counts the forks pruned into
// calls: an increment at every join, which the default run does not pay.
#include <weft/filament.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>

// Capture by value in hot recursive joins: the branches then stay in registers.
static long fib(int n) {
    if (n < 2) return n;
    auto [a, b] = weft::join([=] { return fib(n - 1); }, [=] { return fib(n - 2); });
    return a + b;
}

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 30;
    const bool count = argc > 3 && std::atoi(argv[3]) != 0;
    weft::runtime rt({.workers = argc > 2 ? std::atoi(argv[2]) : 0, .measure = count});
    auto t0 = std::chrono::steady_clock::now();
    long r = weft::fork_join([=] { return fib(n); });
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    weft_fil_stats_t s = weft::filament_stats();
    std::printf("fib(%d) = %ld in %.4f s on %d workers: %llu forks, %llu steals", n, r, secs, weft_num_workers(),
                static_cast<unsigned long long>(s.forks), static_cast<unsigned long long>(s.steals));
    if (count) std::printf(", %llu forks pruned into calls", static_cast<unsigned long long>(s.forks_pruned));
    std::printf("\n");
    return 0;
}
