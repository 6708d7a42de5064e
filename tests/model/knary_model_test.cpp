// The arithmetic behind weft-bench knary and cycler (bench/knary_model.hpp):
// the knary tree's node count and span against a direct walk of its dag, the
// input checks, the model fit, which must recover known c1 and c2 from
// synthetic runs, the paper's processor average, and judging a fit on runs it
// was not fitted to, which must be able to fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "../../bench/knary_model.hpp"

namespace {

using weft::bench::knary::check_shape;
using weft::bench::knary::fit_model;
using weft::bench::knary::judge;
using weft::bench::knary::paper_pa;
using weft::bench::knary::model_time;
using weft::bench::knary::node_count;
using weft::bench::knary::parallelism;
using weft::bench::knary::point;
using weft::bench::knary::shape;
using weft::bench::knary::span_nodes;

// The dag of knary(n, k, r) walked node by node, each node one unit of time
// with unboundedly many processors: a node starts at `start`, its serial
// children one after the other when it ends, its parallel children all
// together after the last serial one. Counts the nodes and returns when the
// subtree's last node ends.
double walk(shape s, int levels, double start, double& nodes) {
    nodes += 1;
    double const own_end = start + 1;
    if (levels == 1) return own_end;
    double t = own_end;
    for (int i = 0; i < s.r; ++i) t = walk(s, levels - 1, t, nodes);
    double end = t;
    for (int i = s.r; i < s.k; ++i) end = std::max(end, walk(s, levels - 1, t, nodes));
    return end;
}

TEST(KnaryModel, node_count_and_span_match_a_walk_of_the_dag) {
    for (int n = 1; n <= 5; ++n)
        for (int k = 1; k <= 6; ++k)
            for (int r = 0; r <= k; ++r) {
                shape const s{n, k, r};
                double nodes = 0;
                double const span = walk(s, n, 0, nodes);
                EXPECT_EQ(node_count(s), nodes) << n << ":" << k << ":" << r;
                EXPECT_EQ(span_nodes(s), span) << n << ":" << k << ":" << r;
            }
}

TEST(KnaryModel, default_sweep_spans_parallelism_1_to_10000) {
    // weft-bench knary's default inputs 6:9:0 .. 6:9:8: one tree size, a span
    // for each r.
    for (int r = 0; r <= 9; ++r) EXPECT_EQ(node_count({6, 9, r}), 66430);
    EXPECT_EQ(span_nodes({6, 9, 0}), 6);
    EXPECT_EQ(span_nodes({6, 9, 1}), 63);  // 1 + 2 + 4 + ... + 32
    EXPECT_EQ(span_nodes({6, 9, 8}), 66430);
    EXPECT_EQ(span_nodes({6, 9, 9}), 66430);
    EXPECT_NEAR(parallelism({6, 9, 0}), 11071.7, 0.1);
    EXPECT_EQ(parallelism({6, 9, 8}), 1.0);
    for (int r = 1; r <= 8; ++r) EXPECT_LT(parallelism({6, 9, r}), parallelism({6, 9, r - 1}));
}

TEST(KnaryModel, check_shape_names_what_is_wrong) {
    EXPECT_EQ(check_shape({6, 9, 0}), "");
    EXPECT_EQ(check_shape({1, 1, 1}), "");
    EXPECT_NE(check_shape({0, 9, 0}).find("depth must be at least 1"), std::string::npos);
    EXPECT_NE(check_shape({6, 0, 0}).find("children per node must be in [1, 64]"), std::string::npos);
    EXPECT_NE(check_shape({6, 65, 0}).find("children per node must be in [1, 64]"), std::string::npos);
    EXPECT_NE(check_shape({6, 9, 10}).find("serial children must be in [0, k] = [0, 9]"), std::string::npos);
    EXPECT_NE(check_shape({6, 9, -1}).find("serial children"), std::string::npos);
    EXPECT_NE(check_shape({40, 2, 0}).find("at most 1e9"), std::string::npos);
}

// Runs of a sweep like the experiment's: inputs of parallelism 1..10^4 on
// P = 1..16, with PA = min(P, 2) minus a little, and times from the model
// with (c1, c2), each multiplied by (1 + noise) with noise uniform in
// [-amplitude, amplitude].
std::vector<point> synthetic(double c1, double c2, double amplitude, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> noise(-amplitude, amplitude);
    std::vector<point> pts;
    for (double par : {1.0, 3.0, 10.0, 100.0, 1000.0, 10000.0})
        for (int p = 1; p <= 16; ++p) {
            point pt{0.08, 0.08 / par, double(p), std::min(double(p), 2.0) * 0.97, 0};
            pt.wall = model_time(c1, c2, pt) * (1 + noise(rng));
            pts.push_back(pt);
        }
    return pts;
}

TEST(KnaryModel, fit_recovers_c1_and_c2_from_exact_runs) {
    auto const fit = fit_model(synthetic(1.1, 0.35, 0, 1));
    EXPECT_EQ(fit.points, 96u);
    EXPECT_NEAR(fit.c1, 1.1, 1e-9);
    EXPECT_NEAR(fit.c2, 0.35, 1e-9);
    EXPECT_LT(fit.max_rel_error, 1e-9);
}

TEST(KnaryModel, fit_recovers_c1_and_c2_through_noise) {
    for (unsigned seed = 1; seed <= 5; ++seed) {
        auto const fit = fit_model(synthetic(0.95, 1.5, 0.05, seed));
        EXPECT_NEAR(fit.c1, 0.95, 0.03) << "seed " << seed;
        EXPECT_NEAR(fit.c2, 1.5, 0.08) << "seed " << seed;
        // Each run is within 5% of the true model; the fitted one may be a
        // little further from some, never far.
        EXPECT_LT(fit.max_rel_error, 0.1) << "seed " << seed;
        EXPECT_GT(fit.max_rel_error, 0.02) << "seed " << seed;
    }
}

TEST(KnaryModel, fit_keeps_coefficients_non_negative) {
    // Times that fall as P grows at fixed PA: the unconstrained fit would give
    // c2 < 0, which means nothing in the model; the constrained one has c2 = 0.
    std::vector<point> pts;
    for (int p = 1; p <= 8; ++p) pts.push_back({1.0, 0.5, double(p), 1.0, 1.0 - 0.02 * p});
    auto const fit = fit_model(pts);
    EXPECT_EQ(fit.c2, 0);
    EXPECT_GT(fit.c1, 0.8);
    EXPECT_LT(fit.c1, 1.0);
}

TEST(KnaryModel, fit_skips_runs_without_a_time_or_processors) {
    auto pts = synthetic(1.0, 0.5, 0, 1);
    pts.push_back({0.08, 0.01, 4, 0, 0.1});    // no processors
    pts.push_back({0.08, 0.01, 4, 2, 0});      // no time
    pts.push_back({0.08, 0.01, 4, 2, NAN});    // not a number
    auto const fit = fit_model(pts);
    EXPECT_EQ(fit.points, 96u);
    EXPECT_NEAR(fit.c1, 1.0, 1e-9);
    EXPECT_NEAR(fit.c2, 0.5, 1e-9);
    EXPECT_EQ(fit_model({}).points, 0u);
}

TEST(KnaryModel, fit_names_the_run_with_the_worst_error) {
    auto pts = synthetic(1.0, 0.5, 0, 1);
    pts.insert(pts.begin(), point{0.08, 0.01, 4, 0, 0.1});  // skipped: no processors
    pts[40].wall *= 1.6;                                    // one run far slower than the model
    auto const fit = fit_model(pts);
    EXPECT_EQ(fit.worst, 40u);
    EXPECT_NEAR(fit.max_rel_error, std::fabs(model_time(fit.c1, fit.c2, pts[40]) - pts[40].wall) / pts[40].wall,
                1e-12);
}

TEST(KnaryModel, paper_pa_is_what_the_machine_left_capped_at_p) {
    // Alone (Figures 24, 25): min(CPUs, P).
    EXPECT_EQ(paper_pa(2, 1), 1);
    EXPECT_EQ(paper_pa(2, 2), 2);
    EXPECT_EQ(paper_pa(2, 16), 2);
    EXPECT_EQ(paper_pa(8, 5), 5);
    // Beside the cycler (Figures 27, 28): min(CPUs - PA(cycler), P).
    EXPECT_DOUBLE_EQ(paper_pa(2, 4, 0.75), 1.25);
    EXPECT_DOUBLE_EQ(paper_pa(2, 1, 0.75), 1);
    EXPECT_DOUBLE_EQ(paper_pa(8, 3, 6.5), 1.5);
    // A load that took every CPU (or, by noise, a little more) left none.
    EXPECT_EQ(paper_pa(2, 4, 2), 0);
    EXPECT_EQ(paper_pa(2, 4, 2.1), 0);
}

TEST(KnaryModel, judge_reports_worst_and_median_relative_error) {
    // Model with c1 = 1, c2 = 0: T = T1/PA = 1 s for each point below.
    std::vector<point> pts{{1, 0, 1, 1, 1.0}, {1, 0, 1, 1, 0.5}, {1, 0, 1, 1, 1.25}, {1, 0, 1, 1, 2.0},
                           {1, 0, 1, 0, 9.0}};  // the last has no processors: skipped
    auto const j = judge(1, 0, pts);
    EXPECT_EQ(j.points, 4u);
    // |1 - T| / T: 0, 1, 0.2, 0.5; median of four: (0.2 + 0.5) / 2.
    EXPECT_DOUBLE_EQ(j.max_rel_error, 1.0);
    EXPECT_EQ(j.worst, 1u);
    EXPECT_DOUBLE_EQ(j.median_rel_error, 0.35);
    EXPECT_EQ(judge(1, 0, {}).points, 0u);
}

TEST(KnaryModel, a_fit_judged_on_another_sweep_can_fail) {
    // Fitted on one sweep, the model is exact there; judged on a second sweep
    // of a runtime whose runs pay three times the span term, it misses by far
    // more than the 25% target (synthetic() uses PA = min(P, 2) * 0.97).
    auto const fitted_on = synthetic(1.0, 0.5, 0, 1);
    auto const fit = fit_model(fitted_on);
    EXPECT_LT(fit.max_rel_error, 1e-9);
    auto const held_out = synthetic(1.0, 1.5, 0, 2);
    auto const j = judge(fit.c1, fit.c2, held_out);
    EXPECT_EQ(j.points, 96u);
    EXPECT_GT(j.max_rel_error, 0.5);
    // Refitting on the held-out sweep would have hidden it.
    EXPECT_LT(fit_model(held_out).max_rel_error, 1e-9);
    // A second sweep of the same runtime, with 5% noise, passes.
    auto const again = judge(fit.c1, fit.c2, synthetic(1.0, 0.5, 0.05, 3));
    EXPECT_LT(again.max_rel_error, 0.06);
    EXPECT_GT(again.max_rel_error, 0.01);
}

TEST(KnaryModel, pa_from_the_runs_own_time_fits_any_time) {
    // With PA = CPU / T and a run whose CPU time is its work (T1), the model's
    // first term is c1 * T1 * T / CPU = c1 * T: any wall time fits exactly.
    // The paper's PA, fixed before the run, does not cancel T.
    std::vector<point> cpu_form, paper_form;
    double const t1 = 0.08, cpu = 0.08;
    for (double wall : {0.01, 0.04, 0.09, 0.5, 3.0}) {
        cpu_form.push_back({t1, 0, 2, cpu / wall, wall});
        paper_form.push_back({t1, 0, 2, paper_pa(2, 2), wall});
    }
    EXPECT_LT(fit_model(cpu_form).max_rel_error, 1e-9);
    EXPECT_GT(fit_model(paper_form).max_rel_error, 0.5);
}

TEST(KnaryModel, paper_form_cannot_fit_a_serial_input_that_keeps_its_time_on_more_workers) {
    // A serial input (Tinf = T1) that runs in T1 on 1, 2 and 16 workers on 2
    // CPUs, as knary(6, 9, 8) does under ws (docs/bench.md, "weft's model").
    // With the paper's PA (1, 2, 2), T = c1 T1/PA + c2 Tinf P/PA gives
    // (c1 + c2) T1, (c1/2 + c2) T1 and (c1/2 + 8 c2) T1: no c1, c2 >= 0 puts
    // all three within 25% of T1. Brent's form fits them exactly.
    double const t1 = 0.08;
    std::vector<point> serial;
    for (int p : {1, 2, 16}) serial.push_back({t1, t1, double(p), paper_pa(2, p), t1});
    double best = 1e9;
    for (int i = 0; i <= 300; ++i)
        for (int j = 0; j <= 300; ++j) best = std::min(best, judge(i * 0.01, j * 0.01, serial).max_rel_error);
    EXPECT_GT(best, 0.25);
    EXPECT_GT(fit_model(serial).max_rel_error, 0.25);

    std::vector<point> brent;
    for (point const& p : serial) brent.push_back(weft::bench::knary::brent_point(p));
    auto const fit = fit_model(brent);
    EXPECT_LT(fit.max_rel_error, 1e-9);
    EXPECT_NEAR(fit.c2, 1.0, 1e-9);
}

TEST(KnaryModel, brent_form_is_exact_for_serial_and_perfectly_parallel_work) {
    using weft::bench::knary::brent_point;
    // T = c1 (T1 - Tinf)/PA + c2 Tinf with c1 = c2 = 1: a serial input takes
    // T1 on any PA; one with no span T1/PA.
    EXPECT_DOUBLE_EQ(model_time(1, 1, brent_point({0.08, 0.08, 16, 2, 0})), 0.08);
    EXPECT_DOUBLE_EQ(model_time(1, 1, brent_point({0.08, 0, 16, 2, 0})), 0.04);
    EXPECT_DOUBLE_EQ(model_time(1, 1, brent_point({0.08, 0.02, 4, 2, 0})), 0.05);
    // A span measured above the work (a wall-clock span on a busy machine):
    // no parallel work, the span alone.
    EXPECT_DOUBLE_EQ(model_time(1, 1, brent_point({0.08, 0.1, 4, 2, 0})), 0.1);
}

}  // namespace
