// The ws policy (src/sched/ws.cpp) and the spinning worker: futile steals
// from a serial chain end in naps, one thief for a serial chain, work spreads
// from the one spinner to parked workers, and many workers lose no spawn while
// spinners and sleepers come and go. Behaviour only: counts, never timings.
#include "sched_ws_support.hpp"

namespace {

using namespace ws_test;

// requirement: a thief that steals from a serial chain (each continuation
// blocks at its join as soon as it is stolen) stops stealing every spawn: a
// run of futile steals ends in a nap (weft_stats_t.steal_naps), and over the
// chains it steals far fewer continuations than there were spawns. Not in the
// TSan set: a futile steal is one whose thread stops within
// tun::ws_futile_steal_ns, which TSan's slowdown can exceed.
TEST(SchedWs, futile_steals_from_a_serial_chain_end_in_naps) {
    START_RUNTIME("ws", 2);
    constexpr int depth = 7;
    weft_stats_t s{};
    std::uint64_t spawns = 0;
    ASSERT_EQ(weft_stats_reset(), 0);
    // On a loaded machine the second worker may not get a CPU during one
    // chain: repeat (bounded) until it has napped.
    on_weft_thread([&] {
        for (int i = 0; i < 200; ++i) {
            ASSERT_EQ(run_chain(depth), chain_nodes(depth));
            spawns += chain_nodes(depth) - 1;
            ASSERT_EQ(weft_stats_get(&s), 0);
            if (s.steal_naps > 0 && spawns >= 20 * chain_nodes(depth)) break;
        }
    });
    EXPECT_GT(s.steal_naps, 0u);
    EXPECT_LT(s.steals * 8, spawns) << s.steals << " steals for " << spawns << " spawns";
}

// requirement: naps lose nothing: serial chains (which make the thieves nap)
// alternate with parallel trees (which need them), on 2 and 4 workers, and
// every node of both runs once; a parallel tree right after a chain still
// completes although its thieves may be napping (a nap ends by its deadline).
TEST(SchedWsConcurrency, naps_between_serial_chains_and_parallel_trees_lose_nothing) {
    for (int workers : {2, 4}) {
        START_RUNTIME("ws", workers);
        std::uint64_t chain_total = 0, leaves = 0;
        constexpr int chain_depth = 6, tree_depth_ = 8;
        // Under TSan (10x slower) 4 rounds: still three trees that start right
        // after a chain has made the thieves nap.
        constexpr int rounds = wt::tsan ? 4 : 12;
        on_weft_thread([&] {
            for (int r = 0; r < rounds; ++r) {
                chain_total += run_chain(chain_depth);
                leaves += run_spin_tree(tree_depth_);
            }
        });
        EXPECT_EQ(chain_total, rounds * chain_nodes(chain_depth)) << workers << " workers";
        EXPECT_EQ(leaves, static_cast<std::uint64_t>(rounds) << tree_depth_) << workers << " workers";
    }
}

// --- One spinning worker ------------------------------------------------------------
// At most one idle worker looks in the other workers' deques (the spinning
// worker, core/sleep/README.md); a push wakes a parked worker only when none
// spins, and the spinner keeps its role through a run of futile steals.

// requirement: a serial chain on 8 workers (more than this machine's CPUs)
// has one thief, not seven: the workers that run threads are the chain's and
// about one more (the role may pass when the chain moves to its thief), where
// with every idle worker stealing each of the 7 ran hundreds of stolen
// continuations; and wake-ups and steals stay a small fraction of the spawns.
// Counts of switches per worker, never times. Not in the TSan set for the
// reason above (futile steals are judged by time).
TEST(SchedWs, serial_chain_on_eight_workers_has_one_thief) {
    constexpr int workers = 8;
    START_RUNTIME("ws", workers);
    constexpr int depth = 7;
    std::uint64_t spawns = 0;
    on_weft_thread([&] {
        ASSERT_EQ(run_chain(depth), chain_nodes(depth));  // warm-up: the idle workers park
        ASSERT_EQ(weft_stats_reset(), 0);
        for (int i = 0; i < 20; ++i) {
            ASSERT_EQ(run_chain(depth), chain_nodes(depth));
            spawns += chain_nodes(depth) - 1;
        }
    });
    int busy_workers = 0;
    std::string per_worker;
    for (int i = 0; i < workers; ++i) {
        weft_worker_stats_t ws{};
        ASSERT_EQ(weft_worker_stats_get(i, &ws), 0);
        if (ws.context_switches * 200 > spawns) ++busy_workers;
        per_worker += ' ';
        per_worker += std::to_string(ws.context_switches);
    }
    EXPECT_LE(busy_workers, 3) << "switches per worker:" << per_worker << " for " << spawns << " spawns";
    weft_stats_t s{};
    ASSERT_EQ(weft_stats_get(&s), 0);
    EXPECT_LT(s.wakeups * 16, spawns) << s.wakeups << " wake-ups for " << spawns << " spawns";
    EXPECT_LT(s.steals * 8, spawns) << s.steals << " steals for " << spawns << " spawns";
}

// requirement: parallel work still spreads from the one spinner to the parked
// workers (each spinner that finds work wakes the next): on 8 workers, after
// idle gaps in which they park, a wide tree of spinning leaves runs on more
// than 2 of them.
TEST(SchedWsConcurrency, parallel_tree_spreads_from_one_spinner_to_parked_workers) {
    START_RUNTIME("ws", 8);
    constexpr int depth = 10;
    std::atomic<std::uint64_t> seen_mask{0};
    on_weft_thread([&] {
        for (int round = 0; round < 50 && std::popcount(seen_mask.load()) <= 2; ++round) {
            ASSERT_EQ(weft_sleep_ns(2'000'000), 0);  // an idle gap: workers park
            std::atomic<std::uint64_t> leaves{0};
            struct arg {
                int depth;
                std::atomic<std::uint64_t>* leaves;
                std::atomic<std::uint64_t>* mask;
            };
            struct fn {
                static void* run(void* p) {
                    auto* a = static_cast<arg*>(p);
                    if (a->depth == 0) {
                        volatile std::uint64_t x = 0;
                        for (int i = 0; i < 20000; ++i) x = x + static_cast<std::uint64_t>(i);
                        a->mask->fetch_or(std::uint64_t{1} << weft_worker_id(), std::memory_order_relaxed);
                        a->leaves->fetch_add(1, std::memory_order_relaxed);
                        return nullptr;
                    }
                    arg l{a->depth - 1, a->leaves, a->mask}, r{a->depth - 1, a->leaves, a->mask};
                    weft_thread_t t = spawn(run, &l);
                    run(&r);
                    join(t);
                    return nullptr;
                }
            };
            arg root{depth, &leaves, &seen_mask};
            fn::run(&root);
            ASSERT_EQ(leaves.load(), std::uint64_t{1} << depth);
        }
    });
    EXPECT_GT(std::popcount(seen_mask.load()), 2) << "the tree ran on workers " << seen_mask.load();
}

// requirement: work that a kept spinning role holds back is not held back for
// good. A spinner that keeps the role while it runs a thread it stole
// (spinner_keep_ns) lets its victim's pushes made within the keep wake nobody;
// if both threads then busy-wait for that work, and nothing else is pushed,
// only a worker that re-checks the kept role can run it (core/sleep/README.md,
// "The spinning worker", the keep watcher). Whitebox: on 3 workers, with one
// parked, a thread pinned to worker S puts S in the state that the idle loop
// leaves after such a steal from worker V (the role, spin_for = V, a keep of
// 200 ms: long, so that V's push surely falls within it whatever the load),
// then busy-waits on a flag; main, on V, makes a blocked thread ready (a push
// on V's deque) that sets the flag, and busy-waits on it too. The flag must be
// set: by the stolen thread once the keep has run out, within the 20 s that
// main waits (without the watcher it never is: nothing wakes the parked worker).
TEST(SchedWsConcurrency, work_held_back_by_a_kept_role_runs_though_both_threads_busy_wait) {
    using namespace weft::detail;
    constexpr int workers = 3;
    wt::scoped_env no_adapt("WEFT_ADAPT", "off");  // all three workers stay active whatever the load
    START_RUNTIME("ws", workers);
    runtime* rt = g_rt;
    struct shared {
        weft_sem_t sem;
        std::atomic<bool> flag{false};  // set by the held-back thread
        std::atomic<bool> kept{false};  // the pinned thread has put its worker in the keep
        std::atomic<bool> give_up{false};
        std::atomic<int> victim{-1};
    } sh;
    ASSERT_EQ(weft_sem_init(&sh.sem, 0), 0);
    // The thread to hold back: blocks now, made ready later by main's post.
    weft_thread_t setter = spawn(
        [](void* p) -> void* {
            auto* sh = static_cast<shared*>(p);
            EXPECT_EQ(weft_sem_wait(&sh->sem), 0);
            sh->flag.store(true);
            return nullptr;
        },
        &sh);
    // Main runs alone now: the other two workers park. No weft call from here
    // to the post: main must stay on its worker (V).
    const auto settle_by = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (rt->sleepers.load() != workers - 1 || rt->spinner.load() != nullptr) {
        ASSERT_LT(std::chrono::steady_clock::now(), settle_by) << "the idle workers never parked";
        sched_yield();
    }
    const int v = weft_worker_id();
    sh.victim.store(v);
    ult* keeper = nullptr;
    ASSERT_EQ(create_ult(
                  current_worker(), nullptr,
                  [](void* p) -> void* {
                      auto* sh = static_cast<shared*>(p);
                      runtime* rt = g_rt;
                      worker* self = current_worker();
                      // Waking to run this thread, the worker may have taken the role and
                      // handed it on to the parked one: wait until that one parks again.
                      while (rt->sleepers.load() != 1 || rt->spinner.load() != nullptr) sched_yield();
                      worker* none = nullptr;
                      EXPECT_TRUE(rt->spinner.compare_exchange_strong(none, self));
                      self->spin_keep_until.store(monotonic_ns() + 200'000'000);
                      self->spin_for.store(sh->victim.load());
                      sh->kept.store(true);
                      while (!sh->flag.load() && !sh->give_up.load()) {
                      }
                      return nullptr;
                  },
                  &sh, 0, nullptr, &keeper),
              0);
    keeper->pinned_worker = (v + 1) % workers;
    launch_ult(current_worker(), keeper);
    while (!sh.kept.load()) sched_yield();
    ASSERT_EQ(weft_sem_post(&sh.sem), 0);  // the push, on V's deque, within the keep
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!sh.flag.load() && std::chrono::steady_clock::now() < give_up) {
    }
    const bool ran = sh.flag.load();
    sh.give_up.store(true);  // the pinned thread ends; its worker looks, finds the setter, and the test ends
    EXPECT_TRUE(ran) << "the thread that V pushed within the keep did not run in 20 s";
    EXPECT_EQ(join_ult(keeper, nullptr, nullptr, nullptr), 0);
    join(setter);
    EXPECT_EQ(weft_sem_destroy(&sh.sem), 0);
}

// requirement (stress): no spawn and no wake-up is lost while the spinning
// role passes between workers and the others park, nap and wake: on 16
// workers, 16 concurrent spawners each alternate serial chains (the thief
// naps, keeping the role), parallel trees (the role is handed on), yields and
// sleeps (timers; every worker may park), and every node of every run runs
// once. A lost wake-up hangs a join and fails the test by its timeout.
TEST(SchedWsConcurrency, sixteen_workers_lose_no_spawn_while_spinners_and_sleepers_come_and_go) {
    START_RUNTIME("ws", 16);
    constexpr int spawners = 16, rounds = 6, chain_depth = 4, tree_depth_ = 6;
    std::atomic<std::uint64_t> chain_total{0}, leaves{0};
    struct ctx {
        std::atomic<std::uint64_t>* chain_total;
        std::atomic<std::uint64_t>* leaves;
        int id;
    };
    on_weft_thread([&] {
        std::vector<ctx> ctxs;
        for (int i = 0; i < spawners; ++i) ctxs.push_back(ctx{&chain_total, &leaves, i});
        std::vector<weft_thread_t> ts;
        for (auto& c : ctxs)
            ts.push_back(spawn(
                [](void* p) -> void* {
                    auto* c = static_cast<ctx*>(p);
                    for (int r = 0; r < rounds; ++r) {
                        c->chain_total->fetch_add(run_chain(chain_depth), std::memory_order_relaxed);
                        c->leaves->fetch_add(run_spin_tree(tree_depth_), std::memory_order_relaxed);
                        EXPECT_EQ(weft_thread_yield(), 0);
                        if ((r + c->id) % 3 == 0) {
                            EXPECT_EQ(weft_sleep_ns(500'000), 0);
                        }
                    }
                    return nullptr;
                },
                &c));
        for (weft_thread_t t : ts) join(t);
    });
    EXPECT_EQ(chain_total.load(), std::uint64_t{spawners} * rounds * chain_nodes(chain_depth));
    EXPECT_EQ(leaves.load(), (std::uint64_t{spawners} * rounds) << tree_depth_);
}

// requirement: with WEFT_WS_YIELD=off (the idle loop pause-spins between
// failed rounds of steals instead of yielding) and 8 workers, more than this
// machine's CPUs, ws still runs every node of a fork tree once, in each
// node's order, and every leaf of spinning trees, including after idle gaps
// in which workers park. Correctness only: what the yield buys is speed
// (weft-bench oversub).
TEST(SchedWsConcurrency, eight_workers_without_the_yield_compute_the_right_result) {
    const std::vector<std::uint32_t> serial = run_tree(tree_depth, true);
    wt::scoped_env no_yield("WEFT_WS_YIELD", "off");
    START_RUNTIME("ws", 8);
    ASSERT_FALSE(weft::detail::g_rt->cfg.ws_yield);  // the switch reached the runtime
    std::vector<std::uint32_t> got;
    std::uint64_t leaves = 0;
    constexpr int bursts = 8, depth = 9;
    on_weft_thread([&] {
        got = run_tree(tree_depth, false);
        for (int b = 0; b < bursts; ++b) {
            leaves += run_spin_tree(depth);
            ASSERT_EQ(weft_sleep_ns(2'000'000), 0);  // an idle gap: workers may park
        }
    });
    std::sort(got.begin(), got.end());
    std::vector<std::uint32_t> want = serial;
    std::sort(want.begin(), want.end());
    EXPECT_EQ(got, want);
    EXPECT_EQ(leaves, static_cast<std::uint64_t>(bursts) << depth);
}

}  // namespace
