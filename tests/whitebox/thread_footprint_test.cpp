// What a live weft thread keeps resident (docs/design/stacks-and-context.md,
// "What a live thread costs"): a thread that runs a small function and blocks
// has its control block and every frame down to the switch in the top page of
// its stack, so a hundred thousand such threads cost a page each (issue 27's
// million_threads). Counted with mincore on a stack of its own mapping (a size
// above the default), which no earlier thread has touched.
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "core/runtime.hpp"
#include "core/ult.hpp"
#include "support/weft_test.hpp"

namespace {

class ThreadFootprint : public wt::single_runtime_fixture {};

struct gate {
    weft_sem_t sem;
    std::atomic<int> waiting{0};
};

std::size_t page_size() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }

// Resident pages of [lo, hi), by mincore.
std::size_t resident_pages(void* lo, void* hi) {
    std::size_t const pg = page_size();
    std::size_t const len = static_cast<char*>(hi) - static_cast<char*>(lo);
    std::vector<unsigned char> v((len + pg - 1) / pg);
    if (::mincore(lo, len, v.data()) != 0) return ~std::size_t{0};
    std::size_t n = 0;
    for (unsigned char c : v) n += c & 1;
    return n;
}

// A small function that blocks, as million_threads' threads do.
void* count_and_wait(void* arg) {
    auto* g = static_cast<gate*>(arg);
    g->waiting.fetch_add(1, std::memory_order_relaxed);
    weft_sem_wait(&g->sem);
    return arg;
}

// A leaf: no call below the thread's entry.
void* leaf(void* arg) {
    auto* g = static_cast<gate*>(arg);
    g->waiting.fetch_add(1, std::memory_order_relaxed);
    return arg;
}

weft_attr_t own_mapping_attr() {
    weft_attr_t a;
    weft_attr_init(&a);
    // Above the default size: a fresh mapping of its own, unmapped at the join.
    weft_attr_setstacksize(&a, 2 * weft::detail::g_rt->cfg.stack_size);
    return a;
}

TEST_F(ThreadFootprint, thread_blocked_in_a_small_function_keeps_one_stack_page) {
    gate g;
    ASSERT_EQ(weft_sem_init(&g.sem, 0), 0);
    weft_attr_t const a = own_mapping_attr();
    weft_thread_t t = WEFT_THREAD_NULL;
    ASSERT_EQ(weft_thread_create(&t, &a, &count_and_wait, &g), 0);
    while (g.waiting.load(std::memory_order_relaxed) == 0) ASSERT_EQ(weft_thread_yield(), 0);
    weft::detail::ult* u = weft::detail::g_rt->handles.resolve(t);
    ASSERT_NE(u, nullptr);
    ASSERT_FALSE(u->stack.pooled) << "the test needs a stack no earlier thread touched";
    std::size_t const pages = resident_pages(u->stack.lo, u->stack.hi());
    EXPECT_EQ(pages, 1u) << "a thread blocked on a semaphore from its start routine has " << pages
                         << " pages of its stack resident; its control block and frames should fit in the top one";
    ASSERT_EQ(weft_sem_post(&g.sem), 0);
    void* r = nullptr;
    ASSERT_EQ(weft_thread_join(t, &r), 0);
    EXPECT_EQ(r, &g);
    ASSERT_EQ(weft_sem_destroy(&g.sem), 0);
}

TEST_F(ThreadFootprint, thread_that_ran_a_leaf_kept_one_stack_page) {
    gate g;
    weft_attr_t a = own_mapping_attr();
    weft_attr_setdetachstate(&a, WEFT_CREATE_JOINABLE);
    weft_thread_t t = WEFT_THREAD_NULL;
    ASSERT_EQ(weft_thread_create(&t, &a, &leaf, &g), 0);
    while (g.waiting.load(std::memory_order_relaxed) == 0) ASSERT_EQ(weft_thread_yield(), 0);
    // Ended, not joined: its stack stays mapped until the join.
    weft::detail::ult* u = weft::detail::g_rt->handles.resolve(t);
    ASSERT_NE(u, nullptr);
    while (u->join_word.load(std::memory_order_acquire) == weft::detail::join_running ||
           u->join_word.load(std::memory_order_acquire) == weft::detail::join_exiting)
        ASSERT_EQ(weft_thread_yield(), 0);
    std::size_t const pages = resident_pages(u->stack.lo, u->stack.hi());
    EXPECT_EQ(pages, 1u) << "a thread that ran a leaf function and ended touched " << pages
                         << " pages of its stack; its control block and frames should fit in the top one";
    void* r = nullptr;
    ASSERT_EQ(weft_thread_join(t, &r), 0);
    EXPECT_EQ(r, &g);
}

}  // namespace
