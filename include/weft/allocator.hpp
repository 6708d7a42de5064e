// weft/allocator.hpp — weft::allocator<T>: a standard allocator over weft's
// allocator (weft_malloc / weft_aligned_alloc / weft_free, weft.h "Memory"), so
// that containers are counted in the heap statistics and, under the dfs
// scheduler, charged to the memory quota of the thread that grows them:
//
//   std::vector<double, weft::allocator<double>> v(n);
//
// Stateless: every instance is interchangeable (is_always_equal), so
// containers move, swap and splice memory freely between each other.
// allocate() is a scheduling point under dfs (the thread may be preempted, or
// delayed behind dummy threads, and resume on another worker), like
// weft_malloc. Throws std::bad_alloc when memory runs out and
// std::bad_array_new_length when n * sizeof(T) overflows.
#pragma once

#include <cstddef>
#include <limits>
#include <new>
#include <type_traits>

#include "weft/weft.h"

namespace weft {
inline namespace v0 {

template <class T>
class allocator {
public:
    using value_type = T;
    using size_type = std::size_t;
    using difference_type = std::ptrdiff_t;
    using propagate_on_container_move_assignment = std::true_type;
    using is_always_equal = std::true_type;

    constexpr allocator() noexcept = default;
    template <class U>
    constexpr allocator(const allocator<U>&) noexcept {}

    [[nodiscard]] T* allocate(std::size_t n) {
        if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
        void* p;
        if constexpr (alignof(T) > alignof(std::max_align_t)) p = weft_aligned_alloc(alignof(T), n * sizeof(T));
        else p = weft_malloc(n * sizeof(T));
        if (p == nullptr) throw std::bad_alloc();
        return static_cast<T*>(p);
    }

    void deallocate(T* p, std::size_t) noexcept { weft_free(p); }
};

template <class T, class U>
constexpr bool operator==(const allocator<T>&, const allocator<U>&) noexcept {
    return true;
}

}  // namespace v0
}  // namespace weft
