// Fibonacci with a fork at every call (Lowenthal et al. §4: the fork/join program with
// the finest grain there is: one addition per filament). Every version computes
// fib(n) by the same doubly recursive function; they differ only in how the
// two recursive calls are made.
#pragma once

#include <cstdint>

namespace weft::apps::fib {

// The serial version: plain recursion (noinline so that the compiler cannot
// turn the two calls into a loop in one version and not in another).
__attribute__((noinline)) inline std::int64_t serial(int n) {
    return n < 2 ? n : serial(n - 1) + serial(n - 2);
}

// The filaments version: weft::join at every call (include/weft/filament.hpp),
// inside a fork/join region.
std::int64_t filaments(int n);

// The coarse-grain version: the top of the call tree is cut into a bag of
// about 16 subproblems per thread (the tree is unbalanced: fib(n-1) has 1.6x
// the calls of fib(n-2)), which `workers` kernel threads take from a shared
// counter and solve with the serial recursion.
std::int64_t coarse(int n, int workers);

}  // namespace weft::apps::fib
