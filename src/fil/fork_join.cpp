// weft::detail::fil — fork/join filaments: forks, joins, pruning and the two
// load-balancing phases (Lowenthal, Freeh & Andrews §2.3, §3.2). Design: docs/design/filaments.md.
//
// A fork has three outcomes, decided in this order:
//   1. pruned: the inline test (filament.hpp, weft::join; weft_fil_fork below)
//      sees `hungry == 0` — every participant has work, and the forker's list
//      holds its job kept ready — and runs the child as a plain call. One
//      relaxed load of a word that only changes when a worker runs dry or a
//      list empties; this is the paper's "server thread checks a flag before
//      deciding whether to fork filaments or call them directly".
//   2. sent down the tree (sender-initiated, the initial phase): a participant
//      gives its first forks to its children in a binomial tree of workers
//      rooted at the caller's worker (the paper's Figure 1): the root gives to
//      root+1, root+2, root+4, ...; worker root+r gives to root+r+2^k for each
//      2^k > r. After O(log p) steps every worker has work.
//   3. pushed on the forker's list, where an idle participant takes it from the
//      front of the longest list (receiver-initiated), if the region allows it
//      and either the list is empty (every list keeps one job ready: its
//      emptiness is in the owner's hunger count, so the inline test let this
//      fork through; fj_list::keep_ready) or a worker is hungry and the list
//      is short (tun::fil_hungry_list_limit); else pruned after all.
// A join takes its child back from the tail of its own list if nobody took it
// (then it runs it as a call); else it waits, running other filaments meanwhile
// (wait_until: the parent *becomes* the server), and, before it would sleep,
// takes back a child still queued on some list (one sent to a worker whose
// server has not started).
//
// Finding a job (find_job): own list first, from its tail; then, if the region
// is receiver-initiated and this worker is available (available.hpp), the
// longest list, from its front (§3.2).
//
// Exceptions (C++): a child's exception is stored in its job and rethrown by
// the join (filament.hpp); a C filament that throws fails the region.
#include <cerrno>
#include <cstring>
#include <exception>
#include <new>

#include "core/runtime.hpp"
#include "core/thread.hpp"
#include "core/worker.hpp"
#include "fil/fork_join.hpp"
#include "fil/program.hpp"
#include "fil/region.hpp"
#include "fil/sleepers.hpp"

namespace weft::detail::fil {

// A C fork/join filament's frame: the children it forked and where its
// descriptors start in the arena.
struct c_frame {
    weft_fil_latch_ latch;
    arena::mark_t mark;
    c_frame* prev;
};

// --- Finding and running jobs ------------------------------------------------------

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

weft_fil_job_* find_job(part* p) {
    if (p->list.size() > 0) {
        if (weft_fil_job_* j = p->list.pop_tail()) return j;
    }
    region* r = p->r;
    if (!r->receiver_initiated || !available(p->hot.index)) return nullptr;
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

bool work_visible(part* p) {
    if (p->list.size() > 0) return true;
    region* r = p->r;
    if (!r->receiver_initiated || !available(p->hot.index)) return false;
    for (int i = 0; i < r->nparts; ++i)
        if (r->parts[i].list.size() > 0) return true;
    return false;
}

weft_fil_job_* reclaim_child(part* p, weft_fil_latch_* l) {
    region* r = p->r;
    for (int i = 0; i < r->nparts; ++i) {
        if (r->parts[i].list.size() == 0) continue;
        if (weft_fil_job_* j = r->parts[i].list.remove_if_latch(l)) return j;
    }
    return nullptr;
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

// --- The fork/join kind of region (region_ops) ---------------------------------------

namespace {

void fj_prepare(region* r, int mine) {
    if (mine < 0)
        add_hunger(r, r->nparts);  // everyone waits for the root
    else
        add_hunger(r, r->nparts - 1);  // the servers wait for work
    // Every list keeps one job ready for a worker that runs dry (fj_list::
    // keep_ready; docs/design/filaments.md, "A job kept ready"). Only where
    // somebody takes jobs from lists, and where there is somebody else.
    r->keep_ready = r->pruning && r->receiver_initiated && r->nparts > 1;
    if (r->keep_ready)
        for (int i = 0; i < r->nparts; ++i) r->parts[i].list.keep_ready(&r->parts[i].hot);
    if (mine < 0) {
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
}

// prepare counted every server as hungry (waiting for work): not those of
// unavailable workers, which do not come.
void fj_launched(region* r, int skipped) {
    if (skipped > 0) add_hunger(r, -skipped);
}

void fj_serve(part* p) {
    region* r = p->r;
    // Counted as hungry from the start (fj_prepare), so that the root's first
    // forks are sent down the tree even before the servers arrive.
    wait_until(
        p, [r] { return r->finished.load(memory_order_acquire); }, /*counted=*/true);
}

void fj_lead(part* p) {
    region* r = p->r;
    r->root_fn(r->root_ctx);  // must not throw (the C++ and C wrappers catch)
    // Step 4 of region.cpp: every descendant has been joined.
    r->finished.store(true, memory_order_release);
    wake_all(r);
}

}  // namespace

const region_ops fork_join_region = {
    .prepare = &fj_prepare,
    .launched = &fj_launched,
    .serve = &fj_serve,
    .lead = &fj_lead,
    .quiesce = nullptr,
};

// --- Forks and joins -------------------------------------------------------------------

namespace {

struct c_job {
    weft_fil_job_ hdr;  // first: the list holds &hdr
    weft_fil_fork_fn fn;
    void* result;
    alignas(16) unsigned char args[WEFT_FIL_ARGS_MAX];
};

unsigned first_tree_offset(unsigned rel) {
    unsigned o = 1;
    while (o <= rel) o <<= 1;
    return o;
}

// Steps 2-3 of a fork (the inline test said "hungry"). 1: j is on some list.
int fork_job(part* p, weft_fil_job_* j, std::uintptr_t sp) {
    region* r = p->r;
    j->thief = -1;
    if (!p->tree_done) {
        const unsigned P = static_cast<unsigned>(r->nparts);
        const unsigned rel = static_cast<unsigned>(p->hot.index - r->root + r->nparts) % P;
        if (p->tree_next == 0) p->tree_next = static_cast<int>(first_tree_offset(rel));
        const unsigned off = static_cast<unsigned>(p->tree_next);
        if (rel + off < P) {
            p->tree_next = static_cast<int>(off << 1);
            part* child = &r->parts[(rel + off + static_cast<unsigned>(r->root)) % P];
            if (child->list.push_tail(j)) {
                ++p->st.tree_sends;
                ++p->st.forks;
                ++p->st.created;
                wake(child);
                return 1;
            }
        } else {
            p->tree_done = true;
        }
    }
    if (r->pruning) {
        // Feed a hungry worker, or fill a list that keeps a job ready (only
        // where somebody takes from lists: with the tree phase alone, a fork
        // would only come back to us).
        const bool want = r->receiver_initiated &&
                          (ready_job_missing(p) || (hunger(p) > 0 && p->list.size() < tun::fil_hungry_list_limit));
        if (!want) {
            ++p->hot.pruned;
            return 0;
        }
    }
    if (!p->list.push_tail(j)) {
        ++p->hot.pruned;
        return 0;
    }
    // Until this one is gone, only joins at least as shallow fork again.
    if (r->pruning) p->hot.fork_limit.store(sp, memory_order_relaxed);
    ++p->st.forks;
    ++p->st.created;
    wake_one(r, p);
    return 1;
}

// Runs a C filament with its own frame, then joins its children.
void run_c(part* p, weft_fil_fork_fn fn, const void* args, void* result);

// Waits, as an idle participant, until every child counted by l has finished:
// runs other filaments meanwhile, and before sleeping takes back a child of l
// that nobody has started (and runs it).
void wait_for_latch(part* p, weft_fil_latch_* l) {
    wait_until(
        p, [l] { return l->pending.load(memory_order_acquire) == 0; },
        [p, l] {
            if (weft_fil_job_* c = reclaim_child(p, l)) {
                run_job(p, c);
                return true;
            }
            return false;
        },
        false);
}

// Waits for every child of f, then rewinds the arena to f's mark: the
// children's descriptors are dead, so a filament that forks and joins in a
// loop reuses the same bytes instead of growing the arena until it returns.
void join_frame(part* p, c_frame* f) {
    while (f->latch.pending.load(memory_order_acquire) != 0) {
        // Our own children, newest first, as calls.
        if (weft_fil_job_* j = p->list.pop_tail_if_latch(&f->latch)) {
            run_job(p, j);  // (resets fork_limit: the next levels may refill)
            continue;
        }
        wait_for_latch(p, &f->latch);
    }
    p->ar.rewind(f->mark);
}

void c_execute(weft_fil_job_* j) {
    auto* cj = reinterpret_cast<c_job*>(j);
    run_c(self(), cj->fn, cj->args, cj->result);
}

void run_c(part* p, weft_fil_fork_fn fn, const void* args, void* result) {
    c_frame f;
    f.latch.pending.store(0, memory_order_relaxed);
    f.latch.owner = p;
    f.mark = p->ar.mark();
    f.prev = p->frame;
    p->frame = &f;
    try {
        fn(args, result);
    } catch (...) {
        // C filaments do not throw; a C++ function passed in may.
        fail(p->r, std::current_exception());
    }
    join_frame(p, &f);
    p->frame = f.prev;
}

struct c_root {
    weft_fil_fork_fn fn;
    const void* args;
    void* result;
};

}  // namespace

int fj_region(void (*root)(void*), void* ctx, const weft_fil_fj_options_t* opts) {
    region* r = new_region(fork_join_region);
    if (r == nullptr) return ENOMEM;
    r->root_fn = root;
    r->root_ctx = ctx;
    if (opts != nullptr) {
        r->receiver_initiated = opts->no_receiver_initiated == 0;
        r->pruning = opts->no_pruning == 0;
    }
    return run_region(r, nullptr);
}

void run_c_root(void* ctx) {
    auto* c = static_cast<c_root*>(ctx);
    run_c(self(), c->fn, c->args, c->result);
}

}  // namespace weft::detail::fil

using namespace weft::detail;
using namespace weft::detail::fil;

extern "C" {

WEFT_API int weft_fil_fork_(weft_fil_job_* j) {
    part* p = self_checked();
    if (p == nullptr) return 0;
    return fork_job(p, j, weft_fil_sp_());
}

WEFT_API int weft_fil_join_(weft_fil_job_* j) {
    part* p = self();
    if (p->list.pop_tail_if(j)) {
        ++p->st.run;
        // Taken back: the next few levels may fork to refill the list.
        if (p->r->pruning) p->hot.fork_limit.store(weft_fil_sp_() - tun::fil_refill_margin, memory_order_relaxed);
        return 1;
    }
    wait_for_latch(p, j->latch);
    return 0;
}

WEFT_API int weft_fil_run_fj_(void (*root)(void*), void* ctx, const weft_fil_fj_options_t* opts) {
    if (root == nullptr) return EINVAL;
    if (self_checked() != nullptr) {
        root(ctx);  // already in a region: its forks join this one
        return 0;
    }
    if (int rc = weft_fil_init(); rc != 0) return rc;
    return fj_region(root, ctx, opts);
}

WEFT_API int weft_fil_fork(weft_fil_fork_fn fn, const void* args, size_t args_size, void* result) {
    if (fn == nullptr || args_size > WEFT_FIL_ARGS_MAX || (args == nullptr && args_size != 0)) return EINVAL;
    part* p = self_checked();
    if (p == nullptr) return program_add_root(fn, args, args_size, result);
    c_frame* f = p->frame;
    region* r = p->r;
    // Pruned (or not inside a C filament: nothing would join it): a call.
    const std::uintptr_t sp = weft_fil_sp_();
    if (f == nullptr ||
        (r->pruning && (!fork_wanted(p) || sp < p->hot.fork_limit.load(memory_order_relaxed)))) {
        ++p->hot.pruned;
        run_c(p, fn, args, result);
        return 0;
    }
    void* mem = p->ar.alloc(sizeof(c_job));
    if (mem == nullptr) {
        ++p->hot.pruned;
        run_c(p, fn, args, result);
        return 0;
    }
    auto* cj = new (mem) c_job;
    cj->hdr.execute = &c_execute;
    cj->hdr.latch = &f->latch;
    cj->fn = fn;
    cj->result = result;
    if (args_size != 0) std::memcpy(cj->args, args, args_size);
    // Counted before it is visible (the push's lock publishes both).
    f->latch.pending.fetch_add(1, memory_order_relaxed);
    if (fork_job(p, &cj->hdr, sp) == 0) {
        f->latch.pending.fetch_sub(1, memory_order_relaxed);
        run_c(p, fn, cj->args, result);
    }
    return 0;
}

WEFT_API int weft_fil_join(void) {
    part* p = self_checked();
    if (p == nullptr || p->frame == nullptr) return 0;
    join_frame(p, p->frame);
    return 0;
}

WEFT_API int weft_fil_fj_run(weft_fil_fork_fn fn, const void* args, size_t args_size, void* result,
                             const weft_fil_fj_options_t* opts) {
    if (fn == nullptr || args_size > WEFT_FIL_ARGS_MAX || (args == nullptr && args_size != 0)) return EINVAL;
    if (part* p = self_checked()) {
        run_c(p, fn, args, result);
        return p->r->failed.load(memory_order_acquire) ? ECANCELED : 0;
    }
    if (int rc = weft_fil_init(); rc != 0) return rc;
    c_root root{fn, args, result};
    return fj_region(&run_c_root, &root, opts);
}

}  // extern "C"
