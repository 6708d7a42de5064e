// The ws policy's tests (sched_ws_*_test.cpp): the runtime for one test, and
// the programs they run (a recorded fork tree, a spinning binary tree, a
// serial chain), with the counts they must give.
#pragma once

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

namespace ws_test {

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

inline weft_thread_t spawn(void* (*fn)(void*), void* arg) {
    weft_thread_t t = WEFT_THREAD_NULL;
    EXPECT_EQ(weft_thread_create(&t, nullptr, fn, arg), 0);
    return t;
}
inline void join(weft_thread_t t) { EXPECT_EQ(weft_thread_join(t, nullptr), 0); }

// Runs f on a new weft thread and joins it. Test bodies run there, not on
// main: main is special to the core (it is pinned to worker 0 while it
// finalizes, and a pinned parent is never preempted by its child), and the
// orders asserted below are those of ordinary threads.
template <class F>
inline void on_weft_thread(F&& f) {
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

inline void* visit(void* p);

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

inline void* visit(void* p) {
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

inline std::vector<std::uint32_t> run_tree(int depth, bool serial) {
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

inline constexpr int tree_depth = 5;
inline constexpr std::uint32_t tree_nodes = 364;  // 1 + 3 + ... + 3^5; 364 starts + 3 * 121 joins = 727 events

// --- A spinning tree ----------------------------------------------------------
// A balanced binary fork tree whose leaves spin for a while: enough work for
// the second worker to steal. Returns the number of leaves run.
struct spin_tree_arg {
    int depth;
    std::atomic<std::uint64_t>* leaves;
};

inline void* spin_tree(void* p) {
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

inline std::uint64_t run_spin_tree(int depth) {
    std::atomic<std::uint64_t> leaves{0};
    spin_tree_arg root{depth, &leaves};
    spin_tree(&root);
    return leaves.load();
}

// --- A serial chain -------------------------------------------------------------
// Each node spawns its children one at a time and joins each before the next
// (knary's serial children): nothing can run in parallel, but every
// continuation waits in the deque, stealable, until its child returns.

struct chain_arg {
    int depth;
    std::atomic<std::uint64_t>* nodes;
};

inline void* chain(void* p) {
    auto* a = static_cast<chain_arg*>(p);
    a->nodes->fetch_add(1, std::memory_order_relaxed);
    if (a->depth == 0) return nullptr;
    for (int i = 0; i < 3; ++i) {
        chain_arg c{a->depth - 1, a->nodes};
        join(spawn(chain, &c));
    }
    return nullptr;
}

inline std::uint64_t run_chain(int depth) {
    std::atomic<std::uint64_t> nodes{0};
    chain_arg root{depth, &nodes};
    chain(&root);
    return nodes.load();
}

constexpr std::uint64_t chain_nodes(int depth) { return depth < 0 ? 0 : 1 + 3 * chain_nodes(depth - 1); }

}  // namespace ws_test
