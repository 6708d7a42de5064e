// weft-bench matmul: what the peer versions (matmul_omp.cpp, matmul_tbb.cpp)
// share with the experiment (matmul.cpp). The algorithm is apps/matmul.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>

#include <weft/weft.h>
#include <weft/weft.hpp>

#include "apps/matmul/matmul.hpp"
#include "harness.hpp"

namespace weft::bench::matmul {

// The weft version: every fork a weft thread, temporaries from weft_malloc
// (so that dfs charges them to the thread's quota).
struct weft_exec {
    template <class... F>
    void fork_join(F&&... f) {
        std::array<weft::task<void>, sizeof...(F)> tasks{weft::spawn(std::ref(f))...};
        for (auto& t : tasks) t.join();
    }
    void* allocate(std::size_t bytes) {
        void* p = weft_aligned_alloc(apps::matmul::matrix_alignment, bytes);
        if (p == nullptr) die("weft_aligned_alloc(%zu) failed", bytes);
        return p;
    }
    void release(void* p, std::size_t) { weft_free(p); }
};

// A, B, C: zeroed, on a cache line like the temporaries (apps/matmul/matmul.hpp).
struct matrix {
    std::unique_ptr<double, void (*)(void*)> data;
    apps::matmul::view v;
    explicit matrix(std::size_t n)
        : data(static_cast<double*>(apps::matmul::allocate_matrix_bytes(n * n * sizeof(double))), &std::free),
          v{data.get(), n} {
        if (!data) die("out of memory for a %zu x %zu matrix", n, n);
        std::memset(data.get(), 0, n * n * sizeof(double));
    }
};

// Before every run of a version its result matrix is filled with NaN, and
// after it every entry is compared with the serial result: a version that
// left part of C unwritten fails instead of passing on the previous run's C.
void poison(apps::matmul::view c, std::size_t n);
// Stops the run when an entry of c differs from ref by more than 1e-9 or is
// not a number (a NaN left by poison() is one).
void verify(apps::matmul::view c, apps::matmul::view ref, std::size_t n, char const* what, int workers);

struct problem {
    std::size_t n;
    std::size_t leaf;
    apps::matmul::view a, b;
};

// A and B filled as every version multiplies them, and ref = A * B by the
// serial program, computed once (which also touches their pages before any
// timed run): what each run's result is checked against.
struct inputs {
    matrix a, b, ref;
    problem p;
    inputs(std::size_t n, std::size_t leaf);
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
