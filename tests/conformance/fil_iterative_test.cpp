// Iterative filaments: pools, pool sets, sequences, after functions, the
// pattern recognizer (coarsened vs general path, asserted through the
// statistics), back-and-forth order, reductions, exceptions (Lowenthal, Freeh & Andrews §2.1-2.2, §3.1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <vector>

#include "support/weft_test.hpp"
#include "weft/filament.hpp"

namespace {

class FilIterative : public ::testing::TestWithParam<int> {
protected:
    void SetUp() override {
        weft_config_t cfg{};
        cfg.workers = GetParam();
        ASSERT_EQ(weft_init(&cfg), 0);
        ASSERT_EQ(weft_fil_stats_reset(), 0);
    }
    void TearDown() override { ASSERT_EQ(weft_finalize(), 0); }
    int workers() const { return GetParam(); }
};

// Jacobi on an n x n grid: one filament per interior point, strips of rows per
// pool, max-difference reduction and convergence test in the after function.
std::vector<double> jacobi_serial(int n, double eps, int* iters) {
    std::vector<double> a(n * n, 0.0), b(n * n, 0.0);
    for (int j = 0; j < n; ++j) a[j] = b[j] = 1.0;  // top edge
    *iters = 0;
    for (;;) {
        double md = 0;
        for (int i = 1; i < n - 1; ++i)
            for (int j = 1; j < n - 1; ++j) {
                b[i * n + j] = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1]);
                md = std::max(md, std::fabs(b[i * n + j] - a[i * n + j]));
            }
        ++*iters;
        std::swap(a, b);
        if (md < eps) return a;
    }
}

TEST_P(FilIterative, jacobi_dense_2d_equals_serial) {
    const int n = 34;
    const double eps = 1e-4;
    int serial_iters = 0;
    std::vector<double> want = jacobi_serial(n, eps, &serial_iters);

    std::vector<double> a(n * n, 0.0), b(n * n, 0.0);
    for (int j = 0; j < n; ++j) a[j] = b[j] = 1.0;
    std::vector<double>*oldg = &a, *newg = &b;
    weft::reduction<double, weft::maximum<>> maxdiff(0.0);
    int iters = 0;
    weft::pool_set ps(
        [&](int i, int j) {
            std::vector<double>& o = *oldg;
            double v = 0.25 * (o[(i - 1) * n + j] + o[(i + 1) * n + j] + o[i * n + j - 1] + o[i * n + j + 1]);
            (*newg)[i * n + j] = v;
            double& m = maxdiff.local();
            m = std::max(m, std::fabs(v - o[i * n + j]));
        },
        [&] {
            ++iters;
            double md = maxdiff.reduce();
            maxdiff.reset();
            std::swap(oldg, newg);
            return md < eps ? weft::next::done : weft::next::continue_;
        });
    std::vector<weft::pool> pools = ps.add_pools();
    const int rows = n - 2;
    for (int i = 1; i < n - 1; ++i) {
        weft::pool& p = pools[static_cast<std::size_t>((i - 1) * workers() / rows)];  // strips
        for (int j = 1; j < n - 1; ++j) p.add(i, j);
    }
    weft::run(ps);
    EXPECT_EQ(iters, serial_iters);
    EXPECT_EQ(*oldg, want);
    for (auto& p : pools) {
        if (p.size() > 0) {
            EXPECT_EQ(p.path(), weft::pool_path::dense_2d);
        }
    }
    weft_fil_stats_t s = weft::filament_stats();
    EXPECT_EQ(s.pools_general, 0u);
    EXPECT_GT(s.pools_dense_2d, 0u);
    EXPECT_EQ(s.sweeps, static_cast<std::uint64_t>(iters));
}

TEST_P(FilIterative, recognizer_paths_and_identical_results) {
    // The same sums over three layouts: a dense column (1-D), cyclic rows
    // (2-D with a stride), and a shuffled order (general).
    const int n = 40;
    auto run_layout = [&](int layout, weft::pool_path* path) {
        std::vector<long> cell(n * n, 0);
        weft::pool_set ps([&](int i, int j) { cell[i * n + j] += i * 1000 + j; });
        weft::pool p = ps.add_pool(0);
        if (layout == 0) {
            for (int i = 0; i < n; ++i) p.add(i, 7);  // column j = 7
        } else if (layout == 1) {
            for (int i = 1; i < n; i += 3)
                for (int j = 0; j < n; ++j) p.add(i, j);  // every third row
        } else {
            for (int i = n - 1; i >= 0; --i) p.add(i, 7);  // the column backwards
        }
        weft::run(ps);
        *path = p.path();
        return cell;
    };
    weft::pool_path p0, p1, p2;
    auto c0 = run_layout(0, &p0);
    auto c1 = run_layout(1, &p1);
    auto c2 = run_layout(2, &p2);
    EXPECT_EQ(p0, weft::pool_path::dense_1d);
    EXPECT_EQ(p1, weft::pool_path::dense_2d);
    EXPECT_EQ(p2, weft::pool_path::general);
    EXPECT_EQ(c0, c2);  // same filaments, coarsened or not
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) EXPECT_EQ(c1[i * n + j], (i % 3 == 1) ? i * 1000 + j : 0);
    weft_fil_stats_t s = weft::filament_stats();
    EXPECT_EQ(s.pools_dense_1d, 1u);
    EXPECT_EQ(s.pools_dense_2d, 1u);
    EXPECT_EQ(s.pools_general, 1u);
}

TEST_P(FilIterative, create_range_adds_what_nested_creates_add) {
    // Same descriptors, same paths, same results as one weft_fil_create each.
    const int n = 30;
    auto run_with = [&](bool range, int i0, int i1, int s, int j0, int j1, weft::pool_path* path) {
        std::vector<long> cell(n * n, 0);
        weft::pool_set ps([&](int i, int j) { cell[i * n + j] += i * 1000 + j + 1; });
        weft::pool p = ps.add_pool(0);
        if (range) {
            p.add_range(i0, i1, s, j0, j1);
        } else {
            for (int i = i0; i < i1; i += s)
                for (int j = j0; j < j1; ++j) p.add(i, j);
        }
        EXPECT_EQ(p.size(), static_cast<std::size_t>((i1 - i0 + s - 1) / s * (j1 - j0)));
        weft::run(ps);
        *path = p.path();
        return cell;
    };
    struct shape {
        int i0, i1, s, j0, j1;
        weft::pool_path path;
    };
    for (shape sh : {shape{2, 29, 1, 5, 6, weft::pool_path::dense_1d}, shape{1, 30, 4, 0, 30, weft::pool_path::dense_2d},
                     shape{3, 4, 1, 2, 9, weft::pool_path::dense_1d}, shape{7, 7, 1, 0, 5, weft::pool_path::dense_1d}}) {
        weft::pool_path a, b;
        EXPECT_EQ(run_with(true, sh.i0, sh.i1, sh.s, sh.j0, sh.j1, &a),
                  run_with(false, sh.i0, sh.i1, sh.s, sh.j0, sh.j1, &b));
        EXPECT_EQ(a, b);
        if (sh.i1 > sh.i0) {
            EXPECT_EQ(a, sh.path) << sh.i0 << ".." << sh.i1 << " step " << sh.s;
        }
    }
    weft_fil_poolset_t ps;
    ASSERT_EQ(weft_fil_poolset_create(&ps, [](int, int, void*) {}, nullptr, nullptr), 0);
    weft_fil_pool_t p;
    ASSERT_EQ(weft_fil_pool_create(ps, 0, 0, &p), 0);
    EXPECT_EQ(weft_fil_create_range(nullptr, 0, 1, 1, 0, 1), EINVAL);
    EXPECT_EQ(weft_fil_create_range(p, 0, 4, 0, 0, 1), EINVAL);   // stride < 1
    EXPECT_EQ(weft_fil_pool_size(p), 0u);
    EXPECT_EQ(weft_fil_create_range(p, 5, 4, 1, 0, 1), 0);  // empty ranges add nothing
    EXPECT_EQ(weft_fil_create_range(p, 0, 4, 1, 3, 2), 0);
    EXPECT_EQ(weft_fil_create_range(p, 0, 4, 1, 0, 0), 0);
    EXPECT_EQ(weft_fil_pool_size(p), 0u);
    EXPECT_EQ(weft_fil_create_range(p, 0, 4, 1, 0, 2), 0);
    EXPECT_EQ(weft_fil_pool_size(p), 8u);
    EXPECT_EQ(weft_fil_create_range(p, -3, 3, 2, 5, 6), 0);  // rows -3, -1, 1
    EXPECT_EQ(weft_fil_pool_size(p), 11u);
    EXPECT_EQ(weft_fil_pool_clear(p), 0);
    EXPECT_EQ(weft_fil_pool_size(p), 0u);
    EXPECT_EQ(weft_fil_pool_clear(nullptr), EINVAL);
    EXPECT_EQ(weft_fil_poolset_destroy(ps), 0);
}

TEST_P(FilIterative, created_counted_at_the_next_sweep_or_when_destroyed) {
    // A filament counts as created when its pool is next swept (pool.hpp,
    // `uncounted`): the adds before the run, the ones the after function makes
    // between sweeps, and those of a set destroyed without ever running.
    int sweep = 0;
    std::vector<weft::pool> pools;
    {
        weft::pool_set ps([](int, int) {},
                          [&] {
                              if (++sweep == 2) return weft::next::done;
                              pools[0].add(100, 0);
                              pools[0].add_range(101, 105);  // 4 more
                              return weft::next::continue_;
                          });
        pools = ps.add_pools();
        for (int i = 0; i < 10; ++i) pools[static_cast<std::size_t>(i) % pools.size()].add(i, 0);
        pools[0].add_range(20, 23, 1, 0, 2);  // 6 more
        EXPECT_EQ(weft::filament_stats().filaments_created, 0u) << "counted before any sweep";
        weft::run(ps);
        ASSERT_EQ(sweep, 2);
        weft_fil_stats_t s = weft::filament_stats();
        EXPECT_EQ(s.filaments_created, 16u + 5u);
        EXPECT_EQ(s.filaments_run, 16u + (16u + 5u));
        pools.clear();
    }
    EXPECT_EQ(weft::filament_stats().filaments_created, 21u) << "a swept set adds nothing when destroyed";
    {
        weft::pool_set never([](int, int) {});
        weft::pool p = never.add_pool(0);
        for (int i = 0; i < 7; ++i) p.add(i, i);
    }
    EXPECT_EQ(weft::filament_stats().filaments_created, 21u + 7u) << "a set destroyed unswept";
}

TEST_P(FilIterative, after_function_shrinks_the_pools) {
    // Each sweep drops the lowest remaining index: the after function clears
    // every pool and adds back the rows above the step, cyclically placed (the
    // LU pattern). Sweep k must run exactly the indices k..n-1.
    const int n = 24;
    int step = 0;
    std::vector<std::vector<int>> ran(n);
    std::mutex m;
    std::vector<weft::pool> pools;
    weft::pool_set ps(
        [&](int i, int) {
            std::lock_guard<std::mutex> g(m);
            ran[static_cast<std::size_t>(step)].push_back(i);
        },
        [&] {
            ++step;
            if (step == n) return weft::next::done;
            const int p = static_cast<int>(pools.size());
            for (int w = 0; w < p; ++w) {
                pools[static_cast<std::size_t>(w)].clear();
                int first = step + ((w - step % p) % p + p) % p;  // the first row >= step on worker w
                pools[static_cast<std::size_t>(w)].add_range(first, n, p);
            }
            return weft::next::continue_;
        });
    pools = ps.add_pools();
    for (int w = 0; w < static_cast<int>(pools.size()); ++w) pools[static_cast<std::size_t>(w)].add_range(w, n, static_cast<int>(pools.size()));
    weft::run(ps);
    ASSERT_EQ(step, n);
    for (int k = 0; k < n; ++k) {
        std::vector<int> got = ran[static_cast<std::size_t>(k)];
        std::sort(got.begin(), got.end());
        std::vector<int> want;
        for (int i = k; i < n; ++i) want.push_back(i);
        EXPECT_EQ(got, want) << "sweep " << k;
    }
    EXPECT_EQ(weft::filament_stats().pools_general, 0u);  // every shrunk pool stayed a dense range
}

TEST_P(FilIterative, back_and_forth_order) {
    std::vector<int> order;
    int sweeps = 0;
    weft::pool_set ps([&](int i, int) { order.push_back(i); },
                      [&] { return ++sweeps == 3 ? weft::next::done : weft::next::continue_; });
    weft::pool p = ps.add_pool(0);
    for (int i = 0; i < 5; ++i) p.add(i);      // dense
    weft::pool q = ps.add_pool(0);
    for (int i : {9, 7, 8}) q.add(i);          // general
    weft::run(ps);
    // One worker owns both pools and runs them in pool order, each forwards,
    // then backwards, then forwards again.
    std::vector<int> want = {0, 1, 2, 3, 4, 9, 7, 8, 4, 3, 2, 1, 0, 8, 7, 9, 0, 1, 2, 3, 4, 9, 7, 8};
    EXPECT_EQ(order, want);
}

TEST_P(FilIterative, sequence_of_pool_sets) {
    // LU-like: two phases per iteration, a counter ends it.
    const int n = 64;
    std::vector<long> x(n, 1);
    long phase1 = 0;
    int iter = 0;
    weft::reduction<long> sum(0);
    weft::pool_set scale([&](int i, int) { x[i] *= 2; });
    weft::pool_set add([&](int i, int) { sum.local() += x[i]; },
                       [&] {
                           phase1 += sum.reduce();
                           sum.reset();
                           return ++iter == 4 ? weft::next::done : weft::next::continue_;
                       });
    auto sp = scale.add_pools();
    auto ap = add.add_pools();
    for (int i = 0; i < n; ++i) {
        sp[static_cast<std::size_t>(i % workers())].add(i);  // cyclic placement
        ap[static_cast<std::size_t>(i % workers())].add(i);
    }
    weft::run(scale, add);
    EXPECT_EQ(iter, 4);
    EXPECT_EQ(phase1, n * (2 + 4 + 8 + 16));
}

TEST_P(FilIterative, reductions_every_operator) {
    const int n = 1000;
    weft::reduction<long> s(0);
    weft::reduction<long, std::multiplies<>> prod(1);
    weft::reduction<long, weft::minimum<>> mn(1L << 40);
    weft::reduction<long, weft::maximum<>> mx(-(1L << 40));
    weft::reduction<bool, std::logical_and<>> all(true);
    weft::reduction<bool, std::logical_or<>> any(false);
    weft::parallel_for(0, n, [&](int i) {
        s.local() += i;
        prod.local() *= (i % 100 == 0) ? 2 : 1;
        mn.local() = std::min(mn.local(), long(i) - 7);
        mx.local() = std::max(mx.local(), long(i) * 3);
        all.local() = all.local() && (i >= 0);
        any.local() = any.local() || (i == 777);
    });
    EXPECT_EQ(s.reduce(), long(n) * (n - 1) / 2);
    EXPECT_EQ(prod.reduce(), 1024);
    EXPECT_EQ(mn.reduce(), -7);
    EXPECT_EQ(mx.reduce(), 3L * (n - 1));
    EXPECT_TRUE(all.reduce());
    EXPECT_TRUE(any.reduce());
    // A user operator (not commutative-looking, but associative): string of maxima.
    struct pairmax {
        std::pair<int, int> operator()(std::pair<int, int> a, std::pair<int, int> b) const {
            return {std::max(a.first, b.first), std::max(a.second, b.second)};
        }
    };
    weft::reduction<std::pair<int, int>, pairmax> pm({0, 0});
    weft::parallel_for(0, n, [&](int i) { pm.local() = pairmax{}(pm.local(), {i % 17, i % 29}); });
    EXPECT_EQ(pm.reduce(), std::make_pair(16, 28));
    // parallel_reduce
    double d = weft::parallel_reduce(weft::range<long>{0, 100000}, 0.0, [](long i, double& acc) { acc += 0.5 * i; },
                                     std::plus<>{});
    EXPECT_DOUBLE_EQ(d, 0.5 * 100000.0 * 99999.0 / 2);
}

// weft::with_local: the body gets the worker's copy of a reduction, held in a
// local while a pool runs and written back at its end. On every path (dense
// 2-D, dense 1-D, general) the sums and maxima are those of the filaments, and
// copies carry over from one sweep to the next as through local().
TEST_P(FilIterative, with_local_reduces_on_every_path_and_across_sweeps) {
    const int n = 30;
    weft::reduction<long> sum(0);
    weft::reduction<long, weft::maximum<>> mx(-1);
    int sweeps = 0;
    weft::pool_set ps(
        weft::with_local(sum, [&](int i, int j, long& acc) { acc += i * 100 + j; }),
        [&] { return ++sweeps < 3 ? weft::next::continue_ : weft::next::done; });
    weft::pool_set pm(weft::with_local(mx, [&](int i, int j, long& m) { m = std::max(m, long(i) * 1000 + j); }));
    std::vector<weft::pool> dense = ps.add_pools();  // one per worker: rows split
    for (int w = 0; w < static_cast<int>(dense.size()); ++w)
        for (int i = w; i < n; i += static_cast<int>(dense.size()))
            for (int j = 0; j < n; ++j) dense[static_cast<std::size_t>(w)].add(i, j);
    weft::pool column = ps.add_pool(0);
    for (int i = 0; i < n; ++i) column.add(i, n + 5);  // dense 1-D
    weft::pool shuffled = ps.add_pool(workers() - 1);
    for (int i = n - 1; i >= 0; i -= 2) shuffled.add(i, n + 9);  // general
    weft::pool p_max = pm.add_pool(workers() - 1);
    for (int i = n - 1; i >= 0; --i) p_max.add(i, 3);
    weft::run(ps);
    weft::run(pm);
    long expect = 0;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) expect += i * 100 + j;
        expect += i * 100 + n + 5;
        if ((n - 1 - i) % 2 == 0) expect += i * 100 + n + 9;
    }
    EXPECT_EQ(sum.reduce(), 3 * expect);  // three sweeps, never reset
    EXPECT_EQ(mx.reduce(), long(n - 1) * 1000 + 3);
    EXPECT_EQ(dense[0].path(), weft::pool_path::dense_2d);
    EXPECT_EQ(column.path(), weft::pool_path::dense_1d);
    EXPECT_EQ(shuffled.path(), weft::pool_path::general);
}

TEST_P(FilIterative, parallel_for_2d_equals_serial) {
    const int r = 37, c = 53;
    std::vector<int> m(r * c, 0);
    weft::parallel_for(weft::range2d<int>{0, r, 0, c}, [&](int i, int j) { m[i * c + j] = i * c + j; });
    for (int k = 0; k < r * c; ++k) ASSERT_EQ(m[k], k);
    std::vector<int> w(3 * 5000, 0);  // few rows: columns are cut
    weft::parallel_for(weft::range2d<int>{0, 3, 0, 5000}, [&](int i, int j) { w[i * 5000 + j] += 1; });
    for (int v : w) ASSERT_EQ(v, 1);
}

TEST_P(FilIterative, exception_cancels_region) {
    int sweeps = 0;
    weft::pool_set ps(
        [&](int i, int) {
            if (i == 13 && sweeps == 2) throw std::runtime_error("thirteen");
        },
        [&] {
            ++sweeps;
            return sweeps >= 12 ? weft::next::done : weft::next::continue_;
        });
    auto pools = ps.add_pools();
    for (int i = 0; i < 100; ++i) pools[static_cast<std::size_t>(i % workers())].add(i);
    EXPECT_THROW(weft::run(ps), std::runtime_error);
    EXPECT_EQ(sweeps, 2);  // the after function did not run for the failed sweep
    EXPECT_THROW(weft::parallel_for(0, 1000, [](int i) {
                     if (i == 500) throw std::logic_error("x");
                 }),
                 std::logic_error);
    // The set can run again.
    sweeps = 10;
    EXPECT_NO_THROW(weft::run(ps));
    EXPECT_EQ(sweeps, 12);
}

INSTANTIATE_TEST_SUITE_P(workers, FilIterative, ::testing::Values(1, 2, 4),
                         wt::worker_count_name{});

}  // namespace
