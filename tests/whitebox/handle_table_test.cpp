// Class: requirement, whitebox. The handle table (src/core/handle.hpp) on its
// own: handles are (index, generation), a released slot's handles are stale,
// a claim is granted once, and a slot whose generation is used up is retired.
#include <cerrno>
#include <cstdint>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "core/handle.hpp"

namespace {

using weft::detail::handle_cache;
using weft::detail::handle_generation;
using weft::detail::handle_generation_max;
using weft::detail::handle_index;
using weft::detail::handle_table;
using weft::detail::ult;

ult* fake(std::uintptr_t n) { return reinterpret_cast<ult*>(n * 64); }  // never dereferenced

TEST(HandleTable, handle_names_its_thread_until_released) {
    handle_table table(1);
    handle_cache cache;
    weft_thread_t h = table.acquire(&cache, fake(1), false);
    ASSERT_NE(h, WEFT_THREAD_NULL);
    EXPECT_EQ(handle_generation(h), 1u);
    EXPECT_EQ(table.resolve(h), fake(1));
    table.release(&cache, h);
    EXPECT_EQ(table.resolve(h), nullptr);
    ult* out = nullptr;
    EXPECT_EQ(table.claim(h, &out), ESRCH);
}

TEST(HandleTable, reused_slot_has_the_next_generation) {
    handle_table table(1);
    handle_cache cache;
    weft_thread_t a = table.acquire(&cache, fake(1), false);
    table.release(&cache, a);
    weft_thread_t b = table.acquire(&cache, fake(2), false);
    EXPECT_EQ(handle_index(a), handle_index(b)) << "the worker's cache hands the freed slot back first";
    EXPECT_EQ(handle_generation(b), handle_generation(a) + 1);
    EXPECT_EQ(table.resolve(a), nullptr);
    EXPECT_EQ(table.resolve(b), fake(2));
    ult* out = nullptr;
    EXPECT_EQ(table.claim(a, &out), ESRCH);
    EXPECT_EQ(out, nullptr);
    EXPECT_EQ(table.claim(b, &out), 0);
    EXPECT_EQ(out, fake(2));
}

TEST(HandleTable, claim_is_granted_once) {
    handle_table table(1);
    handle_cache cache;
    weft_thread_t h = table.acquire(&cache, fake(3), false);
    ult* out = nullptr;
    EXPECT_EQ(table.claim(h, &out), 0);
    EXPECT_EQ(table.claim(h, &out), EINVAL);
    EXPECT_EQ(table.resolve(h), fake(3)) << "a claimed thread is still there for names and ids";
    weft_thread_t d = table.acquire(&cache, fake(4), /*claimed=*/true);
    EXPECT_EQ(table.claim(d, &out), EINVAL) << "created claimed (detached, main, idle)";
}

TEST(HandleTable, garbage_handles_are_stale) {
    handle_table table(1);
    handle_cache cache;
    (void)table.acquire(&cache, fake(5), false);
    ult* out = nullptr;
    // An index never handed out, in a chunk that exists and in one that does not.
    EXPECT_EQ(table.claim(reinterpret_cast<weft_thread_t>(std::uintptr_t(1) << 24 | 900), &out), ESRCH);
    EXPECT_EQ(table.claim(reinterpret_cast<weft_thread_t>(std::uintptr_t(1) << 24 | 0xfffffe), &out), ESRCH);
    EXPECT_EQ(table.resolve(reinterpret_cast<weft_thread_t>(~std::uintptr_t(0))), nullptr);
}

TEST(HandleTable, a_used_up_slot_is_retired) {
    handle_table table(handle_generation_max - 1);
    handle_cache cache;
    weft_thread_t a = table.acquire(&cache, fake(1), false);
    table.release(&cache, a);
    weft_thread_t b = table.acquire(&cache, fake(2), false);
    ASSERT_EQ(handle_index(b), handle_index(a));
    ASSERT_EQ(handle_generation(b), handle_generation_max);
    table.release(&cache, b);  // no generation left: the slot is never handed out again
    weft_thread_t c = table.acquire(&cache, fake(3), false);
    EXPECT_NE(handle_index(c), handle_index(a));
    EXPECT_EQ(table.resolve(a), nullptr);
    EXPECT_EQ(table.resolve(b), nullptr);
}

TEST(HandleTable, many_live_handles_are_distinct_and_spill_to_the_shared_list) {
    handle_table table(1);
    handle_cache cache;
    std::vector<weft_thread_t> hs;
    for (std::uintptr_t i = 1; i <= 5000; ++i) hs.push_back(table.acquire(&cache, fake(i), false));
    std::set<std::uint32_t> indices;
    for (std::size_t i = 0; i < hs.size(); ++i) {
        indices.insert(handle_index(hs[i]));
        EXPECT_EQ(table.resolve(hs[i]), fake(i + 1));
    }
    EXPECT_EQ(indices.size(), hs.size());
    for (weft_thread_t h : hs) table.release(&cache, h);
    // An external caller (no cache) takes from the shared list the spills filled.
    weft_thread_t e = table.acquire(nullptr, fake(9), false);
    EXPECT_LT(handle_index(e), 5000u);
    EXPECT_EQ(handle_generation(e), 2u);
    for (weft_thread_t h : hs) EXPECT_EQ(table.resolve(h), nullptr);
}

}  // namespace
