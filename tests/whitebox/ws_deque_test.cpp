// ws_deque (src/sched/ws_deque.hpp), whitebox, one thread at a time:
// requirement tests of the sequential specification (owner LIFO at the
// bottom, FIFO steals at the top, growth that keeps every item and its order).
// Each case runs with several initial capacities (log2 = 1, 2, 8), so that the
// small ones grow many times and wrap around the ring in every test.
// The concurrent linearizability test is tests/stress/ws_deque_stress_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>
#include <vector>

#include "sched/ws_deque.hpp"

namespace {

using weft::detail::steal_status;
using weft::detail::ws_deque;

struct item {
    int id;
};

class WsDeque : public ::testing::TestWithParam<unsigned> {
protected:
    // Items live here; the deque holds pointers to them.
    std::vector<item> items_ = make_items(4096);
    static std::vector<item> make_items(int n) {
        std::vector<item> v(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)].id = i;
        return v;
    }
    item* at(int i) { return &items_[static_cast<std::size_t>(i)]; }
};

// requirement: an empty deque pops and steals nothing.
TEST_P(WsDeque, empty) {
    ws_deque<item> d(GetParam());
    EXPECT_EQ(d.pop(), nullptr);
    item* out = nullptr;
    EXPECT_EQ(d.steal(out), steal_status::empty);
    EXPECT_EQ(d.steal_until_empty(), nullptr);
    EXPECT_EQ(d.size_hint(), 0);
    // Popping an empty deque must leave it usable (pop's restore path).
    d.push(at(7));
    EXPECT_EQ(d.pop(), at(7));
    EXPECT_EQ(d.pop(), nullptr);
}

// requirement: the owner alone sees a stack (LIFO).
TEST_P(WsDeque, owner_lifo) {
    ws_deque<item> d(GetParam());
    for (int i = 0; i < 100; ++i) d.push(at(i));
    EXPECT_EQ(d.size_hint(), 100);
    for (int i = 99; i >= 0; --i) ASSERT_EQ(d.pop(), at(i)) << "pop #" << (99 - i);
    EXPECT_EQ(d.pop(), nullptr);
    EXPECT_EQ(d.size_hint(), 0);
}

// requirement: steals see a queue (FIFO), oldest first.
TEST_P(WsDeque, steal_fifo) {
    ws_deque<item> d(GetParam());
    for (int i = 0; i < 100; ++i) d.push(at(i));
    for (int i = 0; i < 100; ++i) {
        item* out = nullptr;
        ASSERT_EQ(d.steal(out), steal_status::success) << "steal #" << i;
        ASSERT_EQ(out, at(i));
    }
    item* out = nullptr;
    EXPECT_EQ(d.steal(out), steal_status::empty);
    EXPECT_EQ(d.pop(), nullptr);
}

// requirement: pops and steals take from opposite ends and meet in the middle
// without losing or repeating the item where they meet.
TEST_P(WsDeque, both_ends_meet) {
    ws_deque<item> d(GetParam());
    for (int i = 0; i < 11; ++i) d.push(at(i));
    std::vector<int> seen;
    for (int k = 0; k < 11; ++k) {
        item* x = (k % 2 == 0) ? d.steal_until_empty() : d.pop();
        ASSERT_NE(x, nullptr);
        seen.push_back(x->id);
    }
    // Steals take 0,1,2,... from the top; pops take 10,9,... from the bottom.
    EXPECT_EQ(seen, (std::vector<int>{0, 10, 1, 9, 2, 8, 3, 7, 4, 6, 5}));
    EXPECT_EQ(d.pop(), nullptr);
    EXPECT_EQ(d.steal_until_empty(), nullptr);
}

// requirement: growth keeps every item and both orders, also when the live
// range wraps around the ring (top and bottom far past the capacity).
TEST_P(WsDeque, growth_keeps_order_across_wraparound) {
    ws_deque<item> d(GetParam());
    const std::int64_t cap0 = d.capacity();
    // Move top and bottom far past the initial capacity (wrapping the ring
    // several times) without growing: push/steal pairs.
    for (int i = 0; i < 5 * static_cast<int>(cap0) + 3; ++i) {
        d.push(at(i % 64));
        ASSERT_EQ(d.steal_until_empty(), at(i % 64));
    }
    EXPECT_EQ(d.capacity(), cap0) << "push/steal pairs must not grow the array";
    // Now fill well past the capacity: the array must double, keeping the order.
    const int n = 8 * static_cast<int>(cap0) + 5;
    for (int i = 0; i < n; ++i) d.push(at(100 + i));
    EXPECT_GE(d.capacity(), n);
    EXPECT_EQ(d.size_hint(), n);
    // Half from each end.
    for (int i = 0; i < n / 2; ++i) ASSERT_EQ(d.steal_until_empty(), at(100 + i));
    for (int i = n - 1; i >= n / 2; --i) ASSERT_EQ(d.pop(), at(100 + i));
    EXPECT_EQ(d.pop(), nullptr);
}

// requirement: growth happens exactly when the array is full, and a deque of
// 2^k slots holds 2^k items without growing.
TEST_P(WsDeque, grows_only_when_full) {
    ws_deque<item> d(GetParam());
    const std::int64_t cap0 = d.capacity();
    EXPECT_EQ(cap0, std::int64_t(1) << (GetParam() < 1 ? 1 : GetParam()));
    for (std::int64_t i = 0; i < cap0; ++i) d.push(at(static_cast<int>(i % 4096)));
    EXPECT_EQ(d.capacity(), cap0);
    d.push(at(0));
    EXPECT_EQ(d.capacity(), 2 * cap0);
}

// requirement: a random sequence of owner operations and (same-thread)
// steals matches a std::deque model exactly.
TEST_P(WsDeque, matches_sequential_model) {
    ws_deque<item> d(GetParam());
    std::deque<item*> model;
    std::mt19937 rng(12345 + GetParam());
    int next = 0;
    for (int step = 0; step < 200000; ++step) {
        unsigned op = rng() % 8;
        if (op < 4) {  // push, biased so that the deque grows and shrinks
            item* x = at(next++ % 4096);
            d.push(x);
            model.push_back(x);
        } else if (op < 6) {
            item* got = d.pop();
            item* want = model.empty() ? nullptr : model.back();
            if (!model.empty()) model.pop_back();
            ASSERT_EQ(got, want) << "pop at step " << step;
        } else {
            item* got = d.steal_until_empty();
            item* want = model.empty() ? nullptr : model.front();
            if (!model.empty()) model.pop_front();
            ASSERT_EQ(got, want) << "steal at step " << step;
        }
        ASSERT_EQ(d.size_hint(), static_cast<std::int64_t>(model.size()));
    }
}

INSTANTIATE_TEST_SUITE_P(log2_capacity, WsDeque, ::testing::Values(1u, 2u, 8u),
                         [](const ::testing::TestParamInfo<unsigned>& p) {
                             return "log2_capacity_" + std::to_string(p.param);
                         });

}  // namespace
