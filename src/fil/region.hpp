// weft::detail::fil — regions, participants and servers.
//
// Glossary (docs/design/filaments.md has the long form):
//   filament     a function and its arguments; no stack, no context.
//   region       one call that runs filaments on every worker and returns when
//                they are all done (weft_fil_start, weft_fil_fj_run, the C++
//                fork_join / join / parallel_for / run).
//   participant  one worker's share of a region: its fork list, its sleep
//                semaphore, its counters. Indexed by worker.
//   server       the short-lived weft thread, pinned to its worker, that runs a
//                participant for a worker other than the caller's (the
//                paper's "server thread on each processor"). It exits when the
//                region ends.
//   caller       the weft thread that starts the region; it is the participant
//                of its own worker (pinned there until the region ends), or,
//                if external, waits on a semaphore.
//   hungry       the count of participants with nothing to run; forks are
//                pruned (turned into calls) while it is 0. Every participant
//                holds a copy of it (weft_fil_self_t_::hungry), changed all at
//                once by add_hunger.
//
// Files: region.{hpp,cpp} (the region's lifetime and run_region), server.cpp
// (the servers), fork_join.{hpp,cpp} (fork/join jobs: forks, joins, finding a
// job), sweep.{hpp,cpp} (iterative regions), sleepers.{hpp,cpp} (an idle
// participant's wait, sleep and wake-up), arena.{hpp,cpp}, available.{hpp,cpp}
// (is a worker available to run filaments).
//
// Lifetime: a region is one heap block shared by the caller and its servers
// through a reference count; the last one to leave frees it. A server may start
// after the region has ended (its worker was busy with another weft thread):
// it then only drops its reference.
#pragma once

#include <cstdint>
#include <exception>

#include "base/asymmetric_fence.hpp"
#include "base/primitives.hpp"
#include "core/sleep/stages.hpp"
#include "core/wait.hpp"
#include "fil/arena.hpp"
#include "fil/available.hpp"
#include "fil/list.hpp"
#include "fil/stats.hpp"
#include "weft/detail/filament_abi.hpp"
#include "weft/weft.h"

namespace weft::detail {
struct ult;
}

namespace weft::detail::fil {

struct region;
struct c_frame;

struct alignas(64) part {
    // --- Hot: read by the inline pruning test (weft_fil_self_ points here) ---
    weft_fil_self_t_ hot{};

    region* r = nullptr;
    ult* owner = nullptr;  // the weft thread serving this participant
    c_frame* frame = nullptr;  // the running C fork/join filament's frame
    int tree_next = 0;         // next tree child to send to (an offset 2^k)
    bool tree_done = false;    // every tree child has been sent work
    arena ar;
    counters st;

    // --- Touched by other participants ----------------------------------------
    alignas(64) fj_list list{&hot.queued};
    alignas(64) atomic<int> sleeping{0};  // 1: about to sleep or asleep on sem
    atomic<bool> joined{false};           // its server has started (or it is the caller's)
    atomic<bool> launched{false};         // its server exists (or it is the caller's); none is
                                          // launched for an unavailable worker (server.cpp)
    // Iterative regions: its worker is not available (available.hpp) for the
    // sweep being run; set by whoever publishes the sweep (sweep.cpp, with the phase).
    atomic<bool> away{false};
    // 1 while every count of this participant is in the statistics and it will
    // count nothing more before it wakes: asleep, or gone. The caller waits
    // for it before returning, so that weft_fil_stats_get after a region is exact.
    atomic<int> settled{0};
    weft_sem_t sem{};
};

// What differs between the kinds of region, one table per kind, as
// sched/policy.hpp's table is per policy: fork/join (fork_join.cpp,
// fork_join_region) and iterative (sweep.cpp, iterative_region). run_region
// (region.cpp) and the servers (server.cpp) call them; nothing else in them
// depends on the kind.
//
//   prepare(r, mine)   Required. The caller, before any server is launched:
//                      the kind's shared state and each participant's initial
//                      hunger. mine: the caller's worker, or -1 (external caller).
//                      May end the region at once (set `finished`).
//   launched(r, skipped)  Optional. The caller, once the servers are launched;
//                      `skipped` workers were unavailable and got none.
//   serve(p)           Required. A server's share of the region, until it ends.
//   lead(p)            Required. The share of a caller that is a weft thread (p:
//                      its worker's participant), until the region ends for it.
//   quiesce(r)         Optional. The caller, once the region has ended, before
//                      it waits for the servers to settle.
struct region_ops {
    void (*prepare)(region* r, int mine);
    void (*launched)(region* r, int skipped);
    void (*serve)(part* p);
    void (*lead)(part* p);
    void (*quiesce)(region* r);
};

// The shared state of an iterative region (sweep.cpp).
//
// phase = (sweep number << 16) | index of the pool set being swept. Sweep
// numbers start at 1 and grow by one per pool-set sweep. One word, so that a
// participant never pairs a sweep number with another sweep's set.
//
// Memory ordering: the worker that finishes the last pool of a sweep (its
// fetch_sub on `left` is acq_rel, so it sees every other pool's writes) runs
// the after function, stores `left` for the next sweep, then publishes the
// next phase with a release store; participants load it with acquire before
// claiming pools, so they see the after function's writes and the new `left`.
struct iter_state {
    const weft_fil_poolset_t* sets = nullptr;
    int nsets = 0;
    alignas(64) atomic<std::uint64_t> phase{0};
    atomic<std::int64_t> left{0};  // pools of the current sweep not finished
    atomic<bool> done{false};
    // Participants reading the sets and pools right now. The caller returns
    // only when it is 0 after `done`: the program may free its pools then.
    // A participant enters (seq_cst increment) and then checks `done`; the
    // finisher stores `done` (seq_cst) and the caller then reads `active`:
    // store-buffering, so one of them sees the other.
    atomic<int> active{0};
};

struct alignas(64) region {
    // --- Set before the servers start, read-only afterwards -------------------
    const region_ops* ops = nullptr;
    int nparts = 0;
    int root = 0;             // worker of the caller (0 for an external caller)
    bool receiver_initiated = true;
    bool pruning = true;
    // Each participant keeps one job on its list while it can (fj_list::
    // keep_ready): set by the kind's prepare.
    bool keep_ready = false;
    // Pruned forks are counted (the runtime measures): the counting bias is
    // in every copy of the hunger word. Otherwise they are not counted at all.
    bool count_pruned = false;
    part* parts = nullptr;
    iter_state* it = nullptr;
    void (*root_fn)(void*) = nullptr;
    void* root_ctx = nullptr;
    // An external caller's root filament, queued on worker 0's list. It lives
    // here, not on the caller's stack: whoever runs it holds a reference.
    struct external_root {
        weft_fil_job_ hdr;
        region* r;
    } root_job{};
    weft_fil_latch_ root_latch{};

    // --- Shared state ----------------------------------------------------------
    alignas(64) atomic<int> sleepers{0};
    atomic<bool> finished{false};
    atomic<int> refs{0};
    atomic<bool> failed{false};
    spinlock error_lock;
    std::exception_ptr error;  // the first exception (guarded by error_lock)
    weft_sem_t external_done{};  // an external caller waits here

    iter_state iter;  // iterative regions (it points here); servers may read it
                      // until they leave, so it lives in the region, not on a stack
};

// The participant of the calling kernel thread, or null.
inline part* self() { return reinterpret_cast<part*>(weft_fil_current_()); }
// The caller's participant if the calling *weft thread* serves it; null when
// outside any region or when another weft thread runs on a worker whose
// participant is blocked (in that case the worker must not touch it).
part* self_checked();

// Runs r (fork/join: r->root_fn; iterative: r->it) with a participant on every
// worker. Returns 0, ECANCELED (r->error holds the exception) or EAGAIN/ENOMEM.
// exc: if non-null, receives the exception (a std::exception_ptr*).
int run_region(region* r, void* exc);
region* new_region(const region_ops& ops);  // null: out of memory
void drop_region(region* r);                // before run_region, when setup failed
// Drops one reference to r (caller or server leaving); the last one frees it.
void release_region(region* r);

// Servers (server.cpp). Launches the pinned server of participant i unless it
// has one (a worker taken back while an iterative region runs: sweep.cpp).
// Returns 0 or create_ult's error.
int launch_server(region* r, int i);
// One server per available worker but `skip`. *skipped: how many workers were
// not available. Returns 0 or the first launch_server error.
int launch_servers(region* r, int skip, int* skipped);

// Records e as the region's failure if it is the first.
void fail(region* r, std::exception_ptr e);

// Adds p's counters to its worker's statistics and clears them (owner only).
void flush(part* p);
// Adds delta to every participant's copy of the hunger word (a participant
// runs dry or finds work): each copy receives every delta, so each converges
// to the true count whatever the order of concurrent changes.
inline void add_hunger(region* r, int delta) {
    for (int i = 0; i < r->nparts; ++i) r->parts[i].hot.hungry.add(delta);
}
// Puts b in every participant's copy for the whole region (counting, no_pruning).
inline void set_hunger_bias(region* r, hunger_word::bias b) {
    for (int i = 0; i < r->nparts; ++i) r->parts[i].hot.hungry.set(b);
}
// The count as participant p sees it (with pruning off it is meaningless, and
// nobody asks).
inline int hunger(const part* p) { return p->hot.hungry.count(); }
// p's list keeps a job ready and is empty: p's next fork goes to the list.
inline bool ready_job_missing(const part* p) { return p->r->keep_ready && p->list.size() == 0; }
// A fork is wanted: a participant is hungry, or p's list lacks its ready job.
inline bool fork_wanted(const part* p) { return hunger(p) > 0 || ready_job_missing(p); }

}  // namespace weft::detail::fil
