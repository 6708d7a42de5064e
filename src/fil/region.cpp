// weft::detail::fil — regions, participants, servers, and the sleep protocol of
// participants. Design: docs/design/filaments.md ("Regions and servers").
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
//
// Sleep protocol of a participant: the core's (core/sleep/README.md), blocking
// on the participant's semaphore, which blocks its server ult, not the worker.
// The sleeper's steps are wait_until's (region.hpp) through sleep::fall_asleep;
// the wakers are wake, wake_all and wake_one below. A post whose sleeper
// retracted without blocking (its last look found something) stays in the
// semaphore and ends a later sleep early, which only costs one more look.
#include <sched.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
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

// --- Arena ----------------------------------------------------------------------

void* arena::alloc(std::size_t n) {
    n = (n + 15) & ~std::size_t(15);
    if (cur == nullptr || cur->used + n > cur->cap) {
        chunk* next = cur != nullptr ? cur->next : first;
        if (next == nullptr || next->cap < n) {
            // A new chunk after cur; a too-small spare one follows it.
            std::size_t cap = n > tun::fil_arena_chunk ? n : tun::fil_arena_chunk;
            auto* c = static_cast<chunk*>(std::malloc(sizeof(chunk) + cap));
            if (c == nullptr) return nullptr;
            c->cap = cap;
            c->next = next;
            if (cur != nullptr) cur->next = c;
            else first = c;
            next = c;
        }
        cur = next;
        cur->used = 0;
    }
    void* p = cur->bytes + cur->used;
    cur->used += n;
    return p;
}

void arena::rewind(mark_t m) {
    // LIFO use: everything allocated after the mark is dead; the chunks after
    // m.c stay chained as spares.
    cur = m.c;
    if (cur != nullptr) cur->used = m.used;
}

void arena::release_all() {
    for (chunk* c = first; c != nullptr;) {
        chunk* n = c->next;
        std::free(c);
        c = n;
    }
    first = cur = nullptr;
}

// --- Regions ----------------------------------------------------------------------

region* new_region(region_kind k) {
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
    r->kind = k;
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

void release(region* r) {
    // acq_rel: the last one to leave sees every other participant's writes
    // before it frees the block.
    if (r->refs.fetch_sub(1, memory_order_acq_rel) == 1) free_region(r);
}

}  // namespace

// Adds p's counters to its worker's statistics and clears them.
void flush(part* p) {
    // Uncounted regions still count the few forks pruned off the inline fast
    // path; dropped, so that forks_pruned is all the pruned forks or none.
    if (p->r->count_pruned) p->st.pruned += p->hot.pruned;
    p->hot.pruned = 0;
    stats_flush(p->hot.index, p->st);
    p->st = counters{};
}

namespace {

// What a participant does in the region, whoever serves it.
void participate(region* r, part* p) {
    if (r->kind == region_kind::iterative) {
        iter_participate(p);
    } else {
        // Counted as hungry from the start (run_region), so that the root's
        // first forks are sent down the tree even before the servers arrive.
        wait_until(p, [r] { return r->finished.load(memory_order_acquire); }, /*counted=*/true);
    }
}

void* server_main(void* arg) {
    auto* r = static_cast<region*>(arg);
    worker* w = current_worker();
    part* p = &r->parts[w->index];
    if (!r->finished.load(memory_order_acquire)) {
        p->owner = w->current;
        // Release: a participant that sees `joined` sees the fields above.
        p->joined.store(true, memory_order_release);
        weft_fil_self_ = &p->hot;
        participate(r, p);
        weft_fil_self_ = &weft_fil_outside_;
        flush(p);
        p->settled.store(1, memory_order_release);
    }
    release(r);
    return nullptr;
}

// Step 2: one pinned, detached server per worker but `skip` and the dropped
// ones (core/active.hpp: a server would wake a dropped worker only to sit the
// region out; an iterative region launches it when the worker is taken back,
// launch_returning). *skipped: how many were dropped.
int launch_servers(region* r, int skip, int* skipped) {
    *skipped = 0;
    for (int i = 0; i < r->nparts; ++i) {
        if (i == skip) continue;
        if (on_dropped_worker(&r->parts[i])) {
            ++*skipped;
            continue;
        }
        if (int rc = launch_server(r, i); rc != 0) return rc;
    }
    return 0;
}

}  // namespace

int launch_server(region* r, int i) {
    // Claimed first: the caller's launch_servers and a sweep's
    // launch_returning (another worker, as soon as a first sweep ends) may
    // both get to participant i; a second server would sleep on i's
    // semaphore for good.
    if (r->parts[i].launched.exchange(true, memory_order_acq_rel)) return 0;
    worker* w = current_worker();
    weft_attr_t attr;
    (void)weft_attr_init(&attr);
    attr.detach_state = WEFT_CREATE_DETACHED;
    attr.name = "weft-fil-server";
    ult* u = nullptr;
    if (int rc = create_ult(w, &attr, &server_main, r, 0, nullptr, &u); rc != 0) {
        r->parts[i].launched.store(false, memory_order_relaxed);
        return rc;
    }
    u->pinned_worker = i;
    r->refs.fetch_add(1, memory_order_relaxed);
    launch_ult(w, u);
    return 0;
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
    while (w != nullptr && w->dropped.load(memory_order_relaxed) && w->current->pinned_worker < 0)
        w = yield(w);
    // The start of a region is a scheduling point for what is pinned to this
    // worker (another region's server, an ASAT barrier test: Severance &
    // Enbody test between two parallel loops): a caller that runs every sweep
    // itself would otherwise never let it run.
    if (w != nullptr && w->inbox.maybe_nonempty() && w->current->pinned_worker < 0) w = yield(w);
    ult* me = w != nullptr ? w->current : nullptr;
    int mine = w != nullptr ? w->index : -1;
    r->root = mine >= 0 ? mine : 0;
    r->refs.store(1, memory_order_relaxed);
    if (r->kind == region_kind::iterative) iter_prepare(r);
    else if (mine < 0) add_hunger(r, r->nparts);  // everyone waits for the root
    else add_hunger(r, r->nparts - 1);            // the servers wait for work
    // Pruning off: a bias that keeps the inline test failing, so that every
    // fork reaches fork_job (the participants' +1/-1 leave it in place).
    if (!r->pruning) set_hunger_bias(r, hunger_word::no_pruning);
    if (r->count_pruned) set_hunger_bias(r, hunger_word::counting);
    // Every list keeps one job ready for a worker that runs dry (fj_list::
    // keep_ready; docs/design/filaments.md, "A job kept ready"). Only where
    // somebody takes jobs from lists, and where there is somebody else.
    r->keep_ready = r->kind == region_kind::fork_join && r->pruning && r->receiver_initiated && r->nparts > 1;
    if (r->keep_ready)
        for (int i = 0; i < r->nparts; ++i) r->parts[i].list.keep_ready(&r->parts[i].hot);

    // Step 1: keep the caller on its worker (its participant is that worker's).
    int old_pin = 0;
    if (me != nullptr) {
        old_pin = me->pinned_worker;
        me->pinned_worker = mine;
        part* p = &r->parts[mine];
        p->owner = me;
        p->joined.store(true, memory_order_relaxed);
    }
    if (r->kind == region_kind::fork_join && mine < 0) {
        // An external caller: the root goes to worker 0's list, where its
        // server finds it (or another worker takes it). Job and latch live in
        // the region, which outlives whoever runs them (it holds a reference).
        r->root_latch.pending.store(1, memory_order_relaxed);
        r->root_latch.owner = nullptr;
        r->root_job.r = r;
        r->root_job.hdr.latch = &r->root_latch;
        r->root_job.hdr.thief = -1;
        r->root_job.hdr.execute = [](weft_fil_job_* j) {
            // hdr is the first member of external_root.
            region* rr = reinterpret_cast<region::external_root*>(j)->r;
            rr->root_fn(rr->root_ctx);
            rr->finished.store(true, memory_order_release);
            wake_all(rr);
        };
        (void)r->parts[0].list.push_tail(&r->root_job.hdr);
    }

    // Step 2. Release (through the inbox lock) of everything set above.
    // (An iterative region may be over already: its after functions said so.)
    int skipped = 0;
    if (mine >= 0) r->parts[mine].launched.store(true, memory_order_relaxed);
    int rc = r->finished.load(memory_order_relaxed) ? 0 : launch_servers(r, mine, &skipped);
    // A fork/join region counted every server as hungry (waiting for work):
    // not those of dropped workers, which do not come.
    if (r->kind == region_kind::fork_join && skipped > 0) add_hunger(r, -skipped);
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
        if (r->kind == region_kind::iterative) {
            iter_participate(p);
        } else {
            r->root_fn(r->root_ctx);  // must not throw (the C++ and C wrappers catch)
            // Step 4: every descendant has been joined.
            r->finished.store(true, memory_order_release);
            wake_all(r);
        }
        weft_fil_self_ = &weft_fil_outside_;
        flush(p);
        me->pinned_worker = old_pin;
    } else {
        // An external kernel thread blocks on a futex here (weft_sem_wait).
        while (!r->finished.load(memory_order_acquire)) (void)weft_sem_wait(&r->external_done);
    }

    if (r->kind == region_kind::iterative) iter_wait_quiescent(r);
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
    release(r);
    return result;
}

// --- Fork/join jobs -----------------------------------------------------------------

void run_job(part* p, weft_fil_job_* j) {
    ++p->st.run;
    // The top few levels of this job may fork for others.
    if (p->r->pruning) p->hot.fork_limit.store(weft_fil_sp_() - tun::fil_refill_margin, memory_order_relaxed);
    weft_fil_latch_* l = j->latch;
    auto* owner = static_cast<part*>(l->owner);
    j->execute(j);
    // After this decrement j and l may be gone (their frames return); owner is
    // a participant of this region, alive while we hold our reference.
    if (l->pending.fetch_sub(1, memory_order_acq_rel) == 1 && owner != nullptr) wake(owner);
}

bool on_dropped_worker(const part* p) {
    runtime* rt = g_rt;
    return rt != nullptr && rt->workers[p->hot.index]->dropped.load(memory_order_relaxed);
}

weft_fil_job_* find_job(part* p) {
    if (p->list.size() > 0) {
        if (weft_fil_job_* j = p->list.pop_tail()) return j;
    }
    region* r = p->r;
    if (!r->receiver_initiated || on_dropped_worker(p)) return nullptr;
    // Receiver-initiated: the longest list, from its front (Lowenthal, Freeh & Andrews §3.2).
    int best = -1, best_size = 0;
    for (int i = 0; i < r->nparts; ++i) {
        int s = r->parts[i].list.size();
        if (s > best_size) {
            best = i;
            best_size = s;
        }
    }
    if (best < 0) return nullptr;
    weft_fil_job_* j = r->parts[best].list.pop_head();
    if (j != nullptr) {
        j->thief = p->hot.index;
        ++p->st.steals;
    }
    return j;
}

void deepen_others(part* p) {
    region* r = p->r;
    for (int i = 0; i < r->nparts; ++i) {
        part* q = &r->parts[i];
        if (q == p) continue;
        // Load and store, not a read-modify-write: racing with the owner's own
        // store only loses one step. 0 means "any frame" already.
        std::uintptr_t v = q->hot.fork_limit.load(memory_order_relaxed);
        if (v > tun::fil_deepen_step) q->hot.fork_limit.store(v - tun::fil_deepen_step, memory_order_relaxed);
    }
}

void open_others(part* p) {
    region* r = p->r;
    for (int i = 0; i < r->nparts; ++i)
        if (&r->parts[i] != p) r->parts[i].hot.fork_limit.store(0, memory_order_relaxed);
}

weft_fil_job_* reclaim_child(part* p, weft_fil_latch_* l) {
    region* r = p->r;
    for (int i = 0; i < r->nparts; ++i) {
        if (r->parts[i].list.size() == 0) continue;
        if (weft_fil_job_* j = r->parts[i].list.remove_if_latch(l)) return j;
    }
    return nullptr;
}

bool work_visible(part* p) {
    if (p->list.size() > 0) return true;
    region* r = p->r;
    if (!r->receiver_initiated || on_dropped_worker(p)) return false;
    for (int i = 0; i < r->nparts; ++i)
        if (r->parts[i].list.size() > 0) return true;
    return false;
}

// --- Sleeping -----------------------------------------------------------------------

void sleep_announce(part* p) {
    p->sleeping.store(1, memory_order_relaxed);
    p->r->sleepers.fetch_add(1, memory_order_seq_cst);
}

void sleep_block(part* p) {
    ++p->st.sleeps;
    flush(p);
    p->settled.store(1, memory_order_release);
    weft_fil_self_ = &weft_fil_outside_;  // other weft threads run on this worker meanwhile
    (void)weft_sem_wait(&p->sem);
    weft_fil_self_ = &p->hot;
    p->settled.store(0, memory_order_relaxed);
}

void sleep_retract(part* p) {
    // If a waker already claimed us, its post is (or will be) in the semaphore.
    (void)p->sleeping.exchange(0, memory_order_acq_rel);
    p->r->sleepers.fetch_sub(1, memory_order_relaxed);
}

void wake(part* q) {
    light_fence();
    if (q->sleeping.load(memory_order_relaxed) == 1 && q->sleeping.exchange(0, memory_order_acq_rel) == 1)
        (void)weft_sem_post(&q->sem);
}

void wake_all(region* r) {
    light_fence();
    if (r->sleepers.load(memory_order_relaxed) != 0) {
        for (int i = 0; i < r->nparts; ++i) wake(&r->parts[i]);
    }
    // An external caller of an iterative region waits on external_done.
    (void)weft_sem_post(&r->external_done);
}

void wake_one(region* r, part* from) {
    light_fence();
    if (r->sleepers.load(memory_order_relaxed) == 0) return;
    for (int i = 0; i < r->nparts; ++i) {
        part* q = &r->parts[i];
        if (q == from || on_dropped_worker(q)) continue;
        if (q->sleeping.load(memory_order_relaxed) == 1 && q->sleeping.exchange(0, memory_order_acq_rel) == 1) {
            (void)weft_sem_post(&q->sem);
            return;
        }
    }
}

}  // namespace weft::detail::fil
