// The ws policy (src/sched/ws.cpp) in the running runtime: requirement tests
// of its scheduling order on one worker (work-first = serial depth-first,
// round-robin yields, bounded wait of a yielder). Behaviour only: counts and
// orders, never timings.
#include "sched_ws_support.hpp"

namespace {

using namespace ws_test;

// requirement: on one worker, ws runs a fork tree in exactly the serial
// depth-first order (work-first: the child runs at once, the continuation
// waits at the bottom of the deque and is the next thing popped).
TEST(SchedWs, one_worker_runs_fork_tree_in_serial_depth_first_order) {
    const std::vector<std::uint32_t> serial = run_tree(tree_depth, true);
    START_RUNTIME("ws", 1);
    ASSERT_STREQ(weft_sched_name(), "ws");
    ASSERT_EQ(weft_stats_reset(), 0);
    std::vector<std::uint32_t> got;
    on_weft_thread([&] { got = run_tree(tree_depth, false); });
    ASSERT_EQ(got.size(), serial.size());
    EXPECT_EQ(got, serial);
    // Depth-first also bounds space: at most one thread per level is alive
    // (main, the driver thread, then the root-to-leaf chain of the tree).
    weft_stats_t s{};
    ASSERT_EQ(weft_stats_get(&s), 0);
    EXPECT_LE(s.max_live_threads, static_cast<std::uint64_t>(tree_depth) + 3);
    EXPECT_EQ(s.steals, 0u) << "one worker has nobody to steal from";
}

// requirement (contrast): the same recorded test tells fifo (breadth-first:
// the parent goes on after a fork) apart from the serial order, so the test
// above is not vacuous.
TEST(SchedWs, fifo_order_differs_from_serial_order) {
    const std::vector<std::uint32_t> serial = run_tree(tree_depth, true);
    START_RUNTIME("fifo", 1);
    std::vector<std::uint32_t> got;
    on_weft_thread([&] { got = run_tree(tree_depth, false); });
    ASSERT_EQ(got.size(), serial.size());
    EXPECT_NE(got, serial);
}

// --- Yield ----------------------------------------------------------------------

struct yielder_arg {
    event_log* log;
    std::uint32_t id;
    int rounds;
};

void* yield_loop(void* p) {
    auto* a = static_cast<yielder_arg*>(p);
    for (int i = 0; i < a->rounds; ++i) {
        a->log->record(a->id);
        EXPECT_EQ(weft_thread_yield(), 0);
    }
    return nullptr;
}

// requirement: a yield lets every other ready thread of the worker run before
// the yielder again (the yielded deque is FIFO), so yielders go round-robin;
// it never resumes the yielder at once while others are ready.
TEST(SchedWs, yielders_run_round_robin_on_one_worker) {
    START_RUNTIME("ws", 1);
    constexpr int nthreads = 4, rounds = 50;
    event_log log;
    on_weft_thread([&] {
        yielder_arg args[nthreads];
        weft_thread_t t[nthreads];
        for (int i = 0; i < nthreads; ++i) {
            args[i] = yielder_arg{&log, static_cast<std::uint32_t>(i), rounds};
            t[i] = spawn(yield_loop, &args[i]);
        }
        for (weft_thread_t x : t) join(x);
    });
    const std::vector<std::uint32_t> ev = log.events();
    ASSERT_EQ(ev.size(), static_cast<std::size_t>(nthreads * rounds));
    // The driver spawns each thread, which runs at once (work-first), records,
    // yields back to the driver's continuation and waits in the yielded deque;
    // the driver then joins, so only the yielders are ready: they take turns,
    // 0 1 2 3 0 1 2 3 ..., to the end (they all finish in the last turn).
    for (std::size_t i = 0; i < ev.size(); ++i) ASSERT_EQ(ev[i], i % nthreads) << "event " << i;
}

// requirement: a yield with nothing else ready returns at once to the caller.
TEST(SchedWs, lone_yield_returns) {
    START_RUNTIME("ws", 1);
    on_weft_thread([] {
        for (int i = 0; i < 1000; ++i) ASSERT_EQ(weft_thread_yield(), 0);
    });
}

// A pair of threads that wake each other forever keeps a worker's work deque
// busy; a yielder must still get the worker within a bounded number of
// scheduling decisions (ws's fairness interval), and it stops them.
struct pingpong {
    weft_sem_t a, b;
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> exchanges{0};
    std::atomic<std::uint64_t> exchanges_when_yielder_ran{0};
};
constexpr std::uint64_t pingpong_give_up = 1'000'000;

void* ping(void* p) {
    auto* s = static_cast<pingpong*>(p);
    for (;;) {
        EXPECT_EQ(weft_sem_post(&s->b), 0);
        EXPECT_EQ(weft_sem_wait(&s->a), 0);
        if (s->stop.load()) return nullptr;
        // A livelocked scheduler would never run the yielder: stop by
        // ourselves, and let the test report it.
        if (s->exchanges.fetch_add(1) >= pingpong_give_up) {
            s->stop.store(true);
            EXPECT_EQ(weft_sem_post(&s->b), 0);
            return nullptr;
        }
    }
}
void* pong(void* p) {
    auto* s = static_cast<pingpong*>(p);
    for (;;) {
        EXPECT_EQ(weft_sem_wait(&s->b), 0);
        if (s->stop.load()) return nullptr;
        EXPECT_EQ(weft_sem_post(&s->a), 0);
    }
}
void* stopper(void* p) {
    auto* s = static_cast<pingpong*>(p);
    EXPECT_EQ(weft_thread_yield(), 0);  // to the yielded deque, behind the ping-pong
    s->exchanges_when_yielder_ran.store(s->exchanges.load());
    s->stop.store(true);
    EXPECT_EQ(weft_sem_post(&s->a), 0);
    EXPECT_EQ(weft_sem_post(&s->b), 0);
    return nullptr;
}

TEST(SchedWs, yielder_is_not_starved_by_threads_that_wake_each_other) {
    START_RUNTIME("ws", 1);
    pingpong s;
    ASSERT_EQ(weft_sem_init(&s.a, 0), 0);
    ASSERT_EQ(weft_sem_init(&s.b, 0), 0);
    on_weft_thread([&] {
        weft_thread_t y = spawn(stopper, &s);
        weft_thread_t t1 = spawn(ping, &s);
        weft_thread_t t2 = spawn(pong, &s);
        join(t1);
        join(t2);
        join(y);
    });
    EXPECT_LT(s.exchanges.load(), pingpong_give_up) << "the yielder never ran";
    // Each exchange is two scheduling decisions; the yielder waits at most
    // one fairness interval (61 picks) plus start-up.
    EXPECT_LE(s.exchanges_when_yielder_ran.load(), 100u);
    EXPECT_EQ(weft_sem_destroy(&s.a), 0);
    EXPECT_EQ(weft_sem_destroy(&s.b), 0);
}

}  // namespace
