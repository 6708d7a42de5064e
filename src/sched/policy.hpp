// weft::detail — the scheduling policy contract.
//
// The core (src/core) decides *when* a thread stops or starts running; a policy
// decides *which* ready thread a worker runs next. A policy is one file in
// src/sched/ that defines a `sched_policy_def` and registers it with
// WEFT_REGISTER (core/registry.hpp); nothing else in the tree changes
// (Narlikar & Blelloch's closing wish). WEFT_SCHED names it.
//
// Callbacks (Argobots' ABT_sched_def style: who calls, when, what is undefined):
//
//   create(workers)          Required. Makes the policy's state for `workers`
//                            workers. Called once by weft_init.
//   destroy(self)            Required. Called once by weft_finalize, when no
//                            thread is queued.
//   spawn(self, w, parent, child)
//                            Required. Worker w has created `child` while running
//                            `parent`, which is not pinned (see Pinned ults).
//                            Return true to run the child at once: the
//                            core switches to it and, once the parent's context is
//                            saved, calls ready(parent, reason::preempted_by_child).
//                            Return false after making the child ready yourself
//                            (the parent goes on).
//   ready(self, w, t, why)   Required. Thread t became runnable on worker w (why:
//                            spawned, woken, yielded, preempted_by_child,
//                            preempted). The policy now owns t until pick_next
//                            hands it out. t may still be finishing its switch
//                            away from its last worker; the core waits for that
//                            before it resumes t, so the policy need not care.
//                            Called only on workers (external wake-ups go
//                            through the core's inject queue). `spawned`: t is
//                            a new thread whose parent goes on running, because
//                            the parent is pinned (see Pinned ults) or w is
//                            dropped (see Dropped workers); the parent is the
//                            ult running on w, current_ult() (declared below):
//                            the one way a policy learns the parent of a child
//                            it was not given through spawn.
//   pick_next(self, w)       Required. Removes and returns the thread worker w
//                            should run next, or nullptr if it has none.
//   yield_swap(self, w, t)   Optional. t (running on w) yields: queue it as
//                            ready(.., yielded) would and return the next ult
//                            for w, all in one operation; return t itself if
//                            it is the only one. Saves a queue round trip.
//   idle_nap_ns(self, w)     Optional. Asked by w's idle loop before each look
//                            for work: how long w should sleep first (0: look
//                            now). A nap is a timed sleep in no wake list:
//                            notify_work does not end it, only its deadline, a
//                            pinned ult for w (wake_worker) or the runtime's
//                            stop. For a policy whose idle workers find work
//                            that they cannot use (ws: a stolen continuation
//                            that blocks at once): it gives the CPU back where
//                            a park would be undone by the next push.
//   pick_local(self, w)      Optional. As pick_next, but only from what is w's
//                            own (ws: its deques), never another worker's: the
//                            look of an idle worker that is not the spinning
//                            worker (core/sleep/README.md, "The spinning
//                            worker"), which leaves other workers' shares to
//                            the spinner. Absent: the policy has no per-worker
//                            share (fifo, lifo, dfs: one shared queue, which
//                            every idle worker may look at), and pick_next is
//                            used.
//   spinner_keep_ns(self, w, t, from)
//                            Optional. Worker w, the spinning worker, has just
//                            found t (from pick_next). Return > 0 to keep the
//                            spinning role while w runs t, and through the nap
//                            that may follow (idle_nap_ns), setting *from to
//                            the worker t was taken from; 0 to hand the role
//                            on at once (the default). While w keeps it, a
//                            push by *from leaves it there for the returned
//                            nanoseconds (that worker's pushes are the chain t
//                            came from), and a push by t itself or by any
//                            other worker takes it back. For a policy that
//                            knows t is likely to stop at once without making
//                            work (ws: a steal in a run of futile steals), so
//                            that no other worker is woken to spin for the
//                            chain.
//   has_work(self, w)        Optional. A cheap, possibly stale hint used by idle
//                            workers while spinning: false may be wrong only if a
//                            ready() is racing with it (the parking protocol
//                            re-checks with pick_next after announcing sleep).
//   add_stats(self, out)     Optional. Adds the policy's own figures (steals,
//                            quota preemptions, ...) to *out (weft_stats_get).
//   reset_stats(self)        Optional. Clears them (weft_stats_reset).
//   space                    Optional: the hooks of a space-efficient policy
//                            (Narlikar & Blelloch: every live thread holds a place in one
//                            global order, and a memory quota bounds what a
//                            thread allocates between two scheduling points).
//                            All five or none: registration refuses a
//                            partial set. A policy that orders only its ready
//                            threads (fifo, lifo, ws) leaves `space` out.
//   space.on_block(self, w, t)
//                            t (running on w) is about to block in a weft
//                            primitive: it is neither running nor ready until
//                            a later ready(.., woken). The policy keeps its
//                            place in the order.
//   space.on_exit(self, w, t)
//                            t (running on w) has finished. Called after the
//                            core has chosen w's next ult (pick_next or
//                            space.on_run) and woken t's joiner, before the
//                            switch: until then t may still count as running
//                            on w.
//   space.on_alloc(self, w, t, bytes, net, quota)
//                            t, running on w, is about to allocate `bytes`
//                            through weft's allocator (src/mem), having
//                            allocated `net` bytes (allocations minus frees,
//                            may be negative) since it was last scheduled;
//                            `quota` is WEFT_QUOTA. Returns what the allocator
//                            must do before the allocation goes ahead:
//                            nothing, preempt t (the core makes it ready with
//                            ready_reason::preempted and runs what pick_next
//                            says, possibly t again), or fork `dummies` dummy
//                            threads as a binary tree and join them. Without
//                            space hooks the allocator only keeps the heap
//                            accounting.
//   space.on_run(self, w, t) Worker w runs t without pick_next having handed
//                            it out: the joiner an exiting thread switches
//                            straight to, or a thread from the core's inject
//                            queue or w's inbox (what each worker runs, for
//                            alloc_turn).
//   space.alloc_turn(self, w, t, wait)
//                            t, running on w, has been delayed behind dummy
//                            threads and is about to make its large
//                            allocation. Return t with *wait false if it may
//                            go ahead; t with *wait true if it should wait a
//                            moment (higher-priority work is running
//                            elsewhere); or another ult for w to run first,
//                            after queueing t as ready (one operation, as
//                            yield_swap). The core asks again each time t
//                            runs, a bounded number of times
//                            (src/core/preempt.cpp).
//
// Data (not a callback):
//   idle_yield_rounds        Optional (0: the core's default). An idle worker
//                            (with pick_local: the spinning worker only)
//                            first spins: tun::idle_spins failed looks for work
//                            (has_work, then pick_next), each followed by a
//                            pause; then a few sched_yield()s; then it parks.
//                            If > 0, the spin phase is instead this many failed
//                            looks, each followed by a sched_yield(). For policies
//                            whose look is a round of steal attempts (ws): Arora,
//                            Blumofe & Plaxton's "yield between failed steal
//                            attempts", which lets a descheduled worker holding
//                            work have the CPU when the machine is
//                            multiprogrammed.
//
// Pinned ults: a ult whose pinned_worker is >= 0 may run on that worker only
// (main while it finalizes; a filament region's caller for the region, and
// its servers, src/fil/server.cpp). The core keeps them out of the policy:
//   - a pinned ult that becomes ready goes to its worker's inbox (worker.hpp),
//     a FIFO the core serves before the inject queue, timers and pick_next
//     (pick, dispatch.cpp); no callback is ever given a pinned ult to queue
//     (ready, yield_swap, space.alloc_turn), and pick_next never hands one out;
//     the space hooks on_block, on_exit and on_run do see them (a pinned ult
//     blocks, ends and runs like any other);
//   - a pinned parent is never preempted by its child: its continuation would
//     wait in the inbox, where no other worker can take it, and a loop of
//     spawns would run one child at a time, on one worker, whatever the
//     policy. Instead of spawn, the core calls ready(child, spawned) on the
//     parent's worker, for every policy: the child waits in the policy like
//     any ready thread (any worker may take it) and the parent goes on. A
//     policy that places a child relative to its parent (dfs: immediately
//     before it in the serial order) finds the parent with current_ult().
// So no policy needs to know that pinning exists; one that reads
// ult::pinned_worker is wrong.
//
// Dropped workers: the adaptive controller (src/adapt, through
// core/active.hpp) may drop workers while the program runs. The core then
// never calls pick_next for a dropped worker (nor yield_swap, alloc_turn), and
// a child spawned there goes to ready(.., spawned) as a pinned parent's does;
// what the policy already holds for that worker (a ws deque) stays where it is
// and is taken by the others (steals). has_work and pick_next are asked by
// active workers only, and must find work wherever the policy keeps it, any
// worker's share included. A policy needs no other code for it.
//
// Threading: every callback may run concurrently on different workers; the
// policy does its own synchronization. Callbacks never block and never switch.
// Undefined: a thread handed out by pick_next twice without a ready() between.
//
// Policy-owned ult fields: q_next/q_prev only between ready() and pick_next()
// (the core links blocked ults through q_next in its inject and inbox queues);
// sched_word[] for the ult's whole life, from the first callback that names it
// to on_exit (the core never touches them; a fresh ult has them zeroed).
//
// Definitions use designated initializers (`.name = ..., .spawn = ...`), so a
// callback added here never touches existing policies: omitted ones are null.
// Registration checks the required callbacks and the all-or-none `space`
// group (contract_violation, below), and aborts with a message naming the
// policy and what is missing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/registry.hpp"
#include "weft/weft.h"

namespace weft::detail {

struct ult;

// The ult running on the calling worker (defined by the core): the parent of
// a child given to ready(.., spawned) (see Pinned ults).
ult* current_ult();

enum class ready_reason : unsigned char {
    spawned,            // a new thread whose parent goes on (pinned parent, dropped worker)
    woken,              // unblocked by a primitive, a timer or join
    yielded,            // gave up the CPU voluntarily
    preempted_by_child, // its child runs first (spawn returned true)
    preempted,          // stopped by the runtime at a scheduling point it chose
                        // (dfs: the memory quota ran out); unlike `yielded`,
                        // it competes for the worker at once with its priority
};

// What weft's allocator must do before an allocation goes ahead (on_alloc).
struct alloc_verdict {
    std::uint32_t dummies = 0;  // > 0: fork this many dummy threads (a binary tree), join them
    bool preempt = false;       // preempt the allocating thread first
};

// The hooks of a space-efficient policy (sched_policy_def::space): all or none.
struct sched_space_hooks {
    void (*on_block)(void* self, int w, ult* t) = nullptr;
    void (*on_exit)(void* self, int w, ult* t) = nullptr;
    alloc_verdict (*on_alloc)(void* self, int w, ult* t, std::size_t bytes, std::ptrdiff_t net,
                              std::size_t quota) = nullptr;
    void (*on_run)(void* self, int w, ult* t) = nullptr;
    ult* (*alloc_turn)(void* self, int w, ult* t, bool* wait) = nullptr;
};

struct sched_policy_def {
    static constexpr plug_kind kind{"scheduling policy", "src/sched/policy.hpp"};
    const char* name = nullptr;
    const char* description = nullptr;
    void* (*create)(int workers) = nullptr;
    void (*destroy)(void* self) = nullptr;
    bool (*spawn)(void* self, int w, ult* parent, ult* child) = nullptr;
    void (*ready)(void* self, int w, ult* t, ready_reason why) = nullptr;
    ult* (*pick_next)(void* self, int w) = nullptr;
    ult* (*yield_swap)(void* self, int w, ult* t) = nullptr;  // optional
    ult* (*pick_local)(void* self, int w) = nullptr;    // optional
    std::int64_t (*spinner_keep_ns)(void* self, int w, ult* t, int* from) = nullptr;  // optional
    bool (*has_work)(void* self, int w) = nullptr;       // optional
    std::int64_t (*idle_nap_ns)(void* self, int w) = nullptr;  // optional
    void (*add_stats)(void* self, weft_stats_t* out) = nullptr;  // optional
    void (*reset_stats)(void* self) = nullptr;                    // optional
    sched_space_hooks space{};                          // optional (see above)
    int idle_yield_rounds = 0;                          // optional (see above)
};

// What a definition gets wrong against this contract (core/registry.hpp asks
// when it registers): the required callbacks, the all-or-none space hooks.
inline const char* contract_violation(const sched_policy_def& def) {
    if (def.create == nullptr || def.destroy == nullptr || def.spawn == nullptr || def.ready == nullptr ||
        def.pick_next == nullptr)
        return "create, destroy, spawn, ready and pick_next are required";
    const sched_space_hooks& h = def.space;
    const int space = (h.on_block != nullptr) + (h.on_exit != nullptr) + (h.on_alloc != nullptr) +
                      (h.on_run != nullptr) + (h.alloc_turn != nullptr);
    if (space != 0 && space != 5)
        return "space needs all five hooks (on_block, on_exit, on_alloc, on_run, alloc_turn) or none";
    return nullptr;
}

}  // namespace weft::detail
