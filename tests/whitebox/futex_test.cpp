// Class: whitebox. The futex wrapper (core/futex.hpp): a wait returns when the
// word differs, when woken, and at its absolute CLOCK_MONOTONIC deadline.
#include <climits>
#include <cstdint>
#include <thread>

#include "core/clock.hpp"
#include "core/futex.hpp"
#include "support/weft_test.hpp"

namespace {

using namespace weft::detail;

TEST(Futex, wait_returns_at_once_when_the_word_differs) {
    atomic<std::uint32_t> word{1};
    futex_wait(&word, 0);             // untimed: would hang if it slept
    futex_wait(&word, 0, INT64_MAX);  // "no deadline": the same
    EXPECT_EQ(word.load(), 1u);
}

TEST(Futex, wait_returns_at_once_for_a_deadline_already_past) {
    atomic<std::uint32_t> word{0};
    futex_wait(&word, 0, 0);
    futex_wait(&word, 0, monotonic_ns() - 1'000'000);
    EXPECT_EQ(word.load(), 0u);
}

// The deadline is an absolute time on CLOCK_MONOTONIC: the wait lasts until
// then (not until "deadline ns from now", which would outlive the test, and
// not until a CLOCK_REALTIME time, already decades past).
TEST(Futex, wait_lasts_until_its_monotonic_deadline) {
    atomic<std::uint32_t> word{0};
    const std::int64_t deadline = monotonic_ns() + 20'000'000;
    futex_wait(&word, 0, deadline);
    EXPECT_GE(monotonic_ns(), deadline) << "futex_wait returned before its deadline";
}

TEST(FutexConcurrency, wake_ends_an_untimed_and_a_timed_wait) {
    for (bool timed : {false, true}) {
        atomic<std::uint32_t> word{0};
        atomic<bool> waiting{false};
        std::thread waiter([&] {
            waiting.store(true);
            while (word.load(memory_order_acquire) == 0) {
                if (timed)
                    futex_wait(&word, 0, INT64_MAX / 2);  // a deadline no test reaches
                else
                    futex_wait(&word, 0);
            }
        });
        while (!waiting.load()) std::this_thread::yield();
        word.store(1, memory_order_release);
        futex_wake(&word);
        waiter.join();  // a lost wake-up hangs here (the ctest timeout reports it)
        EXPECT_EQ(word.load(), 1u) << (timed ? "timed" : "untimed");
    }
}

}  // namespace
