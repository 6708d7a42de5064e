// weft::detail — a worker: one kernel thread that runs ults, one at a time.
//
// Fields are grouped by who touches them, each group on its own cache line:
// the owner's switch path, the statistics others read, and the words other
// workers write (wake-up, inbox). What the runtime does with them is told in
// runtime.hpp (dispatch), core/sleep/README.md (parking) and worker.cpp (the
// idle loop); the statistics are read and reset in stats.cpp
// (weft_stats_get/_reset) and, for the filament counters, src/fil/stats.cpp
// (weft_fil_stats_get/_reset).
#pragma once

#include <pthread.h>

#include <cstdint>

#include "arch/stack.hpp"
#include "base/primitives.hpp"
#include "core/handle.hpp"
#include "core/ult.hpp"
#include "core/ult_queue.hpp"

namespace weft::detail {

// The filament counters of a worker: one per field of weft_fil_stats_t, in
// its order (src/fil/stats.cpp maps them).
inline constexpr int fil_stat_fields = sizeof(weft_fil_stats_t) / sizeof(std::uint64_t);
static_assert(sizeof(weft_fil_stats_t) == fil_stat_fields * sizeof(std::uint64_t), "weft_fil_stats_t is all uint64_t");

enum class post_switch : std::uint8_t {
    none,
    unlock,       // release the spinlock word pending_lock (the old ult blocked)
    finish_prev,  // the old ult has exited: publish its end, recycle it
};

struct alignas(64) worker {
    // --- Owner only, touched on every switch --------------------------------
    ult* current = nullptr;
    ult* idle = nullptr;
    post_switch pending = post_switch::none;
    std::uint32_t* pending_lock = nullptr;
    ult* prev = nullptr;               // the ult switched away from (post-switch)
    ult* handoff = nullptr;            // the idle ult switches to it next (switch_to)
    bool in_handoff = false;           // the idle ult is in run_post_switch's handoff loop
    void* eh_globals = nullptr;        // this kernel thread's __cxa_eh_globals
    void* kernel_tp = nullptr;         // thread pointer for its ults without one of their own (ult::tp)
    arch::stack_cache stacks;
    handle_cache handles;              // free thread-handle slots
    std::uint64_t id_next = 0;         // ids handed out in blocks, no shared counter
    std::uint64_t id_end = 0;
    int index = 0;
    // The spinlocks this kernel thread holds (base/primitives.hpp): written by
    // the owner, read by a thread preparing fork() (base/fork_gate.hpp).
    spin_census census;

    // --- Statistics: written by the owner, read by anyone (relaxed) ---------
    alignas(64) atomic<std::uint64_t> switches{0};
    atomic<std::uint64_t> created{0};
    atomic<std::uint64_t> parks{0};
    atomic<std::uint64_t> idle_ns{0};
    // Live ults: +1 for each created here, -1 for each that ended here. Only the
    // owner writes (no locked instruction); the sum over workers is the count.
    atomic<std::int64_t> live_delta{0};
    atomic<std::uint64_t> max_live_seen{0};  // highest sum sampled at a creation here
    atomic<std::int64_t> live_high{0};       // highest live_delta here since the last reset
    atomic<std::int64_t> started_ns{0};  // stats epoch (reset by weft_stats_reset)
    // Work/span measurement (profile.hpp), owner-written.
    std::uint64_t strand_start = 0;                   // ticks: when the current strand began
    atomic<std::uint64_t> work_ticks{0};
    atomic<std::uint64_t> max_exit_path{0};
    struct trace_buffer* trace = nullptr;
    // Filament counters, added (relaxed fetch_add) when a participant leaves
    // a region or sleeps in one, and by a region's end: rarely, and sometimes
    // by another kernel thread (an external caller's region counts on worker
    // 0; a caller may end on another worker), hence lines of their own, off
    // those the switch path writes.
    alignas(64) atomic<std::uint64_t> fil[fil_stat_fields] = {};

    // --- Touched by others ---------------------------------------------------
    alignas(64) atomic<std::uint32_t> wake_word{0};  // futex: 1 = woken
    bool parked = false;                              // guarded by runtime::park_lock
    bool dormant = false;   // parked while dropped: in no wake list (guarded by park_lock)
    bool napping = false;   // in a policy's nap (policy.hpp, idle_nap_ns): in no wake list (park_lock)
    int park_cpu = -1;      // the CPU it last parked on (sched_getcpu; guarded by park_lock): sleep::parked_to_claim
    // Dropped by the adaptive controller (core/active.hpp): runs only its
    // inbox's pinned ults and leaves everything else to the active workers.
    atomic<bool> dropped{false};
    atomic<bool> idle_now{false};                     // in its idle ult (not running a ult)
    // While it is the spinning worker and runs a thread the policy let it
    // keep the role for (spinner_keep_ns), then through the nap that may
    // follow: the worker that thread came from, whose pushes leave it the
    // role (-1: it is looking, and no push takes the role); and, while it
    // runs the thread, until when (monotonic ns; 0 otherwise). Written by the
    // owner, read by pushes (notify_work).
    atomic<int> spin_for{-1};
    atomic<std::int64_t> spin_keep_until{0};
    ult_queue inbox;                                  // pinned ults ready for this worker

    pthread_t kthread{};
    bool has_kthread = false;
};

// Parking (worker.cpp; the protocol: core/sleep/README.md).
// notify_work: work was queued (by worker `self`, or null: an external
// thread); wake a parked worker to spin for it unless a worker spins already.
// wake_one_parked: wake one parked worker whoever spins (a new earliest
// timer). wake_worker: wake that worker (a ult pinned to it).
void notify_work(worker* self);
void wake_one_parked();
void wake_worker(worker* target);
void worker_idle_loop(worker* w);
// Whether w may have something to run besides its current ult: a ready ult
// (its own or one to steal), its inbox, a due timer, or a drop to obey (a hint:
// true may find nothing). For a ult that would rather poll than block while
// its worker has nothing else to do (progress.hpp, poll_before_wait).
bool worker_may_have_work(worker* w);

}  // namespace weft::detail
