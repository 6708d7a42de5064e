// Class: regression. Minimal reproductions of runtime bugs found by the test
// suite, kept so they stay fixed. Scenarios that would hang run in a child
// process (a GoogleTest death test) under alarm(), so a regression fails this
// test in bounded time instead of hanging the binary.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "support/weft_test.hpp"

namespace {

using namespace std::chrono_literals;

// Runs `scenario` in a forked child with a one-worker runtime and a 20 s alarm;
// the child exits 0 if the scenario returns true.
template <class F>
void run_isolated(F scenario) {
    ASSERT_EQ(weft_is_initialized(), 0);
    EXPECT_EXIT(
        {
            alarm(20);
            weft_config_t cfg = wt::config(1, "fifo");
            if (weft_init(&cfg) != 0) std::_Exit(3);
            bool ok = scenario();
            weft_finalize();
            std::fflush(nullptr);
            std::_Exit(ok ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "");
}

// Fixed in a4121c5. A timed waiter's timer expired while no switch happened
// (no timer was serviced); then another thread blocked on the *same* primitive.
// block() called pick(), which fired the expired timer, which takes the
// primitive's spinlock -- held by the blocking thread itself until its
// post-switch action: the worker spun forever. One worker, so nothing else
// could make progress.
TEST(Regression, timer_expired_while_blocking_on_same_semaphore) {
    run_isolated([] {
        static weft_sem_t s;
        weft_sem_init(&s, 0);
        static int rc_a = -1;
        weft_thread_t a = wt::go([] {
            timespec d = wt::realtime_in(1ms);
            rc_a = weft_sem_timedwait(&s, &d);
        });
        weft_thread_yield();  // A blocks with a 1 ms deadline
        usleep(10'000);       // the deadline passes; no weft switch meanwhile
        weft_thread_t b = wt::go([] {
            usleep(5'000);
            // Two units: the late timer may still lose to this post (A then
            // gets a unit and returns 0); main gets the other either way.
            weft_sem_post(&s);
            weft_sem_post(&s);
        });
        weft_sem_wait(&s);  // blocks holding s's lock; A's timer is due
        weft_thread_join(a, nullptr);
        weft_thread_join(b, nullptr);
        return rc_a == ETIMEDOUT || rc_a == 0;
    });
}

TEST(Regression, timer_expired_while_blocking_on_same_mutex) {
    run_isolated([] {
        static weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
        static int rc_a = -1;
        weft_thread_t holder = wt::go([] {
            weft_mutex_lock(&m);
            weft_sleep_ns(30'000'000);
            weft_mutex_unlock(&m);
        });
        weft_thread_yield();  // holder takes the mutex
        weft_thread_t a = wt::go([] {
            timespec d = wt::realtime_in(1ms);
            rc_a = weft_mutex_timedlock(&m, &d);
            if (rc_a == 0) weft_mutex_unlock(&m);
        });
        weft_thread_yield();  // A queues with a 1 ms deadline
        usleep(10'000);
        weft_mutex_lock(&m);  // blocks holding m's queue lock; A's timer is due
        weft_mutex_unlock(&m);
        weft_thread_join(a, nullptr);
        weft_thread_join(holder, nullptr);
        return rc_a == ETIMEDOUT || rc_a == 0;
    });
}

TEST(Regression, timer_expired_while_blocking_on_same_condition) {
    run_isolated([] {
        static weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
        static weft_cond_t c = WEFT_COND_INITIALIZER;
        static int rc_a = -1;
        static bool go = false;
        weft_thread_t a = wt::go([] {
            weft_mutex_lock(&m);
            timespec d = wt::realtime_in(1ms);
            rc_a = weft_cond_timedwait(&c, &m, &d);
            weft_mutex_unlock(&m);
        });
        weft_thread_yield();
        usleep(10'000);
        weft_thread_t b = wt::go([] {
            weft_sleep_ns(5'000'000);
            weft_mutex_lock(&m);
            go = true;
            weft_cond_broadcast(&c);
            weft_mutex_unlock(&m);
        });
        weft_mutex_lock(&m);
        while (!go) weft_cond_wait(&c, &m);  // blocks holding c's lock; A's timer is due
        weft_mutex_unlock(&m);
        weft_thread_join(a, nullptr);
        weft_thread_join(b, nullptr);
        return rc_a == ETIMEDOUT || rc_a == 0;
    });
}

TEST(Regression, timer_expired_while_blocking_on_same_rwlock) {
    run_isolated([] {
        static weft_rwlock_t rw = WEFT_RWLOCK_INITIALIZER;
        static int rc_a = -1;
        weft_rwlock_rdlock(&rw);  // main reads
        weft_thread_t a = wt::go([] {
            timespec d = wt::realtime_in(1ms);
            rc_a = weft_rwlock_timedwrlock(&rw, &d);
            if (rc_a == 0) weft_rwlock_unlock(&rw);
        });
        weft_thread_yield();
        usleep(10'000);
        weft_thread_t b = wt::go([] {
            weft_sleep_ns(5'000'000);
            weft_rwlock_unlock(&rw);  // releases main's read lock (any reader may)
        });
        weft_rwlock_wrlock(&rw);  // queues holding rw's lock; A's timer is due
        weft_rwlock_unlock(&rw);
        weft_thread_join(a, nullptr);
        weft_thread_join(b, nullptr);
        return rc_a == ETIMEDOUT || rc_a == 0;
    });
}

// Timers fire only in pick(); block() (which holds
// a primitive lock) does not fire them. On one worker whose threads only block
// and wake each other (no yield, no exit, never idle), an expired timed wait
// is then never serviced: here a 10 ms sem_timedwait stays blocked until the
// ping-pong stops on its own.
TEST(Regression, timer_fires_while_the_worker_only_blocks_and_wakes) {
    run_isolated([] {
        static weft_sem_t s_timed, s_ping, s_pong;
        static std::atomic<int> timed_done{0};
        static int rc = -1;
        static std::atomic<bool> capped{false};
        weft_sem_init(&s_timed, 0);
        weft_sem_init(&s_ping, 0);
        weft_sem_init(&s_pong, 0);
        weft_thread_t a = wt::go([] {
            timespec d = wt::realtime_in(10ms);
            rc = weft_sem_timedwait(&s_timed, &d);
            timed_done = 1;
        });
        weft_thread_yield();  // A blocks with its 10 ms deadline
        // Two threads that keep the only worker busy by blocking and waking
        // each other until A has returned (or, if A's timer never fires, for
        // 10 s: a thousand times its deadline).
        weft_thread_t ping = wt::go([] {
            std::int64_t end = wt::now_ns() + 10'000'000'000;
            while (timed_done.load() == 0) {
                if (wt::now_ns() > end) {
                    capped = true;
                    break;
                }
                weft_sem_post(&s_ping);
                weft_sem_wait(&s_pong);
            }
            weft_sem_post(&s_ping);  // release the partner
        });
        weft_thread_t pong = wt::go([] {
            while (timed_done.load() == 0 && !capped.load()) {
                weft_sem_wait(&s_ping);
                weft_sem_post(&s_pong);
            }
        });
        weft_thread_join(ping, nullptr);
        weft_thread_join(pong, nullptr);
        weft_thread_join(a, nullptr);
        if (capped.load()) std::fprintf(stderr, "the timed wait was not serviced while the worker stayed busy\n");
        return rc == ETIMEDOUT && !capped.load();
    });
}

}  // namespace
