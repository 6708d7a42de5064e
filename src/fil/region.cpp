// weft::detail::fil — a region's lifetime: allocation, run_region, failure,
// release. Design: docs/design/filaments.md ("Regions and servers").
//
// Starting a region (run_region), numbered as in the design note:
//   1. The caller allocates the region with one participant per worker and,
//      if it is a weft thread, pins itself to its worker for the region (its
//      participant is indexed by that worker; a weft thread that blocks may
//      otherwise resume elsewhere).
//   2. It creates one detached server per other worker, pinned to it
//      (core/thread.hpp: pinned_worker). Servers go to their worker's inbox, outside
//      the scheduling policy, and run when that worker next schedules.
//   3. The caller runs its own participant; a server runs its participant when
//      it starts (or only drops its reference if the region has ended).
//   4. The region ends when `finished` is set: by the caller when the root
//      filament returns (fork/join), or by the worker that runs the last
//      after function (iterative). Every sleeper is then woken.
//   5. Each participant flushes its counters and drops its reference; the
//      last one frees the region.
// What differs between fork/join and iterative regions is in their
// region_ops (region.hpp); the servers are in server.cpp.
#include <sched.h>

#include <cerrno>
#include <new>

#include "base/asymmetric_fence.hpp"
#include "core/dispatch.hpp"
#include "core/profile.hpp"
#include "core/runtime.hpp"
#include "core/thread.hpp"
#include "core/ult.hpp"
#include "core/wait.hpp"
#include "fil/region.hpp"
#include "fil/sweep.hpp"

// The participant of the calling kernel thread. initial-exec: one %fs-relative
// load in the inline pruning test of weft::join (see filament.hpp).
extern "C" {
WEFT_API weft_fil_self_t_ weft_fil_outside_{.hungry = 1, .index = -1, .nparts = 0, .queued = {0}, .fork_limit = {0},
                                            .pruned = 0};
WEFT_API __thread __attribute__((tls_model("initial-exec"))) weft_fil_self_t_* weft_fil_self_ = &weft_fil_outside_;
}

namespace weft::detail::fil {

region* new_region(const region_ops& ops) {
    runtime* rt = g_rt;
    int n = rt != nullptr ? rt->nworkers : 1;
    void* mem = ::operator new(sizeof(region), std::align_val_t(64), std::nothrow);
    if (mem == nullptr) return nullptr;
    region* r = new (mem) region;
    void* pm = ::operator new(sizeof(part) * static_cast<std::size_t>(n), std::align_val_t(64), std::nothrow);
    if (pm == nullptr) {
        r->~region();
        ::operator delete(mem, std::align_val_t(64));
        return nullptr;
    }
    r->parts = static_cast<part*>(pm);
    for (int i = 0; i < n; ++i) {
        part* p = new (&r->parts[i]) part;
        p->r = r;
        p->hot.index = i;
        p->hot.nparts = n;
        p->hot.pruned = 0;
        p->hot.fork_limit.store(0, memory_order_relaxed);  // any frame may fork at first
        (void)weft_sem_init(&p->sem, 0);
    }
    r->ops = &ops;
    r->nparts = n;
    r->count_pruned = g_measure;
    (void)weft_sem_init(&r->external_done, 0);
    return r;
}

namespace {

void free_region(region* r) {
    for (int i = 0; i < r->nparts; ++i) {
        r->parts[i].ar.release_all();
        r->parts[i].~part();
    }
    ::operator delete(r->parts, std::align_val_t(64));
    r->~region();
    ::operator delete(r, std::align_val_t(64));
}

}  // namespace

void release_region(region* r) {
    // acq_rel: the last one to leave sees every other participant's writes
    // before it frees the block.
    if (r->refs.fetch_sub(1, memory_order_acq_rel) == 1) free_region(r);
}

// Adds p's counters to its worker's statistics and clears them.
void flush(part* p) {
    // Uncounted regions still count the few forks pruned off the inline fast
    // path; dropped, so that forks_pruned is all the pruned forks or none.
    if (p->r->count_pruned) p->st.pruned += p->hot.pruned;
    p->hot.pruned = 0;
    stats_flush(p->hot.index, p->st);
    p->st = counters{};
}

void drop_region(region* r) { free_region(r); }

void fail(region* r, std::exception_ptr e) {
    lock_guard<spinlock> g(r->error_lock);
    if (!r->error) r->error = std::move(e);
    r->failed.store(true, memory_order_release);
}

part* self_checked() {
    part* p = self();
    if (p == nullptr) return nullptr;
    // A filament that blocked leaves weft_fil_self_ set while other weft threads
    // run on its worker: they must not use its participant.
    worker* w = current_worker();
    if (w == nullptr || p->owner != w->current) return nullptr;
    return p;
}

int run_region(region* r, void* exc) {
    worker* w = current_worker();
    // A caller on a dropped worker (core/active.hpp) moves to an active one
    // first: pinned there for the region, it would keep the dropped worker
    // running (its participant sitting out) while the active ones do the work.
    while (w != nullptr && !available(w->index) && w->current->pinned_worker < 0) w = yield(w);
    // The start of a region is a scheduling point for what is pinned to this
    // worker (another region's server, an ASAT barrier test: Severance &
    // Enbody test between two parallel loops): a caller that runs every sweep
    // itself would otherwise never let it run.
    if (w != nullptr && w->inbox.maybe_nonempty() && w->current->pinned_worker < 0) w = yield(w);
    ult* me = w != nullptr ? w->current : nullptr;
    int mine = w != nullptr ? w->index : -1;
    r->root = mine >= 0 ? mine : 0;
    r->refs.store(1, memory_order_relaxed);
    r->ops->prepare(r, mine);
    // Pruning off: a bias that keeps the inline test failing, so that every
    // fork reaches fork_job (the participants' +1/-1 leave it in place).
    if (!r->pruning) set_hunger_bias(r, hunger_word::no_pruning);
    if (r->count_pruned) set_hunger_bias(r, hunger_word::counting);

    // Step 1: keep the caller on its worker (its participant is that worker's).
    int old_pin = 0;
    if (me != nullptr) {
        old_pin = me->pinned_worker;
        me->pinned_worker = mine;
        part* p = &r->parts[mine];
        p->owner = me;
        p->joined.store(true, memory_order_relaxed);
    }
    // Step 2. Release (through the inbox lock) of everything set above.
    // (An iterative region may be over already: its after functions said so.)
    int skipped = 0;
    if (mine >= 0) r->parts[mine].launched.store(true, memory_order_relaxed);
    int rc = r->finished.load(memory_order_relaxed) ? 0 : launch_servers(r, mine, &skipped);
    if (r->ops->launched != nullptr) r->ops->launched(r, skipped);
    if (rc != 0) {
        // Servers already launched will find `finished` and leave; the work is
        // still done by those who run (an external caller with no server at all
        // cannot run anything: report the failure).
        if (mine < 0 && r->refs.load(memory_order_relaxed) == 1) {
            drop_region(r);
            return rc;
        }
    }

    // Step 3.
    if (mine >= 0) {
        part* p = &r->parts[mine];
        weft_fil_self_ = &p->hot;
        r->ops->lead(p);
        weft_fil_self_ = &weft_fil_outside_;
        flush(p);
        me->pinned_worker = old_pin;
    } else {
        // An external kernel thread blocks on a futex here (weft_sem_wait).
        while (!r->finished.load(memory_order_acquire)) (void)weft_sem_wait(&r->external_done);
    }

    if (r->ops->quiesce != nullptr) r->ops->quiesce(r);
    // The servers that took part have flushed their counts (they are asleep or
    // leaving; awake ones leave within a look at `finished`).
    // A server that slept in the region must run on its own worker to settle.
    // That worker may be running another region's caller, itself waiting here
    // for a server on *our* worker: a weft thread therefore waits with a weft
    // yield, which lets its worker run the server (a kernel-level
    // sched_yield would keep both workers in their callers for ever). An
    // external caller holds no worker: it yields its kernel thread.
    for (int i = 0; i < r->nparts; ++i) {
        part* q = &r->parts[i];
        if (i == mine || !q->joined.load(memory_order_acquire)) continue;
        while (q->settled.load(memory_order_acquire) == 0) {
            if (mine >= 0)
                (void)weft_thread_yield();
            else
                sched_yield();
        }
    }

    int result = 0;
    {
        lock_guard<spinlock> g(r->error_lock);
        if (r->error) {
            result = ECANCELED;
            if (exc != nullptr) *static_cast<std::exception_ptr*>(exc) = r->error;
        }
    }
    stats_flush(mine, [] {
        counters c;
        c.regions = 1;
        return c;
    }());
    release_region(r);
    return result;
}

}  // namespace weft::detail::fil
