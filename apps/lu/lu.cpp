// LU decomposition: the three versions and the registration (apps/lu/lu.hpp).
#include "apps/lu/lu.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/app.hpp"
#include "apps/coarse.hpp"
#include "weft/filament.hpp"

namespace weft::apps::lu {

matrix::matrix(int n_) : n(n_), a(static_cast<std::size_t>(n_) * n_), perm(static_cast<std::size_t>(n_), -1) {}

std::vector<double> input_values(int n) {
    std::vector<double> input(static_cast<std::size_t>(n) * n);
    std::uint64_t s = 0x2545F4914F6CDD1Dull;
    for (double& x : input) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x = static_cast<double>(s >> 11) * 0x1.0p-52 - 1.0;
    }
    return input;
}

namespace {
// The first row at or after `from` that worker w owns when rows are dealt
// cyclically over `workers` (row i to worker i mod workers).
int first_cyclic_row(int from, int w, int workers) { return from + ((w - from) % workers + workers) % workers; }
}  // namespace

void serial(matrix& m) {
    const int n = m.n;
    double* a = m.a.data();
    for (int k = 0; k + 1 < n; ++k) {
        pivot_serially(m, k);
        for (int i = k + 1; i < n; ++i) eliminate_row(a, n, i, k);
    }
}

void coarse(matrix& m, int workers) {
    const int n = m.n;
    if (n < 2) return;
    double* a = m.a.data();
    struct alignas(64) slot {
        pivot_candidate c;
    };
    std::vector<slot> candidates(static_cast<std::size_t>(workers));
    int k = 0;
    bool after_pivot = true;  // which phase the next barrier completes
    // The completion step runs on one thread while the others wait (the
    // filaments version's after functions).
    auto complete = [&]() noexcept {
        if (after_pivot) {
            pivot_candidate best;
            for (const slot& s : candidates) best = better_pivot{}(best, s.c);
            apply_pivot(m, k, best.row);
        } else {
            ++k;
        }
        after_pivot = !after_pivot;
    };
    sweep_barrier sync(workers, complete);
    auto work = [&](int t) {
        // Rows t, t + P, ...: the first one > k is found from k each step.
        while (k + 1 < n) {
            pivot_candidate best;
            for (int i = first_cyclic_row(k, t, workers); i < n; i += workers) best = better_pivot{}(best, pivot_candidate_of(a, n, i, k));
            candidates[static_cast<std::size_t>(t)].c = best;
            sync.arrive_and_wait();
            for (int i = first_cyclic_row(k + 1, t, workers); i < n; i += workers) eliminate_row(a, n, i, k);
            sync.arrive_and_wait();
        }
    };
    on_kernel_threads(workers, work);
}

void filaments(matrix& m) {
    const int n = m.n;
    if (n < 2) return;
    double* a = m.a.data();
    const int workers = filament_workers();
    int k = 0;  // the step; written only by after functions (every worker waits then)
    weft::reduction<pivot_candidate, better_pivot> best;
    // One pool per worker in each set, rows cyclic: row i on worker i mod P
    // (§4.4). The pivot pools hold rows k.. and the elimination pools rows
    // k+1..: each after function refills the other set's pools for the next
    // step (weft::pool::clear + add_range), so no sweep visits a finished row.
    std::vector<weft::pool> pivot_pools, elimination_pools;
    auto refill = [workers, n](std::vector<weft::pool>& pools, int from) {
        for (int w = 0; w < workers; ++w) {
            weft::pool& p = pools[static_cast<std::size_t>(w)];
            p.clear();
            p.add_range(first_cyclic_row(from, w, workers), n, workers);
        }
    };
    weft::pool_set pivot(
        [&, a, n](int i, int) {
            pivot_candidate& b = best.local();
            b = better_pivot{}(b, pivot_candidate_of(a, n, i, k));
        },
        [&] {
            apply_pivot(m, k, best.reduce().row);
            best.reset();
            refill(elimination_pools, k + 1);
            return weft::next::continue_;
        });
    weft::pool_set elimination([&k, a, n](int i, int) { eliminate_row(a, n, i, k); },
                               [&] {
                                   ++k;
                                   if (k + 1 >= n) return weft::next::done;
                                   refill(pivot_pools, k);
                                   return weft::next::continue_;
                               });
    for (int w = 0; w < workers; ++w) {
        const std::size_t rows = static_cast<std::size_t>((n - w + workers - 1) / workers);
        pivot_pools.push_back(pivot.add_pool(w, rows));
        elimination_pools.push_back(elimination.add_pool(w, rows));
    }
    refill(pivot_pools, 0);
    refill(elimination_pools, 1);
    weft::run(pivot, elimination);
}

namespace {

struct problem final : instance {
    explicit problem(int n) : m(n), input(input_values(n)) {}
    void reset() override {
        m.a = input;
        std::fill(m.perm.begin(), m.perm.end(), -1);
    }
    void run_serial() override { serial(m); }
    void run_coarse(int workers) override { coarse(m, workers); }
    void run_filaments() override { filaments(m); }
    std::string compare(const instance& reference) const override {
        const auto& ref = static_cast<const problem&>(reference).m;
        if (ref.n != m.n) return "sizes differ: " + std::to_string(m.n) + " vs " + std::to_string(ref.n);
        for (std::size_t k = 0; k < m.perm.size(); ++k)
            if (m.perm[k] != ref.perm[k])
                return "pivot of step " + std::to_string(k) + " is row " + std::to_string(m.perm[k]) +
                       ", serial chose row " + std::to_string(ref.perm[k]);
        return compare_exact(m.a, ref.a, static_cast<std::size_t>(m.n), "LU");
    }
    matrix m;
    std::vector<double> input;
};

registrar const reg{app{
    .name = "lu",
    .description = "LU with partial pivoting, two pool sets per step (pivot, elimination), a filament per row",
    .bench_size = 2400,
    .demo_size = 1700,
    .test_size = 40,
    .size_meaning = "n of the n x n matrix",
    .make = [](long size) -> std::unique_ptr<instance> { return std::make_unique<problem>(static_cast<int>(size)); },
}};

}  // namespace
}  // namespace weft::apps::lu
