// Matrix multiplication by inner products (Lowenthal et al. §2.1, §4.1): C = A * B for
// n x n doubles, C[i][j] = sum over k of A[i][k] * B[k][j], one inner product
// per element. (Not apps/matmul/matmul.hpp, which is Narlikar &
// Blelloch's divide-and-conquer multiply used by `weft-bench matmul`; this is the
// application `weft-bench filaments --app matmul` runs.)
//
// Every version computes each element with inner_product() below, the same
// sequential sum in the same order, so all versions equal serial exactly.
//   serial     the triple loop: for i, for j, C[i][j] = inner_product(i, j);
//   coarse     one std::thread per worker, each the inner products of a
//              contiguous block of rows (§4.1: "a contiguous block of the result
//              matrix in nested for loops");
//   filaments  one iterative filament per inner product (n^2 of them), in one
//              pool set without an after function (run once); one pool per
//              worker holding the filaments of a contiguous block of rows (§2.1
//              whichPool: "strips of filaments to the same pool"). The pools are
//              dense 2-D blocks, so the runtime runs them as nested loops with
//              the body inlined (§3.1). Creating the filaments is timed, as in
//              the paper ("the times ... include the creation time").
// Difference from the paper: B is stored transposed (Bt[j][k] = B[k][j]) so
// that an inner product reads two contiguous rows; the arithmetic is unchanged.
#pragma once

#include <cstddef>
#include <vector>

namespace weft::apps::matmul_ip {

struct operands {
    explicit operands(int n);
    int n;
    std::vector<double> a;   // A, row-major
    std::vector<double> bt;  // B transposed, row-major: bt[j * n + k] = B[k][j]
    std::vector<double> c;   // C, row-major: the output
};

// Row i of A times column j of B: the work of one filament. The sum is a
// sequential chain (no reassociation), identical in every version.
inline double inner_product(const double* ai, const double* btj, int n) {
    double sum = 0.0;
    for (int k = 0; k < n; ++k) sum += ai[k] * btj[k];
    return sum;
}

// Rows [first, last) of C.
inline void multiply_rows(operands& m, int first, int last) {
    const int n = m.n;
    const double* a = m.a.data();
    const double* bt = m.bt.data();
    double* c = m.c.data();
    for (int i = first; i < last; ++i)
        for (int j = 0; j < n; ++j)
            c[static_cast<std::size_t>(i) * n + j] =
                inner_product(a + static_cast<std::size_t>(i) * n, bt + static_cast<std::size_t>(j) * n, n);
}

// The block of rows of part w of `parts`: [n*w/parts, n*(w+1)/parts).
inline int block_begin(int n, int w, int parts) {
    return static_cast<int>(static_cast<long long>(n) * w / parts);
}

void serial(operands& m);
void coarse(operands& m, int workers);
void filaments(operands& m);

}  // namespace weft::apps::matmul_ip
