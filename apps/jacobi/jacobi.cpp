// jacobi: the coarse-grain and filaments versions and the registration
// (apps/jacobi/jacobi.hpp).
#include "apps/jacobi/jacobi.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "apps/app.hpp"
#include "apps/coarse.hpp"
#include "apps/jacobi/jacobi_instance.hpp"
#include "weft/filament.hpp"

namespace weft::apps::jacobi {

outcome coarse(double* a, double* b, int n, int workers) {
    struct alignas(64) slot {
        std::uint64_t m;
    };
    std::vector<slot> local(static_cast<std::size_t>(workers), slot{0});
    double* old = a;
    double* nw = b;
    outcome o;
    bool done = false;
    // Runs on one thread once all have arrived, before any is released: the
    // threads read old, nw and done only after the barrier.
    auto check = [&]() noexcept {
        std::uint64_t mb = 0;
        for (const slot& s : local) mb = std::max(mb, s.m);
        const double m = from_bits(mb);
        std::swap(old, nw);
        ++o.sweeps;
        o.maxdiff = m;
        done = finished(m, o.sweeps);
    };
    sweep_barrier sync(workers, check);
    auto work = [&](int t) {
        const int i0 = strip_begin(n, workers, t), i1 = strip_begin(n, workers, t + 1);
        do {
            local[static_cast<std::size_t>(t)].m = relax_rows(old, nw, n, i0, i1, 0);
            sync.arrive_and_wait();
        } while (!done);
    };
    on_kernel_threads(workers, work);
    return o;
}

outcome filaments(double* a, double* b, int n) {
    double* old = a;
    double* nw = b;
    outcome o;
    weft::reduction<std::uint64_t, weft::maximum<>> maxdiff(bits(0.0));  // bit patterns (jacobi.hpp)
    weft::pool_set set(
        // The paper's jacobi(i, j), with its `if (temp > Local(maxdiff))
        // Local(maxdiff) = temp` on `m`, the worker's copy of maxdiff, which
        // weft::with_local keeps in a local variable while a pool runs: the
        // same kernel (relax_max) as the other versions' loops. (Through
        // maxdiff.local() at every point, loaded, compared and stored on a
        // new maximum, the copy stays in memory: docs/design/filaments.md,
        // "Reductions in the coarsened loop", has the figures.)
        weft::with_local(maxdiff, [&](int i, int j, std::uint64_t& m) { relax_max(old, nw, n, i, j, m); }),
        [&] {  // the paper's convergenceCheck, on one worker after each sweep
            const double m = from_bits(maxdiff.reduce());
            maxdiff.reset();
            std::swap(old, nw);
            ++o.sweeps;
            o.maxdiff = m;
            return finished(m, o.sweeps) ? weft::next::done : weft::next::continue_;
        },
        weft::order::forward);
    // One pool per worker, a strip of rows each (the paper's whichPool): each
    // worker keeps its strip in its cache, and the runtime sees a dense block.
    const int parts = filament_workers();
    std::vector<weft::pool> pools =
        set.add_pools(static_cast<std::size_t>(n - 2) * static_cast<std::size_t>(n - 2) / static_cast<std::size_t>(parts) +
                      static_cast<std::size_t>(n));
    for (int k = 0; k < static_cast<int>(pools.size()); ++k)
        for (int i = strip_begin(n, parts, k); i < strip_begin(n, parts, k + 1); ++i)
            for (int j = 1; j < n - 1; ++j) pools[static_cast<std::size_t>(k)].add(i, j);
    weft::run(set);
    return o;
}

void problem::run_serial() { result = serial(a.data(), b.data(), n); }
void problem::run_coarse(int workers) { result = coarse(a.data(), b.data(), n, workers); }
void problem::run_filaments() { result = filaments(a.data(), b.data(), n); }

std::string problem::compare(const instance& reference) const {
    const auto& ref = static_cast<const problem&>(reference);
    if (result.sweeps != ref.result.sweeps || result.maxdiff != ref.result.maxdiff)
        return std::to_string(result.sweeps) + " sweeps, last max change " + std::to_string(result.maxdiff) +
               "; serial: " + std::to_string(ref.result.sweeps) + " sweeps, " + std::to_string(ref.result.maxdiff);
    return compare_exact(newest(), ref.newest(), static_cast<std::size_t>(n), "the grid");
}

namespace {
registrar const reg{app{
    .name = "jacobi",
    .description = "Jacobi iteration on an n x n grid, a filament per point, max-reduction per sweep",
    .bench_size = 420,
    .demo_size = 140,
    .test_size = 24,
    .size_meaning = "grid side n (at most 10000 sweeps, epsilon 1e-6)",
    .make = [](long size) -> std::unique_ptr<instance> { return std::make_unique<problem>(static_cast<int>(size)); },
}};
}  // namespace

}  // namespace weft::apps::jacobi
