// What the message-passing tests (src/net) share: a fixture that starts a job
// of in-process nodes on the test's runtime and ends it, and threads spawned
// on a given node.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "support/weft_test.hpp"
#include "weft/weft.h"

namespace wt {

class net_fixture : public single_runtime_fixture {
protected:
    // A job of `nodes` in-process nodes, with injected latency alpha + beta * bytes.
    void start(int nodes, std::int64_t alpha_ns = 0, std::int64_t beta_ns = 0) {
        weft_net_config_t c{};
        c.nodes = nodes;
        c.latency_alpha_ns = alpha_ns;
        c.latency_beta_ns = beta_ns;
        ASSERT_EQ(weft_net_init(&c), 0);
        started_ = true;
    }
    void TearDown() override {
        if (started_) {
            EXPECT_EQ(weft_net_finalize(), 0);
            started_ = false;
        }
        single_runtime_fixture::TearDown();
    }
    // Lets every other ready thread run until it blocks (one worker, fifo).
    static void let_others_run() {
        for (int i = 0; i < 8; ++i) weft_thread_yield();
    }
    bool started_ = false;
};

// A job of Nodes in-process nodes on runtime_fixture's runtime (every
// scheduler, the test's worker counts), started in SetUp and ended in TearDown.
template <int Nodes>
class net_job_fixture : public runtime_fixture {
protected:
    void SetUp() override {
        runtime_fixture::SetUp();
        if (HasFatalFailure()) return;
        weft_net_config_t c{};
        c.nodes = Nodes;
        ASSERT_EQ(weft_net_init(&c), 0);
        started_ = true;
    }
    void TearDown() override {
        if (started_) {
            EXPECT_EQ(weft_net_finalize(), 0);
        }
        runtime_fixture::TearDown();
    }
    bool started_ = false;
};

// A weft thread on `node` running (*f)(); f must outlive it.
template <class F>
weft_thread_t spawn_on(int node, F* f) {
    weft_thread_t t = WEFT_THREAD_NULL;
    EXPECT_EQ(weft_net_spawn(&t, node, nullptr,
                             [](void* a) -> void* {
                                 (*static_cast<F*>(a))();
                                 return nullptr;
                             },
                             f),
              0);
    return t;
}

// Runs f on a weft thread on `node` and joins it.
template <class F>
void run_on(int node, F f) {
    ASSERT_EQ(weft_thread_join(spawn_on(node, &f), nullptr), 0);
}

}  // namespace wt
