// multigrid: the three versions and the registration (apps/multigrid/multigrid.hpp).
#include "apps/multigrid/multigrid.hpp"

#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "apps/app.hpp"
#include "apps/coarse.hpp"
#include "apps/multigrid/multigrid_instance.hpp"
#include "weft/filament.hpp"

namespace weft::apps::multigrid {
namespace {

// Interior rows [lo, hi) of strip k of w on an n x n grid: the same strips in
// the coarse-grain and the filaments versions.
struct strip {
    std::size_t lo, hi;
};
strip strip_of(std::size_t n, std::size_t k, std::size_t w) {
    const std::size_t m = n - 2;
    return {1 + k * m / w, 1 + (k + 1) * m / w};
}

std::size_t rows_of(const hierarchy& h, const step& s) { return h[static_cast<std::size_t>(s.rows_level())].n; }

// A filament: one row of one step.
struct row_body {
    hierarchy* h;
    step s;
    void operator()(int i, int) const { run_row(*h, s, static_cast<std::size_t>(i)); }
};

// The sequential code after a step's sweep: the direct solve after the
// restriction to the coarsest grid; the V-cycle count after the last step.
struct step_after {
    hierarchy* h;
    bool solve;
    int* cycles_left;  // non-null on the last step only
    weft::next operator()() const {
        if (solve) direct_solve(*h);
        if (cycles_left != nullptr && --*cycles_left == 0) return weft::next::done;
        return weft::next::continue_;
    }
};

}  // namespace

void serial(hierarchy& h) {
    const std::vector<step> sched = vcycle_schedule(h);
    for (int c = 0; c < cycles; ++c)
        for (const step& s : sched) {
            const std::size_t n = rows_of(h, s);
            for (std::size_t i = 1; i + 1 < n; ++i) run_row(h, s, i);
            if (solves_after(h, s)) direct_solve(h);
        }
}

void filaments(hierarchy& h) {
    const std::vector<step> sched = vcycle_schedule(h);
    using set_t = weft::pool_set<row_body, step_after>;
    int cycles_left = cycles;
    // One pool set per step of the V-cycle; the sequence loops over them, the
    // last one's after function ending it after `cycles` rounds.
    std::vector<std::unique_ptr<set_t>> sets;
    std::vector<weft_fil_poolset_t> seq;
    // Forward order, not back-and-forth (§3.1): the grids do not fit in cache,
    // so a backward sweep reuses nothing, and streaming rows in descending
    // order defeats the hardware prefetcher (docs/design/apps.md, "Sweep order").
    for (std::size_t k = 0; k < sched.size(); ++k) {
        const step& s = sched[k];
        step_after after{&h, solves_after(h, s), k + 1 == sched.size() ? &cycles_left : nullptr};
        sets.push_back(std::make_unique<set_t>(row_body{&h, s}, after, weft::order::forward));
        std::vector<weft::pool> pools = sets.back()->add_pools();
        for (std::size_t w = 0; w < pools.size(); ++w) {
            const strip st = strip_of(rows_of(h, s), w, pools.size());
            for (std::size_t i = st.lo; i < st.hi; ++i) pools[w].add(static_cast<int>(i));
        }
        seq.push_back(sets.back()->native_handle());
    }
    // weft::run takes a fixed number of sets; a sequence built at run time
    // goes through the C call.
    if (int rc = weft_fil_run_sets(seq.data(), static_cast<int>(seq.size())); rc != 0)
        throw std::system_error(rc, std::generic_category(), "multigrid: weft_fil_run_sets");
}

void coarse(hierarchy& h, int workers) {
    const std::vector<step> sched = vcycle_schedule(h);
    const std::size_t w = static_cast<std::size_t>(workers);
    // The barrier's completion (one thread, the others waiting) is the
    // sequential code between steps: the direct solve.
    struct between_steps {
        hierarchy* h;
        const std::vector<step>* sched;
        std::size_t* done;
        void operator()() noexcept {
            const step& s = (*sched)[*done % sched->size()];
            if (solves_after(*h, s)) direct_solve(*h);
            ++*done;
        }
    };
    std::size_t done = 0;
    sweep_barrier sync(static_cast<std::ptrdiff_t>(workers), between_steps{&h, &sched, &done});
    auto work = [&](std::size_t k) {
        for (int c = 0; c < cycles; ++c)
            for (const step& s : sched) {
                const strip st = strip_of(rows_of(h, s), k, w);
                for (std::size_t i = st.lo; i < st.hi; ++i) run_row(h, s, i);
                sync.arrive_and_wait();
            }
    };
    on_kernel_threads(w, work);
}

void problem::run_serial() { serial(h); }
void problem::run_coarse(int workers) { coarse(h, workers); }
void problem::run_filaments() { filaments(h); }

std::string problem::compare(const instance& reference) const {
    const auto& ref = static_cast<const problem&>(reference);
    if (ref.n != n) return "sizes differ: " + std::to_string(n) + " and " + std::to_string(ref.n);
    // Bit for bit (same row kernels, no reduction): report the largest difference.
    const std::vector<double>& x = h.front().u.v;
    const std::vector<double>& y = ref.h.front().u.v;
    std::size_t worst = 0, differ = 0;
    for (std::size_t k = 0; k < x.size(); ++k)
        if (x[k] != y[k]) {
            if (differ++ == 0 || std::fabs(x[k] - y[k]) > std::fabs(x[worst] - y[worst])) worst = k;
        }
    if (differ == 0) return {};
    char buf[200];
    std::snprintf(buf, sizeof buf, "%zu points of u differ from serial; max |x - y| = %.3g at (%zu, %zu)", differ,
                  std::fabs(x[worst] - y[worst]), worst / n, worst % n);
    return buf;
}

namespace {
registrar const reg{app{
    .name = "multigrid",
    .description = "10 multigrid V-cycles for 2-D Poisson; a filament per row in every phase",
    .bench_size = 4097,
    .demo_size = 2049,
    .test_size = 65,
    .size_meaning = "grid side n (2^k + 1 points)",
    .make = [](long size) -> std::unique_ptr<instance> {
        const auto n = static_cast<std::size_t>(size);
        if (n < 3 || ((n - 1) & (n - 2)) != 0) throw std::invalid_argument("multigrid: n must be 2^k + 1, k >= 1");
        return std::make_unique<problem>(n);
    },
}};
}  // namespace

}  // namespace weft::apps::multigrid
