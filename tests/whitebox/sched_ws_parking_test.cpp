// The ws policy (src/sched/ws.cpp) and parked workers: a push wakes one, work
// pushed while the others are parked is stolen, bursts after idle gaps all
// run. Behaviour only: counts, never timings.
#include "sched_ws_support.hpp"

namespace {

using namespace ws_test;

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

}  // namespace
