// Class: requirement, negative, regression. The default deadlock detector and
// kernel threads outside weft (src/core/deadlock.cpp): it never ends a program
// that an outside thread will still wake (one holding a weft mutex, or one that
// will post a semaphore or signal a condition, even before its first weft
// call), and when it does report, it names an outside holder as such.
//
// Each case runs in a child process (a GoogleTest death test, re-executed so
// that the child has no thread but its own), with the detector at its default
// and no watchdog: a watchdog is itself a kernel thread outside weft, and would
// change the verdict. ctest's timeout bounds a child that hangs.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <vector>

#include "support/weft_test.hpp"

namespace {

class DeadlockOutside : public ::testing::TestWithParam<int> {  // the worker count
protected:
    void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};
INSTANTIATE_TEST_SUITE_P(Workers, DeadlockOutside, ::testing::Values(1, 2),
                         [](const auto& info) { return std::to_string(info.param) + "w"; });

// The child's start: the default detector, `workers` workers.
void start(int workers) {
    unsetenv("WEFT_DEADLOCK");
    weft_config_t cfg = wt::config(workers);
    if (weft_init(&cfg) != 0) std::_Exit(90);
}

void finish() {
    if (weft_finalize() != 0) std::_Exit(91);
    std::_Exit(0);
}

pthread_t outside(void* (*fn)(void*), void* arg) {
    pthread_t p;
    if (pthread_create(&p, nullptr, fn, arg) != 0) std::_Exit(92);
    return p;
}

struct shared {
    weft_mutex_t a = WEFT_MUTEX_INITIALIZER;
    weft_mutex_t b = WEFT_MUTEX_INITIALIZER;
    weft_cond_t c = WEFT_COND_INITIALIZER;
    weft_sem_t s{};
    bool ready = false;
    std::atomic<int> step{0};
};

void* lock_a_then_unlock(void* arg) {
    auto* sh = static_cast<shared*>(arg);
    weft_mutex_lock(&sh->a);
    weft_mutex_unlock(&sh->a);
    return nullptr;
}

// A kernel thread outside weft holds a weft mutex for 2 s while main and two
// weft threads wait on it: every weft thread is blocked, and the program is
// correct.
void outside_holder_for_two_seconds(int workers) {
    start(workers);
    static shared sh;
    pthread_t p = outside(
        [](void*) -> void* {
            weft_mutex_lock(&sh.a);
            sh.step = 1;
            sleep(2);
            weft_mutex_unlock(&sh.a);
            return nullptr;
        },
        nullptr);
    while (sh.step.load() == 0) usleep(1000);
    weft_thread_t t[2];
    for (auto& x : t) weft_thread_create(&x, nullptr, &lock_a_then_unlock, &sh);
    weft_mutex_lock(&sh.a);
    weft_mutex_unlock(&sh.a);
    for (auto& x : t) weft_thread_join(x, nullptr);
    pthread_join(p, nullptr);
    finish();
}

TEST_P(DeadlockOutside, outside_thread_holding_a_mutex_for_2s_is_waited_for) {
    EXPECT_EXIT(outside_holder_for_two_seconds(GetParam()), ::testing::ExitedWithCode(0), "");
}

// A kernel thread whose first weft call, 2 s in, posts the semaphore main
// waits on.
void outside_post_after_two_seconds(int workers) {
    start(workers);
    static shared sh;
    weft_sem_init(&sh.s, 0);
    pthread_t p = outside(
        [](void*) -> void* {
            sleep(2);
            weft_sem_post(&sh.s);
            return nullptr;
        },
        nullptr);
    if (weft_sem_wait(&sh.s) != 0) std::_Exit(93);
    pthread_join(p, nullptr);
    finish();
}

TEST_P(DeadlockOutside, outside_thread_posting_after_2s_is_waited_for) {
    EXPECT_EXIT(outside_post_after_two_seconds(GetParam()), ::testing::ExitedWithCode(0), "");
}

// The same through a condition variable, signalled after 2 s.
void outside_signal_after_two_seconds(int workers) {
    start(workers);
    static shared sh;
    pthread_t p = outside(
        [](void*) -> void* {
            sleep(2);
            weft_mutex_lock(&sh.a);
            sh.ready = true;
            weft_cond_signal(&sh.c);
            weft_mutex_unlock(&sh.a);
            return nullptr;
        },
        nullptr);
    weft_mutex_lock(&sh.a);
    while (!sh.ready) weft_cond_wait(&sh.c, &sh.a);
    weft_mutex_unlock(&sh.a);
    pthread_join(p, nullptr);
    finish();
}

TEST_P(DeadlockOutside, outside_thread_signalling_after_2s_is_waited_for) {
    EXPECT_EXIT(outside_signal_after_two_seconds(GetParam()), ::testing::ExitedWithCode(0), "");
}

// A real deadlock across the boundary: the outside thread holds mutex a and
// waits on a semaphore nobody will post; main waits on a. Every thread of the
// process is blocked in weft: reported, with the outside thread named.
void outside_holder_blocked_in_weft(int workers) {
    start(workers);
    static shared sh;
    weft_sem_init(&sh.s, 0);
    outside(
        [](void*) -> void* {
            weft_mutex_lock(&sh.a);
            sh.step = 1;
            weft_sem_wait(&sh.s);
            return nullptr;
        },
        nullptr);
    while (sh.step.load() == 0) usleep(1000);
    weft_mutex_lock(&sh.a);
    std::_Exit(0);  // not reached
}

TEST_P(DeadlockOutside, outside_holder_blocked_in_weft_is_reported_by_tid) {
    EXPECT_EXIT(outside_holder_blocked_in_weft(GetParam()), ::testing::KilledBySignal(SIGABRT),
                "weft: deadlock:.*"
                "  thread 1 \\(main\\) waits in weft_mutex_lock on 0x[0-9a-f]+, held by a kernel thread outside weft "
                "\\(tid [0-9]+\\)\n"
                ".*  kernel thread outside weft \\(tid [0-9]+\\) waits in weft_sem_wait");
}

// The outside thread locked the mutex and exited without unlocking it: no
// thread is left that could. Reported, saying so.
void outside_holder_exited(int workers) {
    start(workers);
    static shared sh;
    pthread_t p = outside(
        [](void*) -> void* {
            weft_mutex_lock(&sh.a);
            return nullptr;
        },
        nullptr);
    pthread_join(p, nullptr);
    weft_mutex_lock(&sh.a);
    std::_Exit(0);  // not reached
}

TEST_P(DeadlockOutside, mutex_left_locked_by_an_exited_outside_thread_is_reported) {
    EXPECT_EXIT(outside_holder_exited(GetParam()), ::testing::KilledBySignal(SIGABRT),
                "  thread 1 \\(main\\) waits in weft_mutex_lock on 0x[0-9a-f]+, held by a kernel thread outside "
                "weft \\(tid [0-9]+, which has exited\\)");
}

// Two weft threads lock two mutexes in opposite orders while an unrelated
// kernel thread sleeps: that thread could wake nobody in the cycle, so the
// cycle is reported although an outside thread is alive. (This case passes on
// a detector that ignores outside threads altogether; it guards the rule that
// lets outside threads hold the report back from hiding a cycle.)
void* ab(void* arg) {
    auto* sh = static_cast<shared*>(arg);
    weft_mutex_lock(&sh->a);
    sh->step.fetch_add(1);
    while (sh->step.load() < 2) weft_thread_yield();
    weft_mutex_lock(&sh->b);
    return nullptr;
}
void* ba(void* arg) {
    auto* sh = static_cast<shared*>(arg);
    weft_mutex_lock(&sh->b);
    sh->step.fetch_add(1);
    while (sh->step.load() < 2) weft_thread_yield();
    weft_mutex_lock(&sh->a);
    return nullptr;
}

void abba_beside_a_sleeping_outside_thread(int workers) {
    start(workers);
    static shared sh;
    outside(
        [](void*) -> void* {
            for (;;) pause();
        },
        nullptr);
    weft_thread_t t1, t2;
    weft_thread_create(&t1, nullptr, &ab, &sh);
    weft_thread_create(&t2, nullptr, &ba, &sh);
    weft_thread_join(t1, nullptr);
    std::_Exit(0);  // not reached
}

TEST_P(DeadlockOutside, cycle_is_reported_while_an_unrelated_outside_thread_lives) {
    EXPECT_EXIT(abba_beside_a_sleeping_outside_thread(GetParam()), ::testing::KilledBySignal(SIGABRT),
                "weft: deadlock: threads wait on each other in a cycle \\(thread [0-9]+ -> thread [0-9]+ -> thread "
                "[0-9]+\\)");
}

}  // namespace
