// weft-bench matmul: what the peer versions (matmul_omp.cpp, matmul_tbb.cpp)
// share with the experiment (matmul.cpp). The algorithm is apps/matmul.
#pragma once

#include <cstddef>

#include "apps/matmul/matmul.hpp"

namespace weft::bench::matmul {

struct problem {
    std::size_t n;
    std::size_t leaf;
    apps::matmul::view a, b;
};

struct peer_result {
    double time_s;
    std::size_t peak_heap_bytes;
};

// One run of a peer on `workers` threads: C = A * B into c. Defined only when
// the peer is built (WEFT_HAVE_OPENMP / WEFT_HAVE_TBB).
peer_result run_openmp(problem const& p, apps::matmul::view c, int workers);
peer_result run_tbb(problem const& p, apps::matmul::view c, int workers);

}  // namespace weft::bench::matmul
