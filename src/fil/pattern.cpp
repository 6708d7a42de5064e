// weft::detail::fil — the pattern recognizer of implicit coarsening (Lowenthal, Freeh & Andrews §3.1).
//
// "The Filaments package recognizes regular patterns of filaments assigned to
// the same pool, and at run time switches to code that iterates over the
// filaments, generating the arguments in registers rather than loading from
// memory ... (such as one- and two-dimensional loops)."
//
// Recognised, in the order the descriptors were created:
//   rows     desc[k] = (i0 + (k / L) * s, j0 + k % L), L >= 2 columns, s >= 1
//            (a dense 2-D block, or every s-th row of one: the cyclic row
//            placement of Mandelbrot and LU gives s = workers); one row
//            (n == L) is a 1-D loop over j.
//   column   desc[k] = (i0 + k * s, j0), s >= 1: a 1-D loop over i.
// Anything else (and anything out of order) takes the general path: the body
// is still inlined (C++), only the arguments come from the descriptors.
#include "fil/pool.hpp"

namespace weft::detail::fil {

namespace {

// True if d[k] == (i0 + (k / L) * s, j0 + k % L) for every k < n (n % L == 0).
bool rows_match(const desc* d, std::size_t n, std::int64_t i0, std::int64_t s, std::int64_t j0, std::size_t L) {
    std::size_t k = 0;
    for (std::int64_t i = i0; k < n; i += s) {
        // One row: a plain compare loop the compiler vectorises.
        bool ok = true;
        for (std::size_t c = 0; c < L; ++c) {
            ok &= d[k + c].i == i;
            ok &= d[k + c].j == j0 + static_cast<std::int64_t>(c);
        }
        if (!ok) return false;
        k += L;
    }
    return true;
}

}  // namespace

pattern recognize(const desc* d, std::size_t n) {
    pattern p;
    if (n == 0) {
        // Nothing to run; call it a (empty) 1-D loop so that no descriptor is read.
        p.path = WEFT_FIL_PATH_DENSE_1D;
        p.nrows = 0;
        p.ncols = 1;
        return p;
    }
    const std::int64_t i0 = d[0].i, j0 = d[0].j;
    // Leading run of one row: same i, consecutive j.
    std::size_t L = 1;
    while (L < n && d[L].i == i0 && d[L].j == j0 + static_cast<std::int64_t>(L)) ++L;

    if (L >= 2) {
        if (n % L != 0) return p;
        std::int64_t s = 1;
        if (n > L) {
            s = static_cast<std::int64_t>(d[L].i) - i0;
            if (s < 1) return p;
        }
        if (!rows_match(d, n, i0, s, j0, L)) return p;
        p.i0 = i0;
        p.istride = s;
        p.nrows = static_cast<std::int64_t>(n / L);
        p.j0 = j0;
        p.ncols = static_cast<std::int64_t>(L);
        p.path = p.nrows == 1 ? WEFT_FIL_PATH_DENSE_1D : WEFT_FIL_PATH_DENSE_2D;
        return p;
    }
    // A column: j fixed, i advancing by a constant stride.
    std::int64_t s = 1;
    if (n > 1) {
        s = static_cast<std::int64_t>(d[1].i) - i0;
        if (s < 1 || d[1].j != j0) return p;
    }
    for (std::size_t k = 2; k < n; ++k) {
        if (d[k].i != i0 + static_cast<std::int64_t>(k) * s || d[k].j != j0) return p;
    }
    p.path = WEFT_FIL_PATH_DENSE_1D;
    p.i0 = i0;
    p.istride = s;
    p.nrows = static_cast<std::int64_t>(n);
    p.j0 = j0;
    p.ncols = 1;
    return p;
}

}  // namespace weft::detail::fil
