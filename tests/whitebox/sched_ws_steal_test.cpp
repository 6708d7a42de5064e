// The ws policy (src/sched/ws.cpp) on two workers: steals and their
// statistics, every node of a fork tree run once, a mutex across workers, a
// pinned parent's children (suite SchedWsConcurrency, the TSan set). Behaviour
// only: counts and orders, never timings.
#include "sched_ws_support.hpp"

namespace {

using namespace ws_test;

// requirement: on two workers the second one steals (the parent's
// continuation) and weft_stats_get reports the steals; weft_stats_reset
// clears them.
TEST(SchedWsConcurrency, two_workers_steal_and_report_steals) {
    START_RUNTIME("ws", 2);
    ASSERT_EQ(weft_stats_reset(), 0);
    weft_stats_t s{};
    // On a loaded machine the second worker may not get a CPU during one
    // tree: repeat (bounded) until it has stolen.
    on_weft_thread([&] {
        for (int i = 0; i < 200; ++i) {
            ASSERT_EQ(run_spin_tree(10), 1u << 10);
            ASSERT_EQ(weft_stats_get(&s), 0);
            if (s.steals > 0) break;
        }
    });
    EXPECT_GT(s.steals, 0u);
    EXPECT_GT(s.threads_created, 0u);
    ASSERT_EQ(weft_stats_reset(), 0);
    ASSERT_EQ(weft_stats_get(&s), 0);
    EXPECT_EQ(s.steals, 0u);
    EXPECT_EQ(s.failed_steals, 0u);
}

// requirement: the recorded fork tree on two workers runs every node once and
// each node's events in its own order (the interleaving differs).
TEST(SchedWsConcurrency, two_workers_run_every_node_once) {
    const std::vector<std::uint32_t> serial = run_tree(tree_depth, true);
    START_RUNTIME("ws", 2);
    std::vector<std::uint32_t> got;
    on_weft_thread([&] { got = run_tree(tree_depth, false); });
    ASSERT_EQ(got.size(), serial.size());
    std::vector<std::uint32_t> a = got, b = serial;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b);
    // Per node: start before its joins, joins in order 0, 1, 2.
    std::vector<int> pos(4 * tree_nodes, -1);  // events are 0 .. 4 * nodes - 1
    for (std::size_t i = 0; i < got.size(); ++i) pos[got[i]] = static_cast<int>(i);
    for (std::uint32_t id = 0; id < tree_nodes; ++id) {
        if (pos[ev_joined(id, 0)] < 0) continue;  // a leaf
        EXPECT_LT(pos[ev_start(id)], pos[ev_joined(id, 0)]);
        EXPECT_LT(pos[ev_joined(id, 0)], pos[ev_joined(id, 1)]);
        EXPECT_LT(pos[ev_joined(id, 1)], pos[ev_joined(id, 2)]);
        // A child's start precedes the parent's join of it.
        for (std::uint32_t k = 0; k < 3; ++k) EXPECT_LT(pos[ev_start(id * 3 + 1 + k)], pos[ev_joined(id, k)]);
    }
}

// Blocking primitives keep working under ws: a contended mutex across workers.
struct counter_arg {
    weft_mutex_t* m;
    std::uint64_t* value;
    int iters;
};
void* add_locked(void* p) {
    auto* a = static_cast<counter_arg*>(p);
    for (int i = 0; i < a->iters; ++i) {
        EXPECT_EQ(weft_mutex_lock(a->m), 0);
        ++*a->value;
        EXPECT_EQ(weft_mutex_unlock(a->m), 0);
        if (i % 64 == 0) {
            EXPECT_EQ(weft_thread_yield(), 0);
        }
    }
    return nullptr;
}

TEST(SchedWsConcurrency, mutex_counter_across_workers) {
    START_RUNTIME("ws", 2);
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    std::uint64_t value = 0;
    constexpr int nthreads = 32, iters = 2000;
    counter_arg arg{&m, &value, iters};
    on_weft_thread([&] {
        weft_thread_t t[nthreads];
        for (auto& x : t) x = spawn(add_locked, &arg);
        for (auto x : t) join(x);
    });
    EXPECT_EQ(value, static_cast<std::uint64_t>(nthreads) * iters);
}

// Two threads that spin (never yielding) until both run at the same time:
// possible only if they are on different workers.
struct rendezvous {
    std::atomic<int> arrived{0};
    std::atomic<int> met{0};
};
void* meet(void* p) {
    auto* r = static_cast<rendezvous*>(p);
    r->arrived.fetch_add(1);
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (r->arrived.load() < 2)
        if (std::chrono::steady_clock::now() > give_up) return nullptr;
    r->met.fetch_add(1);
    return nullptr;
}

// requirement: a pinned parent's continuation cannot be stolen (the core
// queues it in its worker's inbox), so the core does not let its child
// preempt it (policy.hpp, "Pinned ults"): the children go to the deque, where
// the other worker steals one. Work-first would run the first child here
// while the parent sat in the inbox, and the second child would never be
// spawned.
TEST(SchedWsConcurrency, pinned_parent_spawns_help_first) {
    START_RUNTIME("ws", 2);
    rendezvous r;
    on_weft_thread([&] {
        weft::detail::ult* self = weft::detail::current_ult();
        self->pinned_worker = weft_worker_id();
        weft_thread_t a = spawn(meet, &r);
        weft_thread_t b = spawn(meet, &r);
        join(a);
        join(b);
        self->pinned_worker = -1;
    });
    EXPECT_EQ(r.met.load(), 2) << "the two children never ran at the same time";
}

}  // namespace
