// weft::detail — the scheduling policy contract.
//
// The core (src/core) decides *when* a thread stops or starts running; a policy
// decides *which* ready thread a worker runs next. A policy is one file in
// src/sched/ that defines a `sched_policy_def` and registers it with
// WEFT_REGISTER_POLICY; nothing else in the tree changes (seed 000's closing wish).
//
// Callbacks (Argobots' ABT_sched_def style: who calls, when, what is undefined):
//
//   create(workers)          Required. Makes the policy's state for `workers`
//                            workers. Called once by weft_init.
//   destroy(self)            Required. Called once by weft_finalize, when no
//                            thread is queued.
//   spawn(self, w, parent, child)
//                            Required. Worker w has created `child` while running
//                            `parent`. Return true to run the child at once: the
//                            core switches to it and, once the parent's context is
//                            saved, calls ready(parent, reason::preempted_by_child).
//                            Return false after making the child ready yourself
//                            (the parent goes on).
//   ready(self, w, t, why)   Required. Thread t became runnable on worker w (why:
//                            spawned, woken, yielded, preempted_by_child). The
//                            policy now owns t until pick_next hands it out.
//                            t may still be finishing its switch away from its
//                            last worker; the core waits for that before it
//                            resumes t, so the policy need not care. Called only on workers
//                            (external wake-ups go through the core's inject queue).
//   pick_next(self, w)       Required. Removes and returns the thread worker w
//                            should run next, or nullptr if it has none.
//   yield_swap(self, w, t)   Optional. t (running on w) yields: queue it as
//                            ready(.., yielded) would and return the next ult
//                            for w, all in one operation; return t itself if
//                            it is the only one. Saves a queue round trip.
//   has_work(self, w)        Optional. A cheap, possibly stale hint used by idle
//                            workers while spinning: false may be wrong only if a
//                            ready() is racing with it (the parking protocol
//                            re-checks with pick_next after announcing sleep).
//   on_block(self, w, t)     Optional. t (running on w) is about to block in a weft
//                            primitive: it is neither running nor ready until a
//                            later ready(.., woken). Space-efficient policies keep
//                            its place in their order.
//   on_exit(self, w, t)      Optional. t (running on w) has finished.
//
// Threading: every callback may run concurrently on different workers; the
// policy does its own synchronization. Callbacks never block and never switch.
// Undefined: a thread handed out by pick_next twice without a ready() between.
#pragma once

#include <string>

namespace weft::detail {

struct ult;

enum class ready_reason : unsigned char {
    spawned,            // a new thread the parent did not run at once
    woken,              // unblocked by a primitive, a timer or join
    yielded,            // gave up the CPU voluntarily
    preempted_by_child, // its child runs first (spawn returned true)
};

struct sched_policy_def {
    const char* name;
    const char* description;
    void* (*create)(int workers);
    void (*destroy)(void* self);
    bool (*spawn)(void* self, int w, ult* parent, ult* child);
    void (*ready)(void* self, int w, ult* t, ready_reason why);
    ult* (*pick_next)(void* self, int w);
    ult* (*yield_swap)(void* self, int w, ult* t);  // optional
    bool (*has_work)(void* self, int w);       // optional
    void (*on_block)(void* self, int w, ult* t);  // optional
    void (*on_exit)(void* self, int w, ult* t);   // optional
};

// The registry. Policies register themselves at static-initialization time.
void register_policy(const sched_policy_def* def);
const sched_policy_def* find_policy(const char* name);
// "fifo, lifo" — the registered names, for error messages and help text.
std::string policy_names();

struct policy_registrar {
    explicit policy_registrar(const sched_policy_def* def) { register_policy(def); }
};

}  // namespace weft::detail

#define WEFT_REGISTER_POLICY(def) \
    static const ::weft::detail::policy_registrar weft_policy_registrar_##def{&def}
