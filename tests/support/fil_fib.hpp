// fib with a weft::join at every call, and the plain recursion that checks it:
// the filament tests' standard fork/join workload.
#pragma once

#include "weft/filament.hpp"

namespace wt {

inline long fib_serial(int n) { return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2); }

// By-value captures, as in hot recursive joins (include/weft/filament.hpp).
inline long fib_join(int n) {
    if (n < 2) return n;
    auto [a, b] = weft::join([=] { return fib_join(n - 1); }, [=] { return fib_join(n - 2); });
    return a + b;
}

}  // namespace wt
