// Class: requirement. C++ exception state is per kernel thread
// (__cxa_eh_globals: the caught-exception stack and the uncaught count); the
// runtime carries it with each weft thread. A weft thread that blocks inside a
// catch block, or during unwinding, while other weft threads throw and catch on
// the same worker must find its own state when it resumes.
#include <atomic>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/weft_test.hpp"

namespace {

class Exceptions : public wt::runtime_fixture {};
INSTANTIATE_TEST_SUITE_P(Serial, Exceptions, ::testing::ValuesIn(wt::rt_params_one_worker()), wt::rt_param_name);
INSTANTIATE_TEST_SUITE_P(Concurrent, Exceptions, ::testing::ValuesIn(wt::rt_params_multi()), wt::rt_param_name);

std::string what_of(const std::exception_ptr& p) {
    try {
        if (p) std::rethrow_exception(p);
    } catch (const std::exception& e) {
        return e.what();
    } catch (...) {
        return "(not a std::exception)";
    }
    return "(none)";
}

TEST_P(Exceptions, current_exception_survives_blocking_in_catch) {
    weft_sem_t a_blocked, b_done;
    weft_sem_init(&a_blocked, 0);
    weft_sem_init(&b_done, 0);
    std::string a_before, a_after, b_seen;
    weft_thread_t a = wt::go([&] {
        try {
            throw std::runtime_error("exception of A");
        } catch (const std::runtime_error&) {
            a_before = what_of(std::current_exception());
            weft_sem_post(&a_blocked);
            weft_sem_wait(&b_done);  // B throws and catches meanwhile
            a_after = what_of(std::current_exception());
        }
    });
    weft_thread_t b = wt::go([&] {
        weft_sem_wait(&a_blocked);
        try {
            throw std::logic_error("exception of B");
        } catch (const std::logic_error&) {
            b_seen = what_of(std::current_exception());
            weft_thread_yield();
        }
        weft_sem_post(&b_done);
    });
    wt::join(a);
    wt::join(b);
    EXPECT_EQ(a_before, "exception of A");
    EXPECT_EQ(b_seen, "exception of B");
    EXPECT_EQ(a_after, "exception of A");
    EXPECT_EQ(what_of(std::current_exception()), "(none)") << "main has no current exception";
}

TEST_P(Exceptions, rethrow_after_blocking_rethrows_own_exception) {
    weft_sem_t s;
    weft_sem_init(&s, 0);
    std::string caught_outer;
    weft_thread_t a = wt::go([&] {
        try {
            try {
                throw std::runtime_error("mine");
            } catch (...) {
                weft_sem_wait(&s);
                throw;  // must rethrow "mine", not whatever another thread caught
            }
        } catch (const std::exception& e) {
            caught_outer = e.what();
        }
    });
    weft_thread_t b = wt::go([&] {
        try {
            throw std::runtime_error("theirs");
        } catch (...) {
            weft_thread_yield();
            weft_sem_post(&s);
            weft_thread_yield();
        }
    });
    wt::join(a);
    wt::join(b);
    EXPECT_EQ(caught_outer, "mine");
}

TEST_P(Exceptions, main_catch_block_survives_other_threads) {
    std::string after;
    try {
        throw std::runtime_error("main's");
    } catch (...) {
        std::vector<weft_thread_t> ts;
        for (int i = 0; i < 8; ++i)
            ts.push_back(wt::go([] {
                try {
                    throw std::runtime_error("child's");
                } catch (...) {
                    weft_thread_yield();
                }
            }));
        for (auto t : ts) wt::join(t);
        after = what_of(std::current_exception());
    }
    EXPECT_EQ(after, "main's");
}

TEST_P(Exceptions, uncaught_count_is_per_thread) {
    weft_sem_t s;
    weft_sem_init(&s, 0);
    int in_dtor = -1, a_after = -1, b_seen = -1;
    struct blocks_in_dtor {
        weft_sem_t* s;
        int* in_dtor;
        int* after;
        ~blocks_in_dtor() {
            *in_dtor = std::uncaught_exceptions();
            weft_sem_wait(s);  // blocks while unwinding
            *after = std::uncaught_exceptions();
        }
    };
    weft_thread_t a = wt::go([&] {
        try {
            blocks_in_dtor guard{&s, &in_dtor, &a_after};
            throw std::runtime_error("unwinding");
        } catch (...) {
        }
    });
    weft_thread_t b = wt::go([&] {
        b_seen = std::uncaught_exceptions();
        weft_sem_post(&s);
    });
    wt::join(a);
    wt::join(b);
    EXPECT_EQ(in_dtor, 1);
    EXPECT_EQ(b_seen, 0) << "another thread's unwinding leaked into this one";
    EXPECT_EQ(a_after, 1);
}

TEST_P(Exceptions, many_threads_block_in_catch_blocks) {
    const int n = 64;
    weft_barrier_t bar;
    weft_barrier_init(&bar, n);
    std::atomic<int> wrong{0};
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < n; ++i)
        ts.push_back(wt::go([&, i] {
            std::string mine = "exception " + std::to_string(i);
            try {
                throw std::runtime_error(mine);
            } catch (...) {
                weft_barrier_wait(&bar);  // everyone is inside a catch block now
                for (int k = 0; k < 3; ++k) {
                    weft_thread_yield();
                    if (what_of(std::current_exception()) != mine) wrong.fetch_add(1);
                }
                weft_barrier_wait(&bar);
                if (what_of(std::current_exception()) != mine) wrong.fetch_add(1);
            }
            if (std::current_exception()) wrong.fetch_add(1);
        }));
    for (auto t : ts) wt::join(t);
    EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
