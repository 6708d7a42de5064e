// LU decomposition with weft threads (apps/lu/lu.hpp, fork_join): each step's
// pivot on the caller, then its rows eliminated by divide_and_conquer.
#include <algorithm>

#include "apps/fork_join.hpp"
#include "apps/lu/lu.hpp"

namespace weft::apps::lu {

void fork_join(matrix& m) {
    const int n = m.n;
    double* a = m.a.data();
    for (int k = 0; k + 1 < n; ++k) {
        pivot_serially(m, k);
        // A piece of about fork_join_grain multiply-adds: a row has n - k - 1.
        const int grain = std::max(1, fork_join_grain / std::max(1, n - k - 1));
        divide_and_conquer(k + 1, n, grain, [&](int i0, int i1) {
            for (int i = i0; i < i1; ++i) eliminate_row(a, n, i, k);
        });
    }
}

}  // namespace weft::apps::lu
