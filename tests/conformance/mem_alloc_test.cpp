// weft's allocator (weft.h "Memory", weft/allocator.hpp): the C calls'
// contracts (requirement and negative cases) and the heap accounting
// (resource usage: live bytes and an exact high-water mark on one worker).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "weft/allocator.hpp"
#include "weft/weft.h"

namespace {

struct one_worker_runtime {
    explicit one_worker_runtime(const char* sched = "fifo") {
        weft_config_t cfg{};
        cfg.workers = 1;
        cfg.sched = sched;
        EXPECT_EQ(weft_init(&cfg), 0);
        EXPECT_EQ(weft_stats_reset(), 0);
    }
    ~one_worker_runtime() { EXPECT_EQ(weft_finalize(), 0); }
};

weft_stats_t stats() {
    weft_stats_t s;
    EXPECT_EQ(weft_stats_get(&s), 0);
    return s;
}

TEST(MemAlloc, malloc_free_are_counted_and_the_peak_is_exact) {
    one_worker_runtime rt;
    std::uint64_t base = stats().heap_bytes;
    void* a = weft_malloc(1000);
    void* b = weft_malloc(3000);
    void* c = weft_malloc(5000);
    ASSERT_TRUE(a && b && c);
    EXPECT_EQ(stats().heap_bytes, base + 9000);
    weft_free(b);
    weft_free(c);
    void* d = weft_malloc(100);
    weft_stats_t s = stats();
    EXPECT_EQ(s.heap_bytes, base + 1100);
    EXPECT_EQ(s.heap_bytes_peak, base + 9000);
    weft_free(a);
    weft_free(d);
    EXPECT_EQ(stats().heap_bytes, base);
    // A reset starts the high-water mark again from the current level.
    ASSERT_EQ(weft_stats_reset(), 0);
    EXPECT_EQ(stats().heap_bytes_peak, base);
}

TEST(MemAlloc, alignment_zeroing_and_zero_size) {
    one_worker_runtime rt;
    void* p = weft_malloc(24);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % alignof(std::max_align_t), 0u);
    weft_free(p);

    void* z = weft_malloc(0);  // unique, freeable
    void* z2 = weft_malloc(0);
    ASSERT_NE(z, nullptr);
    EXPECT_NE(z, z2);
    weft_free(z);
    weft_free(z2);
    weft_free(nullptr);  // no-op

    auto* c = static_cast<unsigned char*>(weft_calloc(1000, 7));
    ASSERT_NE(c, nullptr);
    for (int i = 0; i < 7000; ++i) ASSERT_EQ(c[i], 0) << i;
    EXPECT_EQ(stats().heap_bytes, 7000u);
    weft_free(c);

    for (std::size_t align : {1, 2, 8, 16, 32, 64, 4096, 1 << 16}) {
        void* a = weft_aligned_alloc(align, 100);
        ASSERT_NE(a, nullptr);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % align, 0u) << align;
        std::memset(a, 0xab, 100);
        EXPECT_EQ(stats().heap_bytes, 100u) << align;
        weft_free(a);
    }
}

TEST(MemAlloc, realloc_keeps_contents_and_counts_the_difference) {
    one_worker_runtime rt;
    auto* p = static_cast<char*>(weft_realloc(nullptr, 10));  // = malloc
    ASSERT_NE(p, nullptr);
    std::memcpy(p, "abcdefghi", 10);
    p = static_cast<char*>(weft_realloc(p, 100000));
    ASSERT_NE(p, nullptr);
    EXPECT_STREQ(p, "abcdefghi");
    EXPECT_EQ(stats().heap_bytes, 100000u);
    p = static_cast<char*>(weft_realloc(p, 5));
    EXPECT_EQ(std::memcmp(p, "abcde", 5), 0);
    EXPECT_EQ(stats().heap_bytes, 5u);
    EXPECT_EQ(weft_realloc(p, 0), nullptr);  // frees
    EXPECT_EQ(stats().heap_bytes, 0u);

    // An aligned block keeps its alignment when it grows.
    auto* a = static_cast<char*>(weft_aligned_alloc(256, 64));
    std::memset(a, 7, 64);
    a = static_cast<char*>(weft_realloc(a, 10000));
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 256, 0u);
    for (int i = 0; i < 64; ++i) ASSERT_EQ(a[i], 7);
    EXPECT_EQ(stats().heap_bytes, 10000u);
    weft_free(a);
    EXPECT_EQ(stats().heap_bytes, 0u);
}

TEST(MemAlloc, errors) {
    one_worker_runtime rt;
    errno = 0;
    EXPECT_EQ(weft_malloc(SIZE_MAX - 8), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    errno = 0;
    EXPECT_EQ(weft_calloc(SIZE_MAX / 2, 3), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    errno = 0;
    EXPECT_EQ(weft_aligned_alloc(48, 10), nullptr);
    EXPECT_EQ(errno, EINVAL);
    errno = 0;
    EXPECT_EQ(weft_aligned_alloc(0, 10), nullptr);
    EXPECT_EQ(errno, EINVAL);
    void* p = weft_malloc(10);
    errno = 0;
    EXPECT_EQ(weft_realloc(p, SIZE_MAX - 4), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    EXPECT_EQ(stats().heap_bytes, 10u);  // p untouched
    weft_free(p);
    EXPECT_EQ(stats().heap_bytes, 0u);
}

TEST(MemAlloc, works_without_a_runtime_and_across_runtimes) {
    ASSERT_EQ(weft_is_initialized(), 0);
    void* early = weft_malloc(4096);  // accounted, does not start the runtime
    ASSERT_NE(early, nullptr);
    EXPECT_EQ(weft_is_initialized(), 0);
    {
        one_worker_runtime rt;
        EXPECT_EQ(stats().heap_bytes, 4096u);  // the accounting is per process
        weft_free(early);
        EXPECT_EQ(stats().heap_bytes, 0u);
    }
}

// --- weft::allocator -------------------------------------------------------------
struct alignas(64) wide {
    char bytes[64];
};

TEST(MemAllocator, std_containers_are_counted) {
    one_worker_runtime rt;
    {
        std::vector<double, weft::allocator<double>> v(1000, 1.5);
        EXPECT_EQ(stats().heap_bytes, 8000u);
        v.push_back(2.0);  // grows: a new block, the old one freed
        EXPECT_EQ(stats().heap_bytes, v.capacity() * sizeof(double));
        EXPECT_EQ(v[1000], 2.0);

        std::map<int, std::string, std::less<>, weft::allocator<std::pair<const int, std::string>>> m;
        for (int i = 0; i < 100; ++i) m.emplace(i, "x");  // rebinds to the node type
        EXPECT_GT(stats().heap_bytes, v.capacity() * sizeof(double));

        std::vector<wide, weft::allocator<wide>> w(3);
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(w.data()) % 64, 0u);  // over-aligned: aligned_alloc

        std::list<int, weft::allocator<int>> l1{1, 2, 3}, l2{4};
        l1.splice(l1.end(), l2);  // interchangeable instances
        EXPECT_EQ(l1.size(), 4u);
    }
    EXPECT_EQ(stats().heap_bytes, 0u);
}

TEST(MemAllocator, meets_the_allocator_requirements) {
    using A = weft::allocator<int>;
    using B = weft::allocator<double>;
    static_assert(std::allocator_traits<A>::is_always_equal::value);
    static_assert(std::is_same_v<std::allocator_traits<A>::rebind_alloc<double>, B>);
    A a;
    B b(a);  // converting copy
    EXPECT_TRUE(a == A(b));
    EXPECT_FALSE(a != A(b));
    int* p = a.allocate(10);
    a.deallocate(p, 10);
    EXPECT_THROW((void)a.allocate(SIZE_MAX / 2), std::bad_array_new_length);
    EXPECT_THROW((void)a.allocate(SIZE_MAX / sizeof(int)), std::bad_alloc);  // fails before malloc
}

}  // namespace
