// filaments_jacobi — Jacobi iteration with one filament per grid point
// (Lowenthal, Freeh & Andrews §2.2), written the fine-grain way: no partitioning code.
//
// Each interior point (i, j) is a filament; the points of a strip of rows go
// to one pool, one pool per worker, so each worker keeps its strip in cache
// (the program chooses placement; the runtime runs each pool as a plain 2-D
// loop because it recognises the dense block, and alternates the direction of
// the loop every sweep). After every sweep, one worker runs the convergence
// test: it combines the per-worker maximum differences (a reduction variable)
// and swaps the grids.
//
//   build/release/bin/filaments_jacobi [n] [workers]
#include <weft/filament.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 200;
    const double eps = 1e-3;
    weft::runtime rt({.workers = argc > 2 ? std::atoi(argv[2]) : 0});

    // Boundary: the top edge is hot (1.0), the rest cold (0.0).
    std::vector<double> a(static_cast<std::size_t>(n) * n, 0.0), b = a;
    for (int j = 0; j < n; ++j) a[j] = b[j] = 1.0;
    double* oldg = a.data();
    double* newg = b.data();

    weft::reduction<double, weft::maximum<>> maxdiff(0.0);
    int iterations = 0;
    weft::pool_set jacobi(
        // One filament: a point. `m` is this worker's copy of maxdiff (what
        // maxdiff.local() returns), kept in a register while a pool runs.
        weft::with_local(maxdiff,
                         [&](int i, int j, double& m) {
                             const double v = 0.25 * (oldg[(i - 1) * n + j] + oldg[(i + 1) * n + j] +
                                                      oldg[i * n + j - 1] + oldg[i * n + j + 1]);
                             newg[i * n + j] = v;
                             m = std::max(m, std::fabs(v - oldg[i * n + j]));
                         }),
        [&] {  // after each sweep, on one worker while the others wait
            ++iterations;
            const double md = maxdiff.reduce();
            maxdiff.reset();
            std::swap(oldg, newg);
            return md < eps ? weft::next::done : weft::next::continue_;
        });

    std::vector<weft::pool> pools = jacobi.add_pools();  // one per worker
    const int workers = static_cast<int>(pools.size());
    for (int i = 1; i < n - 1; ++i) {
        weft::pool& strip = pools[static_cast<std::size_t>((i - 1) * workers / (n - 2))];
        for (int j = 1; j < n - 1; ++j) strip.add(i, j);
    }

    auto t0 = std::chrono::steady_clock::now();
    weft::run(jacobi);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    weft_fil_stats_t s = weft::filament_stats();
    std::printf("jacobi %dx%d on %d workers: %d iterations, %.3f s; center %.6f\n", n, n, workers, iterations,
                secs, oldg[(n / 2) * n + n / 2]);
    std::printf("filaments run %llu; pool sweeps: %llu dense 2-D, %llu dense 1-D, %llu general; path of pool 0: %s\n",
                static_cast<unsigned long long>(s.filaments_run), static_cast<unsigned long long>(s.pools_dense_2d),
                static_cast<unsigned long long>(s.pools_dense_1d), static_cast<unsigned long long>(s.pools_general),
                pools[0].path() == weft::pool_path::dense_2d ? "dense 2-D" : "other");
    return iterations > 0 ? 0 : 1;
}
