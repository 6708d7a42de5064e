// Class: requirement. The blocking rule of README.md and docs/api.md, shown on
// one worker, where nothing but a weft call can hand the worker to another
// weft thread:
//   - weft_sleep_ns blocks only the calling weft thread: while it sleeps, the
//     other weft thread of the worker runs;
//   - a blocking system call (here nanosleep(2)) blocks the whole worker: the
//     other weft thread runs only after it has returned.
// The tests assert the order of events, not how long anything took: the
// sleeper of the first test sleeps until the other thread has run (so it
// cannot wake first, however the kernel schedules the worker), and on one
// worker nothing runs during a system call but the thread that made it.
#include <time.h>

#include <atomic>
#include <string>
#include <vector>

#include "support/weft_test.hpp"

namespace {

class BlockingRule : public ::testing::TestWithParam<const char*> {
protected:
    void SetUp() override {
        weft_config_t cfg = wt::config(1, GetParam());
        ASSERT_EQ(weft_init(&cfg), 0);
    }
    void TearDown() override { EXPECT_EQ(weft_finalize(), 0); }

    // Runs `sleeper` and `other` as two weft threads; `other` waits (yielding)
    // until the sleeper is about to sleep, then logs "other ran". Returns the log.
    template <class Sleep>
    std::vector<std::string> run(Sleep sleep) {
        std::vector<std::string> log;  // one worker: the threads never run at once
        bool sleeping = false;
        bool other_ran = false;
        weft_thread_t a = wt::go([&] {
            sleeping = true;
            log.push_back("sleeper sleeps");
            sleep(other_ran);
            log.push_back("sleeper wakes");
        });
        weft_thread_t b = wt::go([&] {
            while (!sleeping) weft_thread_yield();
            log.push_back("other ran");
            other_ran = true;
        });
        wt::join(a);
        wt::join(b);
        return log;
    }
    wt::watchdog dog_{wt::default_test_limit(), "BlockingRule"};
};

TEST_P(BlockingRule, weft_sleep_blocks_only_the_calling_thread) {
    std::vector<std::string> log = run([](const bool& other_ran) {
        // Until the other thread has run: a weft sleep that held the worker
        // would never end (the watchdog would report the hang).
        while (!other_ran) EXPECT_EQ(weft_sleep_ns(1'000'000), 0);
    });
    EXPECT_EQ(log, (std::vector<std::string>{"sleeper sleeps", "other ran", "sleeper wakes"}));
}

TEST_P(BlockingRule, a_blocking_system_call_blocks_the_worker) {
    bool ran_during_sleep = true;
    std::vector<std::string> log = run([&](const bool& other_ran) {
        for (int i = 0; i < 3; ++i) {
            timespec ts{0, 1'000'000};
            nanosleep(&ts, nullptr);
        }
        ran_during_sleep = other_ran;
    });
    EXPECT_FALSE(ran_during_sleep);
    EXPECT_EQ(log, (std::vector<std::string>{"sleeper sleeps", "sleeper wakes", "other ran"}));
}

INSTANTIATE_TEST_SUITE_P(Sched, BlockingRule, ::testing::Values("fifo", "lifo", "dfs", "ws"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
