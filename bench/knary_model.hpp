// The knary program's shape and Arora, Blumofe & Plaxton's performance model,
// as plain arithmetic (no runtime): what `weft-bench knary` and `weft-bench
// cycler` compute from their measurements, and what tests/model/knary_model_test.cpp checks.
//
// knary(n, k, r) (Blumofe et al.'s synthetic program) is a tree of depth n in
// which every node runs a fixed busy loop and then has k children, the first
// r of them run one after the other (spawn, join, next) and the other k - r
// in parallel (all spawned, then all joined); the nodes of the last level have
// no children. Counting a node as one unit of work:
//   nodes (the work):   1 + k + k^2 + ... + k^(n-1)
//   span (the longest chain of nodes): 1 + m + m^2 + ... + m^(n-1), where m,
//     the children of a node that lie one after the other on the longest
//     path, is r + 1 when r < k (the r serial children, then one of the
//     parallel ones) and k when r = k.
// So r = 0 gives a span of n nodes (parallelism about k^n / n), r = k - 1 or
// k a span of every node (parallelism 1), and r in between anything between.
//
// The model: on P workers that got PA processors on average, the time is
//     T = c1 * T1 / PA + c2 * Tinf * P / PA.
// Dividing by T1 / PA, the utilization T1 / (PA * T) is 1 / (c1 + c2 * x),
// where x = P / (T1 / Tinf) is the normalized number of processes: a single
// curve for every program and input, which is the paper's claim.
//
// The processor average PA: the paper states it from what the machine had to
// give, not from what the run took. Alone, PA = min(CPUs, P) (Figures 24 and
// 25); beside the cycler, PA = min(CPUs - PA(cycler), P) (Figures 27 and 28),
// PA(cycler) read from the cycler's counter over the run's interval. A PA
// taken from the run itself (its CPU time / T) makes the model's T1/PA term
// c1 * T1 * T / CPU: T cancels, and the fit only says how the CPU time
// compares with T1 (docs/bench.md, "How the model is judged").
//
// A fit is judged on a data set it was not fitted to (judge): c1 and c2 come
// from one sweep, the errors from a sweep run after it.
//
// fit_model finds c1, c2 >= 0 by least squares on the relative error: it
// minimises sum_i ((model_i - T_i) / T_i)^2. Dividing each term by T_i makes
// it linear in (c1, c2): with a_i = T1_i / (PA_i T_i) and b_i = Tinf_i P_i /
// (PA_i T_i), the residual is c1 a_i + c2 b_i - 1, and the normal equations
// are a 2x2 system. Relative error rather than absolute, because the sweep's
// times span two orders of magnitude and the target is stated as a relative
// error: absolute least squares would fit the slowest runs and ignore the
// fast ones. If the unconstrained solution has a negative coefficient, the
// best fit with that coefficient at 0 is taken (the constrained optimum of a
// convex quadratic lies on the boundary then).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace weft::bench::knary {

// A knary input. n >= 1 levels, k >= 1 children, 0 <= r <= k.
struct shape {
    int n = 1;
    int k = 1;
    int r = 0;
};

// The widest node the program handles: the parallel children's handles live
// in an array of this size on the node's stack.
inline constexpr int max_children = 64;
// The most nodes an input may have (a bound that keeps a run under minutes).
inline constexpr double max_nodes = 1e9;

// sum_{i < n} base^i, as a double (exact below 2^53, and max_nodes keeps
// node counts far below).
inline double geometric_sum(int base, int n) {
    double sum = 0, term = 1;
    for (int i = 0; i < n; ++i) {
        sum += term;
        term *= base;
    }
    return sum;
}

// Nodes of the tree: its work in nodes.
inline double node_count(shape s) { return geometric_sum(s.k, s.n); }

// Nodes on the longest chain of dependent nodes: its span in nodes.
inline double span_nodes(shape s) { return geometric_sum(s.r < s.k ? s.r + 1 : s.k, s.n); }

// The parallelism of the dag in nodes: work / span.
inline double parallelism(shape s) { return node_count(s) / span_nodes(s); }

// "" if s is a valid input, else what is wrong with it and what is valid.
inline std::string check_shape(shape s) {
    if (s.n < 1) return "n = " + std::to_string(s.n) + ": the depth must be at least 1";
    if (s.k < 1 || s.k > max_children)
        return "k = " + std::to_string(s.k) + ": the children per node must be in [1, " +
               std::to_string(max_children) + "]";
    if (s.r < 0 || s.r > s.k)
        return "r = " + std::to_string(s.r) + ": the serial children must be in [0, k] = [0, " + std::to_string(s.k) +
               "]";
    if (node_count(s) > max_nodes)
        return "the tree has " + std::to_string(node_count(s)) + " nodes; at most 1e9 are allowed (lower n or k)";
    return {};
}

// One measured run: the program's work and span, the workers, the processor
// average the run got, and its wall time (all times in seconds).
struct point {
    double t1 = 0;
    double tinf = 0;
    double workers = 0;
    double pa = 0;
    double wall = 0;
};

// The paper's processor average: min(CPUs - PA(other), P), where PA(other) is
// the processor average of the competing load over the run (0 alone). At
// least 0: a load that took every CPU left the run none, and a point with PA
// = 0 is skipped by fit_model and judge.
inline double paper_pa(double cpus, double workers, double pa_other = 0) {
    return std::max(0.0, std::min(cpus - pa_other, workers));
}

// How well (c1, c2) predict a set of runs.
struct judgement {
    double max_rel_error = 0;     // max_i |model_i - T_i| / T_i
    double median_rel_error = 0;  // the median of |model_i - T_i| / T_i
    double rms_rel_error = 0;     // sqrt(mean_i ((model_i - T_i) / T_i)^2)
    std::size_t points = 0;       // points used (usable ones)
    std::size_t worst = 0;        // index, in the points given, of the run with the largest |error|
};

struct fit_result : judgement {
    double c1 = 0;
    double c2 = 0;
};

// The model's time for one run.
inline double model_time(double c1, double c2, point const& p) {
    return c1 * p.t1 / p.pa + c2 * p.tinf * p.workers / p.pa;
}

// The model's utilization T1 / (PA T) at normalized processes x.
inline double model_utilization(double c1, double c2, double x) { return 1.0 / (c1 + c2 * x); }

// A point the fit and the judging use: a time, processors, and some work.
inline bool usable(point const& p) { return p.t1 >= 0 && p.t1 + p.tinf > 0 && p.pa > 0 && p.wall > 0; }

// weft's form of the model, for a runtime whose idle workers park instead of
// spinning (docs/bench.md, "weft's model"): Brent's T = c1 (T1 - Tinf)/PA +
// c2 Tinf, whose idle term does not grow with P. It is the paper's form on a
// changed point (T1 - Tinf for T1, PA for P), so fit_model and judge serve
// both. T1 below Tinf (a span timed on the wall clock while the run waited
// for a CPU) counts as no parallel work.
inline point brent_point(point p) { return {std::max(0.0, p.t1 - p.tinf), p.tinf, p.pa, p.pa, p.wall}; }

// The errors of the model with (c1, c2) on `points` (usable ones only; with
// none, all zeros). The median of an even count is the mean of the middle two.
inline judgement judge(double c1, double c2, std::vector<point> const& points) {
    judgement j;
    std::vector<double> errs;
    double sq = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
        point const& p = points[i];
        if (!usable(p)) continue;
        double const e = std::fabs(model_time(c1, c2, p) - p.wall) / p.wall;
        if (errs.empty() || e > j.max_rel_error) {
            j.max_rel_error = e;
            j.worst = i;
        }
        errs.push_back(e);
        sq += e * e;
    }
    j.points = errs.size();
    if (errs.empty()) return j;
    std::sort(errs.begin(), errs.end());
    std::size_t const mid = errs.size() / 2;
    j.median_rel_error = errs.size() % 2 == 1 ? errs[mid] : (errs[mid - 1] + errs[mid]) / 2;
    j.rms_rel_error = std::sqrt(sq / double(errs.size()));
    return j;
}

// Least squares on relative error with c1, c2 >= 0 (see the top of this file).
// Points that are not usable are skipped; with none left the
// result is all zeros.
inline fit_result fit_model(std::vector<point> const& points) {
    double saa = 0, sab = 0, sbb = 0, sa = 0, sb = 0;
    std::size_t n = 0;
    for (point const& p : points) {
        if (!usable(p)) continue;
        double const a = p.t1 / (p.pa * p.wall);
        double const b = p.tinf * p.workers / (p.pa * p.wall);
        saa += a * a;
        sab += a * b;
        sbb += b * b;
        sa += a;
        sb += b;
        ++n;
    }
    fit_result res;
    if (n == 0) return res;
    // Sum of squared residuals of (c1, c2), for choosing between boundary fits.
    auto residual = [&](double c1, double c2) {
        return c1 * c1 * saa + 2 * c1 * c2 * sab + c2 * c2 * sbb - 2 * c1 * sa - 2 * c2 * sb + double(n);
    };
    double c1 = -1, c2 = -1;
    double const det = saa * sbb - sab * sab;
    if (det > 1e-12 * saa * sbb) {
        c1 = (sa * sbb - sb * sab) / det;
        c2 = (sb * saa - sa * sab) / det;
    }
    if (!(c1 >= 0 && c2 >= 0)) {
        double const only_c1 = saa > 0 ? sa / saa : 0;  // c2 = 0
        double const only_c2 = sbb > 0 ? sb / sbb : 0;  // c1 = 0
        if (residual(only_c1, 0) <= residual(0, only_c2)) {
            c1 = only_c1;
            c2 = 0;
        } else {
            c1 = 0;
            c2 = only_c2;
        }
    }
    static_cast<judgement&>(res) = judge(c1, c2, points);
    res.c1 = c1;
    res.c2 = c2;
    return res;
}

}  // namespace weft::bench::knary
