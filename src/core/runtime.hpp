// weft::detail — the runtime: its workers (core/worker.hpp), the dispatch loop, parking.
//
// Design essay (see also docs/design/core.md)
// -------------------------------------------
// Workers are kernel threads. Each runs one ult at a time and switches directly
// from ult to ult (no trip through a scheduler context): the switching ult picks
// its successor from the policy and jumps to it. Whatever must happen only after
// the old ult's registers are saved — putting it back in a queue, releasing the
// lock of the primitive it blocks on, recycling its stack when it has finished —
// is recorded in the worker as a *post-switch action* and run by the code that
// resumes on the worker right after the switch (after_switch). When a worker has
// nothing to run it switches to its idle ult, which spins briefly, then parks.
//
// A ult may be made ready before its worker has finished switching away from it
// (yield and spawn queue the old ult first, then switch): the worker that picks
// it waits for ult::suspended, set right after the switch. So readying needs no
// post-switch step, and a yield costs one queue operation.
//
// Parking: an idle worker spins, yields, then parks on its own futex word with
// the core's one sleep/wake protocol (announce in `parked` and `sleepers`,
// heavy fence, one more look, block; wakers: light fence, `sleepers` check).
// The protocol, its fences and the proof that no wake-up is lost are in
// core/sleep/README.md; the code is worker.cpp.
//
// Rejected: a scheduler context per worker (two switches per hand-off); one
// condition variable for all sleepers (wakes the wrong worker for pinned ults).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "arch/stack.hpp"
#include "base/primitives.hpp"
#include "core/active.hpp"
#include "core/env.hpp"
#include "core/handle.hpp"
#include "core/ult.hpp"
#include "core/worker.hpp"
#include "sched/policy.hpp"

namespace weft::detail {

class timer_heap;
namespace adapt {
class service;
}

struct runtime {
    settings cfg;
    const sched_policy_def* policy = nullptr;
    void* policy_state = nullptr;
    int nworkers = 0;
    std::vector<std::unique_ptr<worker>> workers;
    std::unique_ptr<arch::stack_pool> stacks;
    std::unique_ptr<timer_heap> timers;
    handle_table handles;  // what every weft_thread_t of this runtime names
    ult* main = nullptr;
    bool deadlock_detection = true;
    // The adaptive controller (src/adapt), or null (WEFT_ADAPT=off, one worker).
    // Started by weft_init, stopped first thing by weft_finalize.
    adapt::service* adapt = nullptr;

    alignas(64) atomic<std::int64_t> external_live{0};  // ults created by external kernel threads
    atomic<std::uint64_t> external_created{0};
    atomic<std::uint64_t> max_live_base{0};  // max live as of the last stats reset
    atomic<std::uint64_t> id_blocks{0};
    atomic<std::uint64_t> wakeups{0};

    // Parking (core/sleep/README.md). `sleepers` counts the parked active
    // workers (those notify_work may wake), `dormant` the parked dropped ones.
    // `spinner` is the spinning worker, the one idle worker that looks for
    // work in the other workers' shares (null: none): read by every push that
    // finds a sleeper, written when the role changes hands.
    alignas(64) atomic<int> sleepers{0};
    atomic<worker*> spinner{nullptr};
    // The keep watcher: a parked worker that, while the spinner keeps the
    // role for a thread it runs, sleeps at most tun::ws_keep_watch_ns at a
    // time and takes the role once the keep has run out with work queued
    // (null: none). Read by a push that a keep holds back.
    atomic<worker*> keep_watcher{nullptr};
    atomic<int> dormant{0};
    spinlock park_lock;
    std::vector<worker*> parked;
    atomic<bool> stopping{false};

    // Workers 0..active-1 run threads; the others are dropped (core/active.hpp)
    // and serve only their inboxes. = nworkers when adaptation is off.
    // Read-mostly: its own line.
    alignas(64) atomic<int> active{0};
    std::vector<active_change> active_log;     // its changes, when tracing (active.cpp's mutex)
    atomic<std::uint64_t> workers_dropped{0};  // statistics: by set_active_workers
    atomic<std::uint64_t> workers_added{0};
    atomic<std::uint64_t> adapt_readings{0};  // by the controller (src/adapt)

    // Ults made ready by external kernel threads.
    alignas(64) ult_queue inject;

    // Main (weft_finalize, or main's weft_thread_exit) waits on finalize_rec,
    // guarded by finalize_lock, until it is the last ult. finalize_waiting tells
    // ending ults to check (asymmetric-fence handshake, see thread.cpp).
    atomic<bool> finalize_waiting{false};
    std::uint32_t finalize_lock = 0;
    struct wait_record* finalize_rec = nullptr;
};

// The running runtime, or null. Set by init, cleared by finalize.
extern runtime* g_rt;

// What weft reports when the process ends (WEFT_STATS, the WEFT_TRACE file):
// registered with atexit at init; libweft-pthread's _exit calls it too.
void write_exit_reports();

// Set while a subsystem keeps weft threads of its own that only its own end
// stops (src/net's job: the naming server, until weft_net_finalize): it
// prints why and returns an errno, and weft_finalize returns that instead of
// waiting for those threads for good.
extern atomic<int (*)()> g_finalize_refusal;

// Ensures the runtime runs (initialising it from the environment on first use).
// Returns the calling worker or null if the caller is an external kernel thread.
worker* ensure_runtime();

// fork() from a process running weft (libweft-pthread's atfork handlers,
// src/shim/fork.cpp). fork_quiesce, first, closes the fork gate and waits
// until no other kernel thread holds one of the runtime's spinlocks
// (base/fork_gate.hpp); the caller must hold none. fork_prepare then takes the runtime's process-wide locks (its
// start-up lock, key creation) so that no other kernel thread holds one when
// the process is copied; fork_parent releases them. fork_child, in the child
// (one kernel thread: the forking one), releases them and starts a fresh
// runtime of one worker on this kernel thread, whose main weft thread is the
// thread that forked (its stack, keys and name kept); the old runtime, whose
// other workers do not exist in the child, is abandoned, not freed. It takes
// the old runtime's policy and stack size, statistics off (the parent prints
// its own). Returns 0 or the error of the new runtime's start.
void fork_quiesce();
void fork_prepare();
void fork_parent();
int fork_child();

}  // namespace weft::detail
