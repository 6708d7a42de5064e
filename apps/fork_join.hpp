// Cilk's divide-and-conquer loop on weft threads: the shape of the fork/join
// versions that weft-bench knary puts beside knary (Arora, Blumofe & Plaxton,
// Figures 25 and 28: lu and heat). Every split is a spawn and a join, so the
// runtime's work/span profiler (weft_config_t.measure) sees the program's dag.
#pragma once

#include <weft/weft.hpp>

namespace weft::apps {

// body(i0, i1) over [begin, end), halved until a piece has at most `grain`
// items: one half on a spawned weft thread, the other on the caller, then a
// join. grain < 1 counts as 1.
template <class Body>
void divide_and_conquer(int begin, int end, int grain, Body const& body) {
    if (end - begin <= (grain < 1 ? 1 : grain)) {
        if (end > begin) body(begin, end);
        return;
    }
    int const mid = begin + (end - begin) / 2;
    auto left = weft::spawn([&] { divide_and_conquer(begin, mid, grain, body); });
    divide_and_conquer(mid, end, grain, body);
    left.join();
}

}  // namespace weft::apps
