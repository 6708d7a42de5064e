// The ws policy (src/sched/ws.cpp) in the running runtime: requirement tests
// of its scheduling order (work-first = serial depth-first on one worker,
// round-robin yields, bounded wait of a yielder), and, in the suites named
// *Concurrency (the TSan set), steals, statistics and parking on two workers.
// Behaviour only: counts, orders and bounds, never timings.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dispatch.hpp"
#include "core/runtime.hpp"
#include "core/thread.hpp"
#include "core/ult.hpp"
#include "core/wait.hpp"
#include "support/weft_test.hpp"
#include "weft/weft.h"

namespace {

// Starts the runtime with `sched` on `workers` workers for one test.
class runtime_scope {
public:
    runtime_scope(const char* sched, int workers) {
        weft_config_t cfg{};
        cfg.workers = workers;
        cfg.sched = sched;
        rc_ = weft_init(&cfg);
    }
    ~runtime_scope() {
        if (rc_ == 0) {
            EXPECT_EQ(weft_finalize(), 0);
        }
    }
    int rc() const { return rc_; }

private:
    int rc_;
};

#define START_RUNTIME(sched, workers)        \
    runtime_scope rt_scope_(sched, workers); \
    ASSERT_EQ(rt_scope_.rc(), 0) << "weft_init(" << (sched) << ", " << (workers) << ")"

weft_thread_t spawn(void* (*fn)(void*), void* arg) {
    weft_thread_t t = WEFT_THREAD_NULL;
    EXPECT_EQ(weft_thread_create(&t, nullptr, fn, arg), 0);
    return t;
}
void join(weft_thread_t t) { EXPECT_EQ(weft_thread_join(t, nullptr), 0); }

// Runs f on a new weft thread and joins it. Test bodies run there, not on
// main: main is special to the core (it is pinned to worker 0 while it
// finalizes, and a pinned parent is never preempted by its child), and the
// orders asserted below are those of ordinary threads.
template <class F>
void on_weft_thread(F&& f) {
    struct box {
        F* f;
    } b{&f};
    weft_thread_t t = spawn(
        [](void* p) -> void* {
            (*static_cast<box*>(p)->f)();
            return nullptr;
        },
        &b);
    join(t);
}

// --- A recorded fork tree ----------------------------------------------------
// Node `id` has children 3*id+1 .. 3*id+3 down to `depth` levels. It records
// an event when it starts and after each join, and forks and joins in an
// interleaved pattern (spawn c0, spawn c1, join c0, spawn c2, join c1, join c2)
// so that the order is sensitive to both which thread runs first and when a
// joiner resumes. In the serial elision a spawn is a call and a join a no-op.

struct event_log {
    std::vector<std::uint32_t> ev = std::vector<std::uint32_t>(1 << 16);
    std::atomic<std::size_t> n{0};
    void record(std::uint32_t e) { ev[n.fetch_add(1, std::memory_order_relaxed)] = e; }
    std::vector<std::uint32_t> events() const {
        return std::vector<std::uint32_t>(ev.begin(), ev.begin() + static_cast<std::ptrdiff_t>(n.load()));
    }
};

struct tree_node {
    event_log* log;
    std::uint32_t id;
    int depth;  // levels below this node
    bool serial;
};

constexpr std::uint32_t ev_start(std::uint32_t id) { return id * 4; }
constexpr std::uint32_t ev_joined(std::uint32_t id, std::uint32_t k) { return id * 4 + 1 + k; }

void* visit(void* p);

struct child_handle {
    tree_node node;
    weft_thread_t t = WEFT_THREAD_NULL;
    void fork(const tree_node& parent, std::uint32_t k) {
        node = tree_node{parent.log, parent.id * 3 + 1 + k, parent.depth - 1, parent.serial};
        if (node.serial)
            visit(&node);
        else
            t = spawn(visit, &node);
    }
    void join_into(const tree_node& parent, std::uint32_t k) {
        if (!node.serial) join(t);
        parent.log->record(ev_joined(parent.id, k));
    }
};

void* visit(void* p) {
    const tree_node& me = *static_cast<tree_node*>(p);
    me.log->record(ev_start(me.id));
    if (me.depth == 0) return nullptr;
    child_handle c[3];
    c[0].fork(me, 0);
    c[1].fork(me, 1);
    c[0].join_into(me, 0);
    c[2].fork(me, 2);
    c[1].join_into(me, 1);
    c[2].join_into(me, 2);
    return nullptr;
}

std::vector<std::uint32_t> run_tree(int depth, bool serial) {
    event_log log;
    tree_node root{&log, 0, depth, serial};
    if (serial) {
        visit(&root);
    } else {
        weft_thread_t t = spawn(visit, &root);
        join(t);
    }
    return log.events();
}

constexpr int tree_depth = 5;
constexpr std::uint32_t tree_nodes = 364;  // 1 + 3 + ... + 3^5; 364 starts + 3 * 121 joins = 727 events

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

// --- Two workers ----------------------------------------------------------------

// A balanced binary fork tree whose leaves spin for a while: enough work for
// the second worker to steal. Returns the number of leaves run.
struct spin_tree_arg {
    int depth;
    std::atomic<std::uint64_t>* leaves;
};

void* spin_tree(void* p) {
    auto* a = static_cast<spin_tree_arg*>(p);
    if (a->depth == 0) {
        volatile std::uint64_t x = 0;
        for (int i = 0; i < 2000; ++i) x = x + static_cast<std::uint64_t>(i);
        a->leaves->fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    spin_tree_arg l{a->depth - 1, a->leaves}, r{a->depth - 1, a->leaves};
    weft_thread_t t = spawn(spin_tree, &l);
    spin_tree(&r);
    join(t);
    return nullptr;
}

std::uint64_t run_spin_tree(int depth) {
    std::atomic<std::uint64_t> leaves{0};
    spin_tree_arg root{depth, &leaves};
    spin_tree(&root);
    return leaves.load();
}

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

// --- Parking ----------------------------------------------------------------------

// Whitebox: is worker w parked now (registered as a sleeper, waiting on its
// futex or about to)? Read under the core's park lock.
bool is_parked(int w) {
    weft::detail::runtime* rt = weft::detail::g_rt;
    weft::detail::lock_guard<weft::detail::spinlock> g(rt->park_lock);
    return rt->workers[static_cast<std::size_t>(w)]->parked;
}

// Keeps the calling worker busy (no yield) until worker `other` is parked, or
// gives up after a while; true if it parked.
bool busy_wait_until_parked(int other) {
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!is_parked(other))
        if (std::chrono::steady_clock::now() > give_up) return false;
    return true;
}

struct handoff {
    std::atomic<bool> flag{false};
    std::atomic<bool> saw_flag{false};
};

// Spins without ever yielding until the parent, whose continuation is in this
// worker's deque, has been stolen and set the flag: only a thief (the parked
// worker, woken by the push of the continuation) can do that.
void* wait_for_thief(void* p) {
    auto* h = static_cast<handoff*>(p);
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!h->flag.load(std::memory_order_acquire))
        if (std::chrono::steady_clock::now() > give_up) return nullptr;
    h->saw_flag.store(true);
    return nullptr;
}

// requirement: a push onto a deque wakes a parked worker (no lost wake-up):
// the other worker is parked, the child spins, and the parent's continuation
// can only run if the push of it woke the parked worker, which steals it.
TEST(SchedWsConcurrency, continuation_push_wakes_a_parked_worker) {
    // A loaded machine would have the controller drop the other worker, which then steals nothing.
    wt::scoped_env no_adapt("WEFT_ADAPT", "off");
    START_RUNTIME("ws", 2);
    int rounds_parked = 0;
    on_weft_thread([&] {
        for (int round = 0; round < 12; ++round) {
            int me = weft_worker_id();
            ASSERT_GE(me, 0);
            if (busy_wait_until_parked(1 - me)) ++rounds_parked;
            handoff h;
            weft_thread_t t = spawn(wait_for_thief, &h);    // runs first; we are stealable
            h.flag.store(true, std::memory_order_release);  // we were stolen
            join(t);
            ASSERT_TRUE(h.saw_flag.load()) << "round " << round << ": the continuation was not stolen within 10 s";
        }
    });
    EXPECT_GT(rounds_parked, 0) << "the other worker never parked: the test did not test parking";
    weft_stats_t s{};
    ASSERT_EQ(weft_stats_get(&s), 0);
    EXPECT_GT(s.steals, 0u);
    EXPECT_GT(s.wakeups, 0u);
}

// Whitebox: the parked set, read under the core's park lock: how many
// `sleepers` count, the members (in park order, with the CPU each parked on)
// for failure messages, and what is inconsistent in it, if anything (empty:
// nothing). Consistent: `sleepers` counts the members, each member is marked
// parked (neither napping nor dormant) and listed once, and every other worker
// marked parked is napping or dormant (in no wake list).
struct parked_set_view {
    int sleepers = 0;
    std::string members;
    std::string problem;
};

parked_set_view view_parked_set() {
    using namespace weft::detail;
    runtime* rt = g_rt;
    parked_set_view v;
    lock_guard<spinlock> g(rt->park_lock);
    v.sleepers = rt->sleepers.load();
    std::string problem;
    for (worker* w : rt->parked) {
        v.members += (v.members.empty() ? "" : ", ") + std::string("worker ") + std::to_string(w->index) + " on CPU " +
                     std::to_string(w->park_cpu);
        if (!w->parked || w->napping || w->dormant)
            problem += "worker " + std::to_string(w->index) + " is in the set but not marked parked for a wake-up; ";
        if (std::count(rt->parked.begin(), rt->parked.end(), w) != 1)
            problem += "worker " + std::to_string(w->index) + " is in the set more than once; ";
    }
    if (static_cast<std::size_t>(v.sleepers) != rt->parked.size())
        problem +=
            "sleepers is " + std::to_string(v.sleepers) + " for " + std::to_string(rt->parked.size()) + " members; ";
    for (auto& w : rt->workers)
        if (w->parked && !w->napping && !w->dormant &&
            std::find(rt->parked.begin(), rt->parked.end(), w.get()) == rt->parked.end())
            problem += "worker " + std::to_string(w->index) + " is marked parked but not in the set; ";
    v.problem = problem;
    return v;
}

// The round of push_with_the_other_workers_parked_is_stolen: the child spins
// without yielding until the parent's continuation, pushed on this worker's
// deque, has been stolen and sets `stolen`, or until `give_up`.
struct steal_watch {
    std::atomic<bool> stolen{false};
    std::atomic<bool> saw_stolen{false};
    std::chrono::steady_clock::time_point give_up;
};

void* spin_until_stolen(void* p) {
    auto* s = static_cast<steal_watch*>(p);
    while (!s->stolen.load(std::memory_order_acquire))
        if (std::chrono::steady_clock::now() > s->give_up) return nullptr;
    s->saw_stolen.store(true);
    return nullptr;
}

// Confines the calling kernel thread to the CPU it runs on (cpu; -1 and
// `error` if it could not), until release() or the end of the scope, which
// give it back its affinity from whichever thread calls them.
struct cpu_confinement {
    pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
    cpu_set_t saved{};
    int cpu = -1;
    std::string error;
    cpu_confinement() {
        if (sched_getaffinity(tid, sizeof saved, &saved) != 0) {
            error = "sched_getaffinity failed";
            return;
        }
        cpu_set_t one;
        CPU_ZERO(&one);
        const int here = sched_getcpu();
        if (here < 0) {
            error = "sched_getcpu failed";
            return;
        }
        CPU_SET(here, &one);
        if (sched_setaffinity(tid, sizeof one, &one) != 0) {
            error = "sched_setaffinity to CPU " + std::to_string(here) + " failed";
            return;
        }
        cpu = here;
    }
    void release() {
        if (cpu >= 0) {
            EXPECT_EQ(sched_setaffinity(tid, sizeof saved, &saved), 0) << "restoring the affinity";
        }
        cpu = -1;
    }
    ~cpu_confinement() { release(); }
    cpu_confinement(const cpu_confinement&) = delete;
    cpu_confinement& operator=(const cpu_confinement&) = delete;
};

// requirement (core/sleep/README.md, "Which parked worker"): a push made while
// every other worker is parked wakes one of them (no lost wake-up), whichever
// one the waker claims, and every claim leaves the parked set consistent.
// Whitebox: on 3 workers, each round waits until the other two are parked, by
// the runtime's count and with no bound but the test's own limit; confines the
// test's kernel thread to the CPU it runs on and, under the park lock, marks
// the last to park as parked on that CPU and the other elsewhere, so that the
// claim (sleep::parked_to_claim) takes a worker that is not the last to park,
// out of the middle of the set; then the push of the test's continuation (a
// spawn whose child spins until the continuation is stolen) must wake one of
// them, which steals it. Which one is not checked: a worker that leaves the
// set and parks again meanwhile records its own CPU over the mark, and one
// that is still making its last look may take the spinning role instead of a
// wake-up. The choice itself is SleepClaim's (sleep_claim_test.cpp).
TEST(SchedWsConcurrency, push_with_the_other_workers_parked_is_stolen) {
    using namespace weft::detail;
    constexpr int workers = 3, rounds = 8;
    wt::scoped_env no_adapt("WEFT_ADAPT", "off");  // all three workers stay active whatever the load
    // Idle workers park after ~50 us of pause-spins instead of 256 sched_yield()s,
    // which on a loaded machine can last seconds: each round waits for two parks.
    wt::scoped_env no_yield("WEFT_WS_YIELD", "off");
    START_RUNTIME("ws", workers);
    runtime* rt = g_rt;
    const auto give_up = std::chrono::steady_clock::now() + wt::default_test_limit();
    on_weft_thread([&] {
        for (int round = 0; round < rounds; ++round) {
            // No weft call from here to the spawn: this thread stays on this worker.
            cpu_confinement pin;
            ASSERT_GE(pin.cpu, 0) << "round " << round << ": " << pin.error;
            const int cpu = pin.cpu;
            const int pusher = weft_worker_id();
            for (bool marked = false; !marked;) {
                if (rt->sleepers.load() == workers - 1) {
                    lock_guard<spinlock> g(rt->park_lock);
                    if (rt->parked.size() == workers - 1) {
                        rt->parked.back()->park_cpu = cpu;       // the kernel would queue it behind us
                        rt->parked.front()->park_cpu = cpu + 1;  // another CPU
                        marked = true;
                    }
                }
                if (!marked && std::chrono::steady_clock::now() > give_up) {
                    parked_set_view v = view_parked_set();
                    FAIL() << "round " << round << ": the other " << workers - 1
                           << " workers were not all parked within the test's limit; parked: [" << v.members
                           << "], sleepers " << v.sleepers;
                }
                if (!marked) sched_yield();
            }
            const parked_set_view before = view_parked_set();
            ASSERT_EQ(before.problem, "") << "round " << round << ", before the push";
            steal_watch s;
            s.give_up = give_up;
            weft_thread_t t = spawn(spin_until_stolen, &s);  // runs first; the push of our continuation wakes a thief
            const int thief = weft_worker_id();
            s.stolen.store(true, std::memory_order_release);
            pin.release();  // on the thief's kernel thread: the pusher's gets its affinity back
            join(t);
            parked_set_view after = view_parked_set();
            ASSERT_TRUE(s.saw_stolen.load())
                << "round " << round << ": the continuation pushed by worker " << pusher << " on CPU " << cpu
                << " was not stolen within the test's limit (a lost wake-up); parked at the push: [" << before.members
                << "], now: [" << after.members << "]";
            EXPECT_NE(thief, pusher) << "round " << round << ": the continuation ran on the worker its child occupied";
            EXPECT_EQ(after.problem, "") << "round " << round << ", after the claim; parked at the push: ["
                                         << before.members << "], now: [" << after.members << "]";
        }
    });
}

// requirement: bursts of work separated by idle gaps long enough for every
// worker to park: each burst wakes the workers, and all the work runs.
TEST(SchedWsConcurrency, bursts_after_idle_gaps_all_run) {
    START_RUNTIME("ws", 2);
    ASSERT_EQ(weft_stats_reset(), 0);
    constexpr int bursts = 20, depth = 7;
    std::uint64_t total = 0;
    on_weft_thread([&] {
        for (int b = 0; b < bursts; ++b) {
            // An idle gap long enough for a worker to park: wait for a park,
            // not for a time. Its budget is 256 rounds of a look and a
            // sched_yield(): ~60 us on an idle machine, seconds when other
            // processes keep both CPUs busy (each yield then lasts until they
            // have run), hence the 10 s bound per gap.
            weft_stats_t before{};
            ASSERT_EQ(weft_stats_get(&before), 0);
            for (int i = 0; i < 2000; ++i) {
                ASSERT_EQ(weft_sleep_ns(5'000'000), 0);
                weft_stats_t now{};
                ASSERT_EQ(weft_stats_get(&now), 0);
                if (now.parks > before.parks) break;
            }
            total += run_spin_tree(depth);
        }
    });
    EXPECT_EQ(total, static_cast<std::uint64_t>(bursts) << depth);
    weft_stats_t s{};
    ASSERT_EQ(weft_stats_get(&s), 0);
    EXPECT_GT(s.parks, 0u);
}

// --- A serial chain -------------------------------------------------------------
// Each node spawns its children one at a time and joins each before the next
// (knary's serial children): nothing can run in parallel, but every
// continuation waits in the deque, stealable, until its child returns.

struct chain_arg {
    int depth;
    std::atomic<std::uint64_t>* nodes;
};

void* chain(void* p) {
    auto* a = static_cast<chain_arg*>(p);
    a->nodes->fetch_add(1, std::memory_order_relaxed);
    if (a->depth == 0) return nullptr;
    for (int i = 0; i < 3; ++i) {
        chain_arg c{a->depth - 1, a->nodes};
        join(spawn(chain, &c));
    }
    return nullptr;
}

std::uint64_t run_chain(int depth) {
    std::atomic<std::uint64_t> nodes{0};
    chain_arg root{depth, &nodes};
    chain(&root);
    return nodes.load();
}

constexpr std::uint64_t chain_nodes(int depth) { return depth < 0 ? 0 : 1 + 3 * chain_nodes(depth - 1); }

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
        per_worker += " " + std::to_string(ws.context_switches);
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
    ASSERT_EQ(create_ult(current_worker(), nullptr,
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
