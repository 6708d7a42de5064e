// Quicksort of n 64-bit keys (Lowenthal et al. §4.4, Table 4: "quicksort compares every
// element in the subarray to the pivot element" before its recursive calls, so
// the first partitions are a sequential phase that grows with n).
//
// Every version sorts with the same basic blocks: median-of-three Hoare
// partition, and insertion sort below `insertion_cutoff` keys. They differ only
// in how the two halves after a partition are sorted:
//   serial     plain recursion;
//   filaments  weft::join of the two halves after every partition (a fork at
//              every partition, no extra cut-off: pruning turns the forks into
//              calls while every worker is busy, §3.2);
//   coarse     the paper's bag of tasks: a central bag of subarrays under a
//              mutex and condition variable; a thread takes a subarray,
//              partitions it, and while the bag holds fewer tasks than there
//              are threads puts one half back and keeps the other; otherwise it
//              recurses on both halves itself (down to `bag_grain` keys, below
//              which it sorts serially without looking at the bag).
// The paper says only that its coarse program is a bag of tasks (and blames
// contention for the bag for its poor scaling); the policy here ("put back while
// the bag is short") is ours, and keeps the bag almost empty and rarely locked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

namespace weft::apps::quicksort {

using key = std::uint64_t;

inline constexpr std::size_t insertion_cutoff = 32;

// The keys of a problem: a deterministic xorshift64* sequence.
inline void fill(key* a, std::size_t n) {
    std::uint64_t x = 0x9E3779B97F4A7C15ull;
    for (std::size_t i = 0; i < n; ++i) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        a[i] = x * 0x2545F4914F6CDD1Dull;
    }
}

inline void insertion_sort(key* a, std::size_t n) {
    for (std::size_t i = 1; i < n; ++i) {
        key v = a[i];
        std::size_t j = i;
        for (; j > 0 && v < a[j - 1]; --j) a[j] = a[j - 1];
        a[j] = v;
    }
}

// Hoare partition around the median of a[0], a[n/2], a[n-1] (n > 2): returns m,
// 0 < m < n, with every key of a[0, m) <= every key of a[m, n). (The median
// is not the largest of the three, so i stops before n - 1 on the first pass;
// after a swap the swapped keys stop both scans: i and j stay in bounds.)
inline std::size_t partition(key* a, std::size_t n) {
    key x = a[0], y = a[n / 2], z = a[n - 1];
    // The median of three: never the smallest or largest key, so both halves are
    // non-empty.
    key pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
    std::size_t i = 0, j = n - 1;
    for (;;) {
        while (a[i] < pivot) ++i;
        while (pivot < a[j]) --j;
        if (i >= j) return j + 1;
        std::swap(a[i], a[j]);
        ++i;
        --j;
    }
}

// The serial version (noinline: the same code whichever version calls it).
__attribute__((noinline)) inline void serial(key* a, std::size_t n) {
    if (n <= insertion_cutoff) {
        insertion_sort(a, n);
        return;
    }
    std::size_t m = partition(a, n);
    serial(a, m);
    serial(a + m, n - m);
}

// The filaments version: weft::join of both halves after every partition,
// inside a fork/join region.
void filaments(key* a, std::size_t n);

// The coarse-grain version: `workers` kernel threads and a bag of tasks.
void coarse(key* a, std::size_t n, int workers);

}  // namespace weft::apps::quicksort
