// weft::arch stacks: stack_pool (requirement and resource-usage tests) and
// overflow detection (negative tests: a child process must die with the report).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "arch/context.hpp"
#include "arch/fiber_sanitizer.hpp"
#include "arch/stack.hpp"

namespace {

using weft::arch::guard_kind;
using weft::arch::guard_policy;
using weft::arch::stack;
using weft::arch::stack_cache;
using weft::arch::stack_pool;
using weft::arch::stack_pool_options;

constexpr std::size_t kib = 1024;
constexpr std::size_t mib = 1024 * 1024;

std::size_t page() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }
std::size_t guard() { return weft::arch::stack_guard_size(); }

// True if the kernel refuses to read the byte at p: the page is a guard.
// write(2) copies from user memory and fails with EFAULT instead of raising
// SIGSEGV, so a test can probe a guard without dying.
bool faults(const void* p) {
    int fds[2];
    if (::pipe(fds) != 0) return false;
    ssize_t n = ::write(fds[1], p, 1);
    int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return n < 0 && e == EFAULT;
}

std::size_t count_vmas() {
    FILE* f = std::fopen("/proc/self/maps", "r");
    if (f == nullptr) return 0;
    std::size_t n = 0;
    for (int c; (c = std::fgetc(f)) != EOF;)
        if (c == '\n') ++n;
    std::fclose(f);
    return n;
}

long max_map_count() {
    FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r");
    long v = 65530;
    if (f != nullptr) {
        if (std::fscanf(f, "%ld", &v) != 1) v = 65530;
        std::fclose(f);
    }
    return v;
}

// Resident pages of [p, p + len), by mincore.
std::size_t resident_pages(void* p, std::size_t len) {
    std::vector<unsigned char> v((len + page() - 1) / page());
    if (::mincore(p, len, v.data()) != 0) return ~std::size_t{0};
    std::size_t n = 0;
    for (unsigned char c : v) n += c & 1;
    return n;
}

void touch_top(const stack& s) { static_cast<volatile char*>(s.hi())[-1] = 1; }

// --- basic shape ----------------------------------------------------------------
TEST(arch_stack, default_stack_shape) {
    stack_pool pool(64 * kib);
    stack_cache cache;
    stack s;
    ASSERT_EQ(pool.acquire(0, &cache, &s), 0);
    EXPECT_EQ(s.size, 64 * kib);
    EXPECT_TRUE(s.pooled);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(s.lo) % page(), 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(s.hi()) % 16, 0u);
    EXPECT_NE(pool.preferred_guard(), guard_kind::canary);
    EXPECT_EQ(s.guard, pool.preferred_guard());
    std::memset(s.lo, 0xa5, s.size);  // every usable byte is writable
    pool.release(s, &cache);
    pool.drain(&cache);
}

TEST(arch_stack, default_size_rounds_up_to_pages) {
    stack_pool pool(40 * kib + 1);
    EXPECT_EQ(pool.default_size(), 44 * kib);
    stack_pool zero(0);
    EXPECT_EQ(zero.default_size(), 64 * kib);
}

TEST(arch_stack, guard_region_below_every_stack_faults) {
    stack_pool pool(64 * kib);
    stack_cache cache;
    std::vector<stack> v(40);  // more than one slab
    for (auto& s : v) ASSERT_EQ(pool.acquire(0, &cache, &s), 0);
    for (const auto& s : v) {
        const char* lo = static_cast<const char*>(s.lo);
        EXPECT_TRUE(faults(lo - 1));
        EXPECT_TRUE(faults(lo - guard() / 2));
        EXPECT_TRUE(faults(lo - guard()));
        EXPECT_FALSE(faults(lo));
        EXPECT_TRUE(weft::arch::stack_guard_contains(s, lo - 1));
        EXPECT_TRUE(weft::arch::stack_guard_contains(s, lo - guard()));
        EXPECT_FALSE(weft::arch::stack_guard_contains(s, lo));
        EXPECT_FALSE(weft::arch::stack_guard_contains(s, lo - guard() - 1));
    }
    for (auto& s : v) pool.release(s, &cache);
    pool.drain(&cache);
}

// --- reuse ---------------------------------------------------------------------
TEST(arch_stack, cache_reuses_last_released_stack) {
    stack_pool pool(64 * kib);
    stack_cache cache;
    stack a, b;
    ASSERT_EQ(pool.acquire(0, &cache, &a), 0);
    touch_top(a);
    pool.release(a, &cache);
    ASSERT_EQ(pool.acquire(0, &cache, &b), 0);
    EXPECT_EQ(a.lo, b.lo);  // LIFO: the warm one comes back
    pool.release(b, &cache);
    pool.drain(&cache);
}

TEST(arch_stack, stacks_move_between_worker_caches) {
    stack_pool_options o;
    o.slab_stacks = 32;
    o.cache_max = 8;
    o.batch = 4;
    stack_pool pool(64 * kib, o);
    stack_cache w1, w2;
    std::vector<stack> v(64);
    for (auto& s : v) ASSERT_EQ(pool.acquire(0, &w1, &s), 0);
    const std::size_t mapped = pool.bytes_mapped();
    for (auto& s : v) pool.release(s, &w1);  // spills beyond 8 to the shared list
    EXPECT_LE(w1.count, 8u);
    // Everything w1 did not keep is on the shared list, and w2 lives on it.
    const std::size_t shared = v.size() - w1.count;
    for (std::size_t i = 0; i < shared; ++i) ASSERT_EQ(pool.acquire(0, &w2, &v[i]), 0);
    EXPECT_EQ(pool.bytes_mapped(), mapped);
    for (std::size_t i = 0; i < shared; ++i) pool.release(v[i], &w2);
    pool.drain(&w1);
    pool.drain(&w2);
    EXPECT_EQ(w1.count, 0u);
    EXPECT_EQ(w1.head, nullptr);
    EXPECT_EQ(w2.count, 0u);
}

TEST(arch_stack, acquire_without_cache) {
    stack_pool pool(64 * kib);
    std::vector<stack> v(50);
    for (auto& s : v) {
        ASSERT_EQ(pool.acquire(0, nullptr, &s), 0);
        touch_top(s);
    }
    for (auto& s : v) pool.release(s, nullptr);
    stack s;
    ASSERT_EQ(pool.acquire(0, nullptr, &s), 0);
    EXPECT_EQ(s.lo, v.back().lo);  // warm, most recent first
    pool.release(s, nullptr);
}

// Several kernel threads, each with its own cache, churn stacks through the
// shared lists; a marker word in each stack proves no stack is ever handed to
// two owners at once.
TEST(arch_stack, concurrent_acquire_release) {
    stack_pool_options o;
    o.cache_max = 8;
    o.batch = 4;
    o.warm_max = 16;  // small: the discard path runs too
    stack_pool pool(64 * kib, o);
    constexpr int threads = 4, ops = 20'000, live_max = 48;
    std::atomic<int> double_owned{0}, failures{0};
    auto marker = [](const stack& s) {
        return std::atomic_ref<std::uint64_t>(*(reinterpret_cast<std::uint64_t*>(s.hi()) - 8));
    };
    auto work = [&](int seed) {
        stack_cache cache;
        std::mt19937 rng(static_cast<unsigned>(seed));
        std::vector<stack> mine;
        for (int i = 0; i < ops; ++i) {
            if (mine.size() < live_max && (mine.empty() || rng() % 2 == 0)) {
                stack s;
                if (pool.acquire(0, &cache, &s) != 0) {
                    failures.fetch_add(1);
                    continue;
                }
                if (marker(s).exchange(1, std::memory_order_acq_rel) != 0) double_owned.fetch_add(1);
                mine.push_back(s);
            } else {
                std::size_t k = rng() % mine.size();
                marker(mine[k]).store(0, std::memory_order_release);
                pool.release(mine[k], &cache);
                mine[k] = mine.back();
                mine.pop_back();
            }
        }
        for (auto& s : mine) {
            marker(s).store(0, std::memory_order_release);
            pool.release(s, &cache);
        }
        pool.drain(&cache);
    };
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) ts.emplace_back(work, t + 1);
    for (auto& t : ts) t.join();
    EXPECT_EQ(double_owned.load(), 0);
    EXPECT_EQ(failures.load(), 0);
    // Never more than threads * (live_max + cache_max) + a slab per thread in use.
    EXPECT_LE(pool.bytes_mapped(), static_cast<std::size_t>(threads * (live_max + 8 + 32 + 32)) * (64 * kib + guard()));
}

// --- scale ---------------------------------------------------------------------
TEST(arch_stack, many_live_100k) {
    constexpr std::size_t n = 100'000;
    stack_pool pool(64 * kib);
    stack_cache cache;
    std::vector<stack> v(n);
    for (auto& s : v) {
        ASSERT_EQ(pool.acquire(0, &cache, &s), 0);
        touch_top(s);  // what the core's control block does
    }
    std::vector<std::uintptr_t> lows(n);
    for (std::size_t i = 0; i < n; ++i) lows[i] = reinterpret_cast<std::uintptr_t>(v[i].lo);
    std::sort(lows.begin(), lows.end());
    for (std::size_t i = 1; i < n; ++i) ASSERT_GE(lows[i] - lows[i - 1], 64 * kib + guard()) << "overlap at " << i;
    EXPECT_GE(pool.bytes_mapped(), n * (64 * kib + guard()));
    EXPECT_LE(pool.bytes_mapped(), (n + 64) * (64 * kib + guard()));
    // The guards must not have eaten the map count.
    EXPECT_LT(count_vmas(), static_cast<std::size_t>(max_map_count() / 2));
    for (auto& s : v) pool.release(s, &cache);
    pool.drain(&cache);
}

TEST(arch_stack, million_created_over_time) {
    stack_pool pool(64 * kib);
    stack_cache cache;
    constexpr std::size_t live = 1000, waves = 1000;  // 1,000,000 stacks in all
    std::vector<stack> v(live);
    std::size_t mapped_after_first = 0;
    for (std::size_t w = 0; w < waves; ++w) {
        for (auto& s : v) {
            ASSERT_EQ(pool.acquire(0, &cache, &s), 0);
            touch_top(s);
        }
        for (auto& s : v) pool.release(s, &cache);
        if (w == 0) mapped_after_first = pool.bytes_mapped();
    }
    EXPECT_EQ(pool.bytes_mapped(), mapped_after_first);  // all reuse, no growth
    pool.drain(&cache);
}

TEST(arch_stack, mprotect_budget_falls_back_to_canary) {
    stack_pool_options o;
    o.guard = guard_policy::mprotect;
    o.max_guard_vmas = 20;  // 10 guards
    stack_pool pool(64 * kib, o);
    stack_cache cache;
    std::vector<stack> v(40);
    for (auto& s : v) ASSERT_EQ(pool.acquire(0, &cache, &s), 0);
    std::size_t guarded = 0, canaries = 0;
    for (const auto& s : v) {
        if (s.guard == guard_kind::mprotect) {
            ++guarded;
            EXPECT_TRUE(faults(static_cast<char*>(s.lo) - 1));
        } else if (s.guard == guard_kind::canary) {
            ++canaries;
            EXPECT_TRUE(weft::arch::stack_canary_intact(s));
            EXPECT_FALSE(weft::arch::stack_guard_contains(s, static_cast<char*>(s.lo) - 1));
        }
    }
    EXPECT_EQ(guarded, 10u);
    EXPECT_EQ(canaries, 30u);
    for (auto& s : v) pool.release(s, &cache);
    pool.drain(&cache);
}

TEST(arch_stack, mprotect_guards_100k_live_stay_under_map_count) {
    constexpr std::size_t n = 100'000;
    stack_pool_options o;
    o.guard = guard_policy::mprotect;  // what a kernel without MADV_GUARD_INSTALL gets
    stack_pool pool(64 * kib, o);
    stack_cache cache;
    std::vector<stack> v(n);
    std::size_t guarded = 0;
    for (auto& s : v) {
        ASSERT_EQ(pool.acquire(0, &cache, &s), 0);
        touch_top(s);
        guarded += s.guard == guard_kind::mprotect;
    }
    const std::size_t vmas = count_vmas();
    EXPECT_LT(vmas, static_cast<std::size_t>(max_map_count()) * 3 / 4);
    EXPECT_GT(guarded, 1000u);  // the budget was used...
    EXPECT_LT(guarded, n);      // ...and ran out: the rest have canaries
    // The process can still map memory.
    void* p = ::mmap(nullptr, page(), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    if (p != MAP_FAILED) ::munmap(p, page());
    for (auto& s : v) pool.release(s, &cache);
    pool.drain(&cache);
}

// --- sizes and accounting ---------------------------------------------------------
TEST(arch_stack, non_default_size_gets_own_mapping) {
    stack_pool pool(64 * kib);
    const std::size_t before = pool.bytes_mapped();
    stack s;
    ASSERT_EQ(pool.acquire(mib + 1, nullptr, &s), 0);
    EXPECT_FALSE(s.pooled);
    EXPECT_GE(s.size, mib + 1);
    EXPECT_EQ(s.size % page(), 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(s.hi()) % 16, 0u);
    EXPECT_EQ(pool.bytes_mapped(), before + s.size + guard());
    static_cast<volatile char*>(s.lo)[0] = 1;  // both ends usable
    static_cast<volatile char*>(s.hi())[-1] = 1;
    if (s.guard != guard_kind::canary) {
        EXPECT_TRUE(faults(static_cast<char*>(s.lo) - 1));
    }
    pool.release(s, nullptr);
    EXPECT_EQ(pool.bytes_mapped(), before);
}

TEST(arch_stack, small_request_gets_default_stack) {
    stack_pool pool(64 * kib);
    stack s;
    ASSERT_EQ(pool.acquire(16 * kib, nullptr, &s), 0);
    EXPECT_TRUE(s.pooled);
    EXPECT_EQ(s.size, 64 * kib);
    pool.release(s, nullptr);
}

TEST(arch_stack, peak_accounting) {
    stack_pool pool(64 * kib);
    EXPECT_EQ(pool.bytes_mapped(), 0u);
    std::vector<stack> big(3);
    for (auto& s : big) ASSERT_EQ(pool.acquire(8 * mib, nullptr, &s), 0);
    const std::size_t high = pool.bytes_mapped();
    EXPECT_EQ(high, 3 * (8 * mib + guard()));
    EXPECT_EQ(pool.bytes_peak(), high);
    for (auto& s : big) pool.release(s, nullptr);
    EXPECT_EQ(pool.bytes_mapped(), 0u);
    EXPECT_EQ(pool.bytes_peak(), high);  // the high-water mark stays
    pool.reset_peak();
    EXPECT_EQ(pool.bytes_peak(), 0u);
    stack s;
    ASSERT_EQ(pool.acquire(0, nullptr, &s), 0);  // a slab
    EXPECT_GT(pool.bytes_mapped(), 0u);
    EXPECT_EQ(pool.bytes_peak(), pool.bytes_mapped());
    pool.release(s, nullptr);
}

TEST(arch_stack, spike_memory_is_returned) {
    stack_pool_options o;
    o.warm_max = 4;
    o.cache_max = 4;
    o.batch = 4;
    stack_pool pool(64 * kib, o);
    stack_cache cache;
    std::vector<stack> v(256);
    for (auto& s : v) {
        ASSERT_EQ(pool.acquire(0, &cache, &s), 0);
        std::memset(s.lo, 1, s.size);  // the spike touches whole stacks
    }
    for (auto& s : v) pool.release(s, &cache);
    std::size_t resident = 0;
    for (auto& s : v) resident += resident_pages(s.lo, s.size);
    // At most warm_max + cache_max stacks keep their pages.
    EXPECT_LE(resident, (4 + 4) * (64 * kib / page()));
    // Discarding (neighbours in one madvise call) kept every guard in place.
    for (auto& s : v) ASSERT_TRUE(faults(static_cast<char*>(s.lo) - 1));
    pool.drain(&cache);
    // Cold stacks come back usable (zero-filled).
    stack s;
    ASSERT_EQ(pool.acquire(0, &cache, &s), 0);
    std::memset(s.lo, 2, s.size);
    pool.release(s, &cache);
    pool.drain(&cache);
}

// Beyond the warm list, keep_top_max free stacks keep their top page (the
// first a thread touches) and nothing below it; the rest keep nothing. A
// spike that touched whole stacks thus keeps one page per tepid stack.
TEST(arch_stack, tepid_stacks_keep_only_their_top_page) {
    stack_pool_options o;
    o.warm_max = 4;
    o.cache_max = 4;
    o.batch = 4;
    o.keep_top_max = 64;
    stack_pool pool(64 * kib, o);
    stack_cache cache;
    std::vector<stack> v(256);
    for (auto& s : v) {
        ASSERT_EQ(pool.acquire(0, &cache, &s), 0);
        std::memset(s.lo, 1, s.size);
    }
    for (auto& s : v) pool.release(s, &cache);
    pool.drain(&cache);
    const std::size_t pages = 64 * kib / page();
    std::size_t whole = 0, top_only = 0, none = 0, other = 0;
    for (auto& s : v) {
        std::size_t below = resident_pages(s.lo, s.size - page());
        std::size_t top = resident_pages(static_cast<char*>(s.hi()) - page(), page());
        if (below == pages - 1 && top == 1)
            ++whole;
        else if (below == 0 && top == 1)
            ++top_only;
        else if (below == 0 && top == 0)
            ++none;
        else
            ++other;
    }
    EXPECT_EQ(whole, 4u) << "the warm list keeps its stacks whole";
    EXPECT_EQ(top_only, 64u) << "keep_top_max stacks keep their top page only";
    EXPECT_EQ(none, 256u - 4 - 64);
    EXPECT_EQ(other, 0u);
    for (auto& s : v) ASSERT_TRUE(faults(static_cast<char*>(s.lo) - 1));
    // Handed out again: warm first, then tepid (top page still there), then cold.
    std::vector<stack> again(4 + 64);
    for (auto& s : again) ASSERT_EQ(pool.acquire(0, &cache, &s), 0);
    std::size_t tops = 0;
    for (auto& s : again) tops += resident_pages(static_cast<char*>(s.hi()) - page(), page());
    EXPECT_EQ(tops, again.size());
    for (auto& s : again) pool.release(s, &cache);
    pool.drain(&cache);
}

TEST(arch_stack, for_each_stack_visits_every_mapped_stack) {
    stack_pool_options o;
    o.slab_stacks = 8;
    stack_pool pool(64 * kib, o);
    stack a, b;
    ASSERT_EQ(pool.acquire(0, nullptr, &a), 0);    // carves a slab of 8
    ASSERT_EQ(pool.acquire(mib, nullptr, &b), 0);  // a mapping of its own
    struct seen {
        std::size_t pooled = 0, own = 0;
        bool found_a = false, found_b = false;
        const stack* a;
        const stack* b;
    } st;
    st.a = &a;
    st.b = &b;
    pool.for_each_stack(
        [](const stack& s, void* ctx) {
            auto* v = static_cast<seen*>(ctx);
            (s.pooled ? v->pooled : v->own) += 1;
            v->found_a |= s.lo == v->a->lo && s.size == v->a->size;
            v->found_b |= s.lo == v->b->lo && s.size == v->b->size;
        },
        &st);
    EXPECT_EQ(st.pooled, 8u);
    EXPECT_EQ(st.own, 1u);
    EXPECT_TRUE(st.found_a);
    EXPECT_TRUE(st.found_b);
    pool.release(a, nullptr);
    pool.release(b, nullptr);
}

// --- canaries -------------------------------------------------------------------
TEST(arch_stack, canary_stacks_discarded_and_rearmed) {
    stack_pool_options o;
    o.guard = guard_policy::canary;
    o.warm_max = 0;  // every stack released to the shared list is discarded
    o.cache_max = 4;
    o.batch = 4;
    stack_pool pool(64 * kib, o);
    stack_cache cache;
    std::vector<stack> v(100);
    for (auto& s : v) {
        ASSERT_EQ(pool.acquire(0, &cache, &s), 0);
        ASSERT_TRUE(weft::arch::stack_canary_intact(s));
        std::memset(s.lo, 1, s.size);
    }
    for (auto& s : v) pool.release(s, &cache);
    pool.drain(&cache);
    // A free canary stack keeps nothing resident, its canary page included...
    std::size_t resident = 0;
    for (auto& s : v) resident += resident_pages(static_cast<char*>(s.lo) - guard(), s.size + guard());
    EXPECT_EQ(resident, 0u);
    // ...and every stack handed out again has its canary back.
    for (auto& s : v) {
        ASSERT_EQ(pool.acquire(0, &cache, &s), 0);
        EXPECT_TRUE(weft::arch::stack_canary_intact(s));
    }
    for (auto& s : v) pool.release(s, &cache);
    pool.drain(&cache);
}

TEST(arch_stack, canary_detects_overwrite) {
    stack_pool_options o;
    o.guard = guard_policy::canary;
    stack_pool pool(64 * kib, o);
    stack s;
    ASSERT_EQ(pool.acquire(0, nullptr, &s), 0);
    ASSERT_EQ(s.guard, guard_kind::canary);
    EXPECT_TRUE(weft::arch::stack_canary_intact(s));
    std::memset(s.lo, 0, s.size);  // using every usable byte is not an overflow
    EXPECT_TRUE(weft::arch::stack_canary_intact(s));
    static_cast<volatile char*>(s.lo)[-3] = 0;  // one byte past the bottom is
    EXPECT_FALSE(weft::arch::stack_canary_intact(s));
    pool.release(s, nullptr);
}

// --- which faults are overflows ----------------------------------------------------
TEST(arch_stack, guard_is_64k_or_a_page) {
    EXPECT_EQ(guard(), std::max<std::size_t>(64 * kib, page()));
    EXPECT_EQ(guard() % page(), 0u);
}

TEST(arch_stack, fault_in_guard_region_is_overflow) {
    using weft::arch::stack_fault_is_overflow;
    char* lo = reinterpret_cast<char*>(std::uintptr_t{1} << 40);
    char* sp_inside = lo + 4096;
    // Rule 1: anywhere in the guard region, whatever the stack pointer.
    EXPECT_TRUE(stack_fault_is_overflow(lo, lo - 1, sp_inside));
    EXPECT_TRUE(stack_fault_is_overflow(lo, lo - guard(), sp_inside));
    EXPECT_TRUE(stack_fault_is_overflow(lo, lo - guard(), nullptr));
    // Not below the stack: never.
    EXPECT_FALSE(stack_fault_is_overflow(lo, lo, lo - mib));
    EXPECT_FALSE(stack_fault_is_overflow(lo, lo + 100, sp_inside));
    // Below the guard with the stack pointer inside the stack: a wild access.
    EXPECT_FALSE(stack_fault_is_overflow(lo, lo - guard() - 1, sp_inside));
    EXPECT_FALSE(stack_fault_is_overflow(lo, nullptr, sp_inside));
    EXPECT_FALSE(stack_fault_is_overflow(nullptr, lo - 1, sp_inside));
}

TEST(arch_stack, fault_by_a_frame_below_the_stack_is_overflow) {
    using weft::arch::stack_fault_is_overflow;
    char* lo = reinterpret_cast<char*>(std::uintptr_t{1} << 40);
    // Rule 2: sp below the stack (a frame larger than the guard, unprobed),
    // the access at or above sp (a push just below it included).
    char* sp = lo - mib;
    EXPECT_TRUE(stack_fault_is_overflow(lo, sp, sp));
    EXPECT_TRUE(stack_fault_is_overflow(lo, sp - 8, sp));
    EXPECT_TRUE(stack_fault_is_overflow(lo, sp + 300 * kib, sp));
    EXPECT_TRUE(stack_fault_is_overflow(lo, lo - guard() - 1, sp));
    // ...but not an access far below sp (a wild pointer), nor above the stack's bottom.
    EXPECT_FALSE(stack_fault_is_overflow(lo, sp - 2 * page(), sp));
    EXPECT_FALSE(stack_fault_is_overflow(lo, nullptr, sp));
    // ...and not with sp further below than any stack weft gives (1 GiB): that
    // flow runs on some other stack.
    char* far = lo - (std::size_t{2} << 30);
    EXPECT_FALSE(stack_fault_is_overflow(lo, far, far));
}

TEST(arch_stack, stack_pointer_below_the_stack_is_seen) {
    char here = 0;
    auto sp = reinterpret_cast<std::uintptr_t>(&here);
    auto at = [](std::uintptr_t a) { return reinterpret_cast<void*>(a); };
    stack above{at(sp + 4096), 4096, guard_kind::madvise_guard, false};  // the running sp is below it
    stack around{at(sp - 4096), 64 * kib, guard_kind::madvise_guard, false};
    EXPECT_TRUE(weft::arch::stack_pointer_below(above));
    EXPECT_FALSE(weft::arch::stack_pointer_below(around));
    EXPECT_FALSE(weft::arch::stack_pointer_below(stack{}));  // a flow without a weft stack
}

// --- overflow reporting (each case in a child process) -------------------------
struct overflow_fixture {
    stack st;
    weft::arch::context main_ctx;
    weft::arch::context fiber_ctx;
    weft::arch::san_fiber main_san;
    weft::arch::san_fiber fiber_san;
};
overflow_fixture* g_of = nullptr;
volatile bool g_keep_going = true;

bool lookup_test_stack(weft::arch::overflow_info* out) {
    if (g_of == nullptr) return false;
    out->thread_id = 42;
    out->thread_name = "deep-recursion";
    out->stack_size = g_of->st.size;
    out->stack_lo = g_of->st.lo;
    return true;
}

[[gnu::noinline]] int runaway(int depth) {
    volatile char frame[200];
    frame[0] = static_cast<char>(depth);
    int r = g_keep_going ? runaway(depth + 1) : 0;  // not a tail call: frames pile up
    return r + frame[0];
}

void overflow_entry(void*) {
    weft::arch::san_after_switch(&g_of->fiber_san);
    runaway(0);
    __builtin_trap();
}

// Runs a thread that overflows a stack from `pool` (in the child).
void overflow_in_child(const stack_pool_options& o) {
    static stack_pool pool(64 * kib, o);
    static overflow_fixture f;
    g_of = &f;
    if (pool.acquire(0, nullptr, &f.st) != 0) std::_Exit(3);
    if (weft::arch::enable_alt_signal_stack() != 0) std::_Exit(4);
    weft::arch::install_overflow_handler(&lookup_test_stack);
    weft::arch::make_context(&f.fiber_ctx, f.st.lo, f.st.size, &overflow_entry);
    weft::arch::san_fiber_init_current(&f.main_san);
    weft::arch::san_fiber_create(&f.fiber_san, f.st.lo, f.st.size);
    weft::arch::san_before_switch(&f.main_san, &f.fiber_san, false);
    weft::arch::switch_context(&f.main_ctx, &f.fiber_ctx, nullptr);
    std::_Exit(5);  // unreachable: the overflow must end the process
}

const char* const overflow_message =
    "weft: stack overflow in thread 42 \\(deep-recursion\\): its stack is 65536 bytes; raise "
    "WEFT_STACK_SIZE or use weft_attr_setstacksize";

TEST(arch_stack, guard_hit_reports_overflow_and_aborts) {
    // Re-exec the binary for the child: the test process may have other
    // threads (sanitizer or runtime workers) that a plain fork would not copy.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(overflow_in_child(stack_pool_options{}), ::testing::KilledBySignal(SIGABRT), overflow_message);
}

TEST(arch_stack, mprotect_guard_hit_reports_overflow_and_aborts) {
    // Re-exec the binary for the child: the test process may have other
    // threads (sanitizer or runtime workers) that a plain fork would not copy.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    stack_pool_options o;
    o.guard = guard_policy::mprotect;
    EXPECT_EXIT(overflow_in_child(o), ::testing::KilledBySignal(SIGABRT), overflow_message);
}

// A fault that is no guard hit goes to the previous disposition: the default
// action (death by SIGSEGV), or, under a sanitizer, the sanitizer's SEGV report.
bool died_of_segv_not_abort(int status) {
#if defined(WEFT_SAN_ASAN) || defined(WEFT_SAN_TSAN)
    if (WIFEXITED(status)) return WEXITSTATUS(status) != 0;
#endif
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

TEST(arch_stack, foreign_fault_goes_to_previous_handler) {
    // Re-exec the binary for the child: the test process may have other
    // threads (sanitizer or runtime workers) that a plain fork would not copy.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            g_of = nullptr;
            weft::arch::install_overflow_handler(&lookup_test_stack);
            (void)weft::arch::enable_alt_signal_stack();
            *static_cast<volatile int*>(::mmap(nullptr, page(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) = 1;
        },
        died_of_segv_not_abort, "");
}

void report_canary_hit() {
    weft::arch::overflow_info info{7, "", 12345};
    weft::arch::report_stack_overflow(info, guard_kind::canary);
}

TEST(arch_stack, canary_report_format) {
    // Re-exec the binary for the child: the test process may have other
    // threads (sanitizer or runtime workers) that a plain fork would not copy.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        report_canary_hit(), ::testing::KilledBySignal(SIGABRT),
        "weft: stack overflow in thread 7 \\(unnamed\\): its stack is 12345 bytes \\(canary overwritten\\); raise "
        "WEFT_STACK_SIZE or use weft_attr_setstacksize");
}

}  // namespace
