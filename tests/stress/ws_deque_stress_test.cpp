// ws_deque (src/sched/ws_deque.hpp) under concurrency: one owner pushing and
// popping, several thief std::threads stealing (stress; in the TSan set, as
// is all of tests/stress). Checks, linearizability-style:
//   - every pushed item is taken (popped or stolen) exactly once: each item
//     carries an atomic "taken" counter that must go from 0 to 1, never to 2;
//   - the taker sees what the owner wrote into the item before pushing it (a
//     plain, non-atomic payload: under TSan a missing happens-before edge in
//     the deque is reported as a data race on it);
//   - each thief's successful steals return items in push order (steals
//     linearize at increasing top indices, and an item at a higher index was
//     pushed later), i.e. the top end is FIFO even with pops and growth
//     interleaved;
//   - growth while thieves steal (small initial arrays) loses nothing;
//   - the races at the bottom (the owner popping the last one, two or three
//     items while thieves steal them) never hand an item out twice.
// Timings are never asserted.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "sched/ws_deque.hpp"

namespace {

using weft::detail::steal_status;
using weft::detail::ws_deque;

#if defined(__SANITIZE_THREAD__)
constexpr int scale = 4;  // TSan runs each atomic op ~10-50x slower
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr int scale = 4;
#else
constexpr int scale = 1;
#endif
#else
constexpr int scale = 1;
#endif

struct item {
    std::uint64_t id = 0;
    std::uint64_t payload = 0;  // plain: written by the owner before push
    std::atomic<int> taken{0};  // how many takers got this item
};

constexpr std::uint64_t payload_of(std::uint64_t id) { return id * 0x9e3779b97f4a7c15ull + 1; }

struct params {
    int thieves;
    unsigned log2_capacity;
    int items;
};

std::string name_of(const ::testing::TestParamInfo<params>& p) {
    return "thieves_" + std::to_string(p.param.thieves) + "_log2_capacity_" + std::to_string(p.param.log2_capacity);
}

// What one taker (a thief, or the owner's pops) saw.
struct tally {
    std::uint64_t taken = 0;
    std::uint64_t bad_payload = 0;
    std::uint64_t out_of_order = 0;  // thieves: an id not above the previous one
    std::uint64_t lost_races = 0;
};

// Marks x taken by this taker; returns false if another taker had it.
bool take(item* x, tally& t) {
    if (x->payload != payload_of(x->id)) ++t.bad_payload;
    ++t.taken;
    return x->taken.fetch_add(1, std::memory_order_relaxed) == 0;
}

class WsDequeStressConcurrency : public ::testing::TestWithParam<params> {};

// stress: bursts of pushes with interleaved pops by the owner, steals by
// every thief; every item taken exactly once, FIFO per thief.
TEST_P(WsDequeStressConcurrency, every_item_taken_exactly_once) {
    const params p = GetParam();
    const int n = p.items / scale;
    std::unique_ptr<item[]> items(new item[static_cast<std::size_t>(n)]);
    ws_deque<item> d(p.log2_capacity);
    std::atomic<bool> done{false};
    std::atomic<int> started{0};
    std::atomic<std::uint64_t> duplicates{0};
    std::vector<tally> tallies(static_cast<std::size_t>(p.thieves) + 1);

    std::vector<std::thread> thieves;
    for (int k = 0; k < p.thieves; ++k) {
        thieves.emplace_back([&, k] {
            tally& t = tallies[static_cast<std::size_t>(k) + 1];
            std::uint64_t last = 0;
            bool any = false;
            started.fetch_add(1);
            // The owner sets done only once its deque is empty for good (only
            // the owner adds items), so this loop misses nothing.
            while (!done.load(std::memory_order_acquire) || d.size_hint() > 0) {
                item* x = nullptr;
                switch (d.steal(x)) {
                case steal_status::success:
                    if (any && x->id <= last) ++t.out_of_order;
                    last = x->id;
                    any = true;
                    if (!take(x, t)) duplicates.fetch_add(1);
                    break;
                case steal_status::lost_race: ++t.lost_races; break;
                case steal_status::empty:
                    // Arora, Blumofe & Plaxton: yield between failed attempts (and let the
                    // owner run when there are more threads than cores).
                    std::this_thread::yield();
                    break;
                }
            }
        });
    }
    while (started.load() < p.thieves) std::this_thread::yield();

    // The owner: push bursts of 1..256 items, pop a random share of each.
    tally& mine = tallies[0];
    std::mt19937 rng(777 + static_cast<unsigned>(p.thieves));
    int next = 0;
    while (next < n) {
        int burst = 1 + static_cast<int>(rng() % 256);
        for (int i = 0; i < burst && next < n; ++i, ++next) {
            item* x = &items[static_cast<std::size_t>(next)];
            x->id = static_cast<std::uint64_t>(next);
            x->payload = payload_of(x->id);
            d.push(x);
        }
        int pops = static_cast<int>(rng() % static_cast<unsigned>(burst + 1));
        for (int i = 0; i < pops; ++i) {
            item* x = d.pop();
            if (x == nullptr) break;
            if (!take(x, mine)) duplicates.fetch_add(1);
        }
    }
    while (item* x = d.pop())
        if (!take(x, mine)) duplicates.fetch_add(1);
    done.store(true, std::memory_order_release);
    for (auto& t : thieves) t.join();

    std::uint64_t total = 0, bad = 0, disorder = 0, races = 0;
    for (const tally& t : tallies) {
        total += t.taken;
        bad += t.bad_payload;
        disorder += t.out_of_order;
        races += t.lost_races;
    }
    int never = 0, twice = 0;
    for (int i = 0; i < n; ++i) {
        int c = items[static_cast<std::size_t>(i)].taken.load(std::memory_order_relaxed);
        never += (c == 0);
        twice += (c > 1);
    }
    EXPECT_EQ(never, 0) << "items pushed but never taken";
    EXPECT_EQ(twice, 0) << "items taken more than once";
    EXPECT_EQ(duplicates.load(), 0u);
    EXPECT_EQ(total, static_cast<std::uint64_t>(n));
    EXPECT_EQ(bad, 0u) << "a taker saw an item's payload before the owner's write";
    EXPECT_EQ(disorder, 0u) << "a thief's steals were not in push order";
    EXPECT_EQ(d.pop(), nullptr);
    EXPECT_EQ(d.steal_until_empty(), nullptr);
    RecordProperty("owner_pops", std::to_string(mine.taken));
    RecordProperty("lost_races", std::to_string(races));
}

INSTANTIATE_TEST_SUITE_P(owner_and_thieves, WsDequeStressConcurrency,
                         ::testing::Values(params{1, 1, 4'000'000}, params{3, 1, 4'000'000}, params{3, 8, 4'000'000},
                                           params{7, 4, 2'000'000}),
                         name_of);

// stress: the races at the bottom. The owner pushes `depth` items and pops
// them all at once while thieves hammer the top, so that almost every pop
// races with steals: with depth 1 the pop's CAS on top (t == b) and the
// thieves' CAS fight over every item; with depth 2 a pop that takes item b-1
// without a CAS relies on the seq_cst fences of pop and steal (a thief that
// missed the lowered bottom would take the same item). Exactly one taker must
// win each item.
class WsDequeRaceConcurrency : public ::testing::TestWithParam<int> {};

TEST_P(WsDequeRaceConcurrency, bottom_race) {
    const int depth = GetParam();
    const int n = 3'000'000 / scale;
    const int nthieves = 3;
    std::unique_ptr<item[]> items(new item[static_cast<std::size_t>(n)]);
    ws_deque<item> d(1);
    std::atomic<bool> done{false};
    std::atomic<std::uint64_t> stolen{0}, popped{0}, duplicates{0};
    std::vector<std::thread> thieves;
    for (int k = 0; k < nthieves; ++k) {
        thieves.emplace_back([&] {
            tally t;
            while (!done.load(std::memory_order_acquire) || d.size_hint() > 0) {
                item* x = nullptr;
                if (d.steal(x) == steal_status::success) {
                    if (!take(x, t)) duplicates.fetch_add(1);
                    stolen.fetch_add(1, std::memory_order_relaxed);
                }
            }
            EXPECT_EQ(t.bad_payload, 0u);
        });
    }
    tally mine;
    for (int i = 0; i < n; i += depth) {
        for (int j = i; j < i + depth && j < n; ++j) {
            item* x = &items[static_cast<std::size_t>(j)];
            x->id = static_cast<std::uint64_t>(j);
            x->payload = payload_of(x->id);
            d.push(x);
        }
        while (item* y = d.pop()) {
            if (!take(y, mine)) duplicates.fetch_add(1);
            popped.fetch_add(1, std::memory_order_relaxed);
        }
    }
    done.store(true, std::memory_order_release);
    for (auto& t : thieves) t.join();
    int never = 0, twice = 0;
    for (int i = 0; i < n; ++i) {
        int c = items[static_cast<std::size_t>(i)].taken.load(std::memory_order_relaxed);
        never += (c == 0);
        twice += (c > 1);
    }
    EXPECT_EQ(never, 0);
    EXPECT_EQ(twice, 0);
    EXPECT_EQ(duplicates.load(), 0u);
    EXPECT_EQ(stolen.load() + popped.load(), static_cast<std::uint64_t>(n));
    EXPECT_EQ(mine.bad_payload, 0u);
    EXPECT_LE(d.capacity(), 2 * depth) << "the deque never holds more than depth items";
    RecordProperty("stolen", std::to_string(stolen.load()));
    RecordProperty("popped", std::to_string(popped.load()));
}

INSTANTIATE_TEST_SUITE_P(items_at_once, WsDequeRaceConcurrency, ::testing::Values(1, 2, 3),
                         [](const ::testing::TestParamInfo<int>& p) { return "depth_" + std::to_string(p.param); });

}  // namespace
