// weft-bench matmul: what the peer versions (matmul_omp.cpp, matmul_tbb.cpp)
// share with the experiment (matmul.cpp). The algorithm is apps/matmul.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>

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

// The peers' temporaries: malloc, with the live bytes and their peak counted
// (atomically: the peers allocate from several threads at once).
struct counting_heap {
    std::atomic<std::size_t> heap{0};
    std::atomic<std::size_t> peak{0};
    void* allocate(std::size_t bytes) {
        std::size_t now = heap.fetch_add(bytes) + bytes;
        std::size_t p = peak.load();
        while (now > p && !peak.compare_exchange_weak(p, now)) {
        }
        return apps::matmul::allocate_matrix_bytes(bytes);
    }
    void release(void* p, std::size_t bytes) {
        heap.fetch_sub(bytes);
        std::free(p);
    }
};

// One run of a peer on `workers` threads: C = A * B into c. Defined only when
// the peer is built (WEFT_HAVE_OPENMP / WEFT_HAVE_TBB).
peer_result run_openmp(problem const& p, apps::matmul::view c, int workers);
peer_result run_tbb(problem const& p, apps::matmul::view c, int workers);

}  // namespace weft::bench::matmul
