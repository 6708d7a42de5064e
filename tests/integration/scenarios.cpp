// The child programs of the process-level tests. Conventions:
//   - a scenario prints "id <name> <weft thread id>" lines on stdout (flushed)
//     for the threads the parent must find in the child's stderr;
//   - it reads its knobs from the environment (WEFT_* for weft itself,
//     WEFT_TEST_* for the scenario);
//   - it never returns normally when the point is that weft ends the process.
#include "integration/scenarios.hpp"

#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "integration/overflow_frames.hpp"
#include "support/fil_fib.hpp"
#include "weft/filament.hpp"
#include "weft/weft.h"

namespace weft_it {
namespace {

void announce(const char* what, weft_thread_t t) {
    std::printf("id %s %" PRIu64 "\n", what, weft_thread_id(t));
    std::fflush(stdout);
}

std::size_t env_size(const char* name, std::size_t dflt) {
    const char* e = std::getenv(name);
    return e != nullptr ? std::strtoull(e, nullptr, 10) : dflt;
}

// --- stack overflow -------------------------------------------------------------

// Recurses with a frame the optimizer cannot drop until the stack runs out.
__attribute__((noinline)) std::uint64_t eat_stack(std::uint64_t depth) {
    if (depth == UINT64_MAX) return 0;  // never: keeps -Winfinite-recursion quiet
    volatile char frame[512];
    frame[0] = static_cast<char>(depth);
    frame[511] = static_cast<char>(depth >> 8);
    std::uint64_t below = eat_stack(depth + 1);
    return below + static_cast<unsigned char>(frame[0]) + static_cast<unsigned char>(frame[511]);
}

void* overflow_body(void*) {
    announce("overflow", weft_thread_self());
    std::uint64_t r = eat_stack(0);
    std::printf("not reached %" PRIu64 "\n", r);
    return nullptr;
}

// WEFT_TEST_STACK: the thread's stack size attribute (0 = runtime default);
// WEFT_TEST_NAME: its name ("-" = none).
int overflow() {
    weft_attr_t attr;
    weft_attr_init(&attr);
    std::size_t size = env_size("WEFT_TEST_STACK", 0);
    if (size != 0 && weft_attr_setstacksize(&attr, size) != 0) return 3;
    const char* name = std::getenv("WEFT_TEST_NAME");
    if (name == nullptr) name = "deep";
    if (std::strcmp(name, "-") != 0) weft_attr_setname(&attr, name);
    weft_thread_t t;
    if (weft_thread_create(&t, &attr, &overflow_body, nullptr) != 0) return 4;
    weft_thread_join(t, nullptr);
    return 0;  // not reached: the overflow ends the process
}

// --- deadlocks ------------------------------------------------------------------------

weft_mutex_t g_a = WEFT_MUTEX_INITIALIZER, g_b = WEFT_MUTEX_INITIALIZER;
std::atomic<int> g_holding{0};

// Two threads lock two mutexes in opposite orders; main joins the first.
int deadlock_abba() {
    weft_attr_t attr;
    weft_attr_init(&attr);
    weft_attr_setname(&attr, "ab");
    weft_thread_t t1, t2;
    weft_thread_create(
        &t1, &attr,
        [](void*) -> void* {
            weft_mutex_lock(&g_a);
            g_holding.fetch_add(1);
            while (g_holding.load() < 2) weft_thread_yield();
            weft_mutex_lock(&g_b);
            return nullptr;
        },
        nullptr);
    weft_attr_setname(&attr, "ba");
    weft_thread_create(
        &t2, &attr,
        [](void*) -> void* {
            weft_mutex_lock(&g_b);
            g_holding.fetch_add(1);
            while (g_holding.load() < 2) weft_thread_yield();
            weft_mutex_lock(&g_a);
            return nullptr;
        },
        nullptr);
    announce("ab", t1);
    announce("ba", t2);
    std::printf("mutex a %p\nmutex b %p\n", static_cast<void*>(&g_a), static_cast<void*>(&g_b));
    std::fflush(stdout);
    weft_thread_join(t1, nullptr);
    return 0;  // not reached
}

std::atomic<weft_thread_t> g_j1{WEFT_THREAD_NULL}, g_j2{WEFT_THREAD_NULL};
weft_sem_t g_cycle_done;

// Two threads join each other (a cycle of joins). Main waits on a semaphore
// that the first would post after its join (main cannot join either: a second
// joiner of a thread gets EINVAL, which would break the cycle).
int deadlock_join_cycle() {
    weft_sem_init(&g_cycle_done, 0);
    weft_attr_t attr;
    weft_attr_init(&attr);
    weft_attr_setname(&attr, "j1");
    weft_thread_t t1, t2;
    weft_thread_create(
        &t1, &attr,
        [](void*) -> void* {
            while (g_j2.load() == WEFT_THREAD_NULL) weft_thread_yield();
            weft_thread_join(g_j2.load(), nullptr);
            weft_sem_post(&g_cycle_done);
            return nullptr;
        },
        nullptr);
    weft_attr_setname(&attr, "j2");
    weft_thread_create(
        &t2, &attr,
        [](void*) -> void* {
            while (g_j1.load() == WEFT_THREAD_NULL) weft_thread_yield();
            weft_thread_join(g_j1.load(), nullptr);
            return nullptr;
        },
        nullptr);
    g_j1 = t1;
    g_j2 = t2;
    announce("j1", t1);
    announce("j2", t2);
    weft_sem_wait(&g_cycle_done);
    std::printf("cycle broken\n");
    return 0;  // not reached
}

// Main waits on a semaphore nobody posts. WEFT_TEST_EXTRA=1 adds a thread that
// has finished but was never joined (it waits on nothing), and one blocked
// forever on a condition variable.
weft_sem_t g_sem;
weft_mutex_t g_m = WEFT_MUTEX_INITIALIZER;
weft_cond_t g_c = WEFT_COND_INITIALIZER;

int deadlock_sem() {
    weft_sem_init(&g_sem, 0);
    if (env_size("WEFT_TEST_EXTRA", 0) == 1) {
        weft_attr_t attr;
        weft_attr_init(&attr);
        weft_attr_setname(&attr, "finished");
        weft_thread_t done, waiter;
        weft_thread_create(
            &done, &attr, [](void*) -> void* { return nullptr; }, nullptr);
        weft_attr_setname(&attr, "condwaiter");
        weft_thread_create(
            &waiter, &attr,
            [](void*) -> void* {
                weft_mutex_lock(&g_m);
                for (;;) weft_cond_wait(&g_c, &g_m);
            },
            nullptr);
        announce("finished", done);
        announce("condwaiter", waiter);
        weft_sleep_ns(20'000'000);  // both have run: one ended, one waits
    }
    announce("main", weft_thread_self());
    weft_sem_wait(&g_sem);
    std::printf("woken\n");
    return 0;  // not reached
}

// A message-passing program that waits for a message nobody sends: main
// blocks in weft_net_recv on its own port, beside the naming server (a
// thread of node 0 waiting on its port). The report names both ports by ID.
int deadlock_net_recv() {
    if (weft_net_init(nullptr) != 0) return 5;
    weft_port_id_t p{};
    if (weft_net_port_create(&p, 4, 64) != 0) return 6;
    std::printf("port %u %u %u\n", p.node, p.index, p.gen);
    announce("main", weft_thread_self());
    int v = 0;
    weft_net_recv(p, &v, sizeof v, nullptr, WEFT_NET_FOREVER);
    std::printf("woken\n");
    return 0;  // not reached
}

// --- environment at implicit start ------------------------------------------------------

// No weft_init: the first weft call starts the runtime from the environment.
int implicit_start() {
    weft_thread_t t;
    int rc = weft_thread_create(
        &t, nullptr, [](void*) -> void* { return nullptr; }, nullptr);
    if (rc != 0) return 5;
    weft_thread_join(t, nullptr);
    std::printf("started\n");
    return 0;
}

// --- statistics at exit ----------------------------------------------------------------

// Creates WEFT_TEST_THREADS threads (some blocking), joins them, and either
// returns from main without weft_finalize (WEFT_TEST_FINALIZE unset) or
// finalizes first.
int stats_exit() {
    std::size_t n = env_size("WEFT_TEST_THREADS", 5);
    weft_sem_t s;
    weft_sem_init(&s, 0);
    weft_thread_t ts[64];
    if (n > 64) n = 64;
    for (std::size_t i = 0; i < n; ++i)
        weft_thread_create(
            &ts[i], nullptr,
            [](void* a) -> void* {
                weft_sem_wait(static_cast<weft_sem_t*>(a));
                return nullptr;
            },
            &s);
    for (std::size_t i = 0; i < n; ++i) weft_sem_post(&s);
    for (std::size_t i = 0; i < n; ++i) weft_thread_join(ts[i], nullptr);
    if (env_size("WEFT_TEST_FINALIZE", 0) == 1) {
        if (weft_finalize() != 0) return 6;
    }
    std::printf("done\n");
    std::fflush(stdout);
    return 0;
}

// weft_init with WEFT_STATS=1-equivalent config, a thread and two filament
// regions (fib(10) with a join per call; a loop of 1000), then finalize.
int stats_config() {
    weft_config_t cfg{};
    cfg.workers = 2;
    cfg.stats = 1;
    if (weft_init(&cfg) != 0) return 7;
    weft_thread_t t;
    weft_thread_create(
        &t, nullptr, [](void*) -> void* { return nullptr; }, nullptr);
    weft_thread_join(t, nullptr);
    if (weft::fork_join([] { return wt::fib_join(10); }) != 55) return 9;
    std::atomic<int> sum{0};
    weft::parallel_for(0, 1000, [&](int i) { sum.fetch_add(i, std::memory_order_relaxed); });
    if (sum.load() != 999 * 1000 / 2) return 10;
    if (weft_finalize() != 0) return 8;
    return 0;
}

}  // namespace

const std::vector<scenario>& scenarios() {
    static const std::vector<scenario> all = {
        {"overflow", &overflow},
        {"overflow_frame", &overflow_frame},
        {"deadlock_abba", &deadlock_abba},
        {"deadlock_join_cycle", &deadlock_join_cycle},
        {"deadlock_sem", &deadlock_sem},
        {"deadlock_net_recv", &deadlock_net_recv},
        {"implicit_start", &implicit_start},
        {"stats_exit", &stats_exit},
        {"stats_config", &stats_config},
    };
    return all;
}

}  // namespace weft_it
