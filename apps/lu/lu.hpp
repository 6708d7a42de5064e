// LU decomposition with partial pivoting (Lowenthal et al. §4.4): P*A = L*U for an
// n x n matrix of doubles, in place (U on and above the diagonal, the
// multipliers of L below it; perm[k] is the row swapped into row k at step k).
//
// Step k = 0 .. n-2 has the paper's two phases:
//   pivot        the row p >= k with the largest |A[p][k]| (ties: the smaller
//                row); then rows k and p are swapped (whole rows, as LAPACK's
//                getrf does);
//   elimination  every row i > k: l = A[i][k] / A[k][k], A[i][k] = l,
//                A[i][j] -= l * A[k][j] for j > k.
// The work shrinks by a row and a column each step ((n-k-1)^2 updates).
// Every version runs pivot_candidate_of / eliminate_row below on each row, and
// the pivot choice does not depend on the order rows are examined in, so all
// versions equal serial exactly.
//
//   serial     the two phases in plain loops;
//   coarse     one std::thread per worker, rows assigned cyclically (row i to
//              thread i mod P, so the shrinking work stays balanced, §4.4),
//              a sweep_barrier after each phase; the barrier's completion step
//              (one thread, the others waiting) combines the per-thread pivot
//              candidates and swaps, or advances k;
//   filaments  a sequence of two pool sets (§2.1, §4.4: "two pool sets, one to
//              perform the pivot and one the elimination"), the same cyclic
//              pools for both: one filament per row. The pivot set's filaments
//              fold their row into a max-location reduction variable; its after
//              function reduces it and swaps; the elimination set's after
//              function advances k and ends the region after step n-2.
// Grain: one filament per row, not per point. A point update is one multiply
// and subtract, and it needs its row's multiplier first (a third phase, or a
// division per point); a row is O(n - k) work, enough to amortise the filament
// (as the inner product in §4.1), and a pool of cyclic rows is recognised as
// a strided 1-D loop (§3.1). Rows already eliminated (i <= k) stay in the pools
// (pools cannot shrink) and return at once: n^2/2 empty filaments in all,
// against n^3/3 multiply-adds.
#pragma once

#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace weft::apps::lu {

struct matrix {
    explicit matrix(int n);
    int n;
    std::vector<double> a;  // row-major, factored in place
    std::vector<int> perm;  // perm[k]: the row swapped with row k at step k
    double* row(int i) { return a.data() + static_cast<std::size_t>(i) * n; }
};

// A pivot candidate: |A[row][k]| and its row. row < 0 is "none" (the identity
// of the reduction).
struct pivot_candidate {
    double magnitude = -1.0;
    int row = -1;
};

// The better of two candidates: the larger magnitude, ties to the smaller row.
// Associative and commutative, so the order of combination does not matter.
struct better_pivot {
    pivot_candidate operator()(const pivot_candidate& x, const pivot_candidate& y) const {
        if (x.magnitude != y.magnitude) return x.magnitude > y.magnitude ? x : y;
        return (x.row >= 0 && (y.row < 0 || x.row < y.row)) ? x : y;
    }
};

inline pivot_candidate pivot_candidate_of(const double* a, int n, int i, int k) {
    return {std::fabs(a[static_cast<std::size_t>(i) * n + k]), i};
}

// Swaps rows k and p and records the choice (the sequential part of a step).
inline void apply_pivot(matrix& m, int k, int p) {
    m.perm[static_cast<std::size_t>(k)] = p;
    if (p == k) return;
    double* rk = m.row(k);
    double* rp = m.row(p);
    for (int j = 0; j < m.n; ++j) std::swap(rk[j], rp[j]);
}

// Step k's pivot chosen over rows k.. by one thread, then applied: the serial
// and fork/join versions' sequential part of a step.
inline void pivot_serially(matrix& m, int k) {
    pivot_candidate best;
    for (int i = k; i < m.n; ++i) best = better_pivot{}(best, pivot_candidate_of(m.a.data(), m.n, i, k));
    apply_pivot(m, k, best.row);
}

// The elimination of row i at step k (the work of one filament).
inline void eliminate_row(double* a, int n, int i, int k) {
    double* ri = a + static_cast<std::size_t>(i) * n;
    const double* rk = a + static_cast<std::size_t>(k) * n;
    const double l = ri[k] / rk[k];
    ri[k] = l;
    for (int j = k + 1; j < n; ++j) ri[j] -= l * rk[j];
}

// The input of size n every version factors: deterministic values in
// [-1, 1) (a 64-bit LCG), row-major n x n.
std::vector<double> input_values(int n);

void serial(matrix& m);
void coarse(matrix& m, int workers);
void filaments(matrix& m);

// Outside the Filaments suite (not a registered version): the elimination of
// each step as Cilk's divide-and-conquer over rows on weft threads (spawn and
// join, apps/fork_join.hpp), the pivot on the calling thread. Its dag is what
// weft's work/span profiler measures; weft-bench knary runs it as the paper's
// lu (Arora, Blumofe & Plaxton, Figures 25 and 28). Equals serial exactly.
// Call it on a weft thread of a running runtime.
void fork_join(matrix& m);
// The multiply-adds of one piece of fork_join's elimination: about 4 us here,
// 50 times a spawn and join.
inline constexpr int fork_join_grain = 4096;

}  // namespace weft::apps::lu
