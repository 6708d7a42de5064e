// weft::detail::fil — sweeps, the barrier between them, and the after functions
// (Lowenthal, Freeh & Andrews §2.2 "Iterative Filaments with Barriers", §3.1).
//
// One sweep of a pool set runs every pool once. Each pool is *claimed* for the
// sweep by exactly one worker (a CAS of its `claimed` word from an older sweep
// number to this one): its owner — the worker the program placed it on — or,
// if that worker's server has not started yet (its worker is busy with another
// weft thread), any worker that has finished its own pools. So placement is
// honoured whenever the owner is there, and a late server never stalls the
// region. (Pool sets created for parallel_for allow any worker to take any
// unclaimed chunk: there is no locality to keep across sweeps there.)
//
// The barrier counts pools, not workers: `left` starts at the number of pools
// of the set and each finished pool decrements it; the worker that brings it to
// 0 runs the after function — sequential code, every filament of the sweep has
// run — and publishes the next phase (sweep.hpp: iter_state). Workers without
// pools wait in wait_until (running fork/join filaments forked by the others'
// bodies, then sleeping), and are woken by the publication.
//
// Exceptions: the first one thrown by a body or an after function is kept
// (region::error); the workers skip the pools they have not started, the
// after function is not called again, and the region ends when the sweep's
// pools are all finished or skipped — so no body runs after the call returns.
#include <sched.h>

#include <cerrno>
#include <exception>

#include "fil/region.hpp"
#include "fil/sleepers.hpp"
#include "fil/sweep.hpp"

namespace weft::detail::fil {

namespace {

inline std::uint64_t make_phase(std::uint64_t sweep, int set) {
    return (sweep << 16) | static_cast<std::uint64_t>(set);
}

bool claim(weft_fil_pool_s* pool, std::uint64_t sweep) {
    std::uint64_t c = pool->claimed.load(memory_order_relaxed);
    // Relaxed CAS: the claim only decides who runs the pool; the data the pool
    // reads was published by the phase (acquire) and its results by `left`.
    while (c < sweep) {
        if (pool->claimed.compare_exchange_weak(c, sweep, memory_order_relaxed)) return true;
    }
    return false;
}

// The after function of set s: WEFT_FIL_CONTINUE or WEFT_FIL_DONE; throws what it throws.
int call_after(const iter_state* st, int s) {
    const weft_fil_poolset_s* set = st->sets[s];
    if (set->after == nullptr) return s == st->nsets - 1 ? WEFT_FIL_DONE : WEFT_FIL_CONTINUE;
    return set->after(set->after_ctx) == WEFT_FIL_DONE ? WEFT_FIL_DONE : WEFT_FIL_CONTINUE;
}

// After set s's sweep: its after function, then those of the empty sets that
// follow. Returns the next set to sweep, or -1 when the region is done.
int next_set(region* r, int s, std::uint64_t* sweeps) {
    iter_state* st = r->it;
    for (;;) {
        if (r->failed.load(memory_order_acquire)) return -1;
        int res;
        try {
            res = call_after(st, s);
        } catch (...) {
            fail(r, std::current_exception());
            return -1;
        }
        ++*sweeps;
        if (res == WEFT_FIL_DONE) return -1;
        s = (s + 1) % st->nsets;
        if (!st->sets[s]->pools.empty()) return s;
    }
}

// Who sits out the next sweep: the participants whose worker is not available
// now (available.hpp). Written before the phase is published (release), read
// after it is loaded (acquire): every participant sees the same set for the
// whole sweep, so each pool is claimed by its owner or, if the owner sits out,
// by a helper, and never waits for a dropped worker. This is the serial point
// between two sweeps where ASAT changes the thread count (Severance & Enbody).
void mark_away(region* r) {
    for (int i = 0; i < r->nparts; ++i) r->parts[i].away.store(!available(i), memory_order_relaxed);
}

// q sits out the sweep being run (mark_away's snapshot, read after the phase).
bool sits_out(const part* q) { return q->away.load(memory_order_relaxed); }

// Wakes the participants that take part in the next sweep; those that sit it
// out sleep on (they are woken by the sweep they take part in, or the end).
void wake_sweep(region* r) {
    light_fence();
    if (r->sleepers.load(memory_order_relaxed) != 0) {
        for (int i = 0; i < r->nparts; ++i)
            if (!sits_out(&r->parts[i])) wake(&r->parts[i]);
    }
    (void)weft_sem_post(&r->external_done);
}

// A worker taken back after the region started has no server in it (none is
// launched for a dropped worker): launch it now, so that it takes part from
// the next sweep it sees. Without a server (no stack or handle left), the
// worker only misses this region.
void launch_returning(region* r) {
    for (int i = 0; i < r->nparts; ++i) {
        part* q = &r->parts[i];
        if (sits_out(q) || q->launched.load(memory_order_relaxed)) continue;
        (void)launch_server(r, i);
    }
}

void finish(region* r) {
    r->it->done.store(true, memory_order_seq_cst);
    r->finished.store(true, memory_order_release);
    wake_all(r);
}

// Run by the worker whose pool brought `left` to 0 in sweep k of set s.
void advance(part* p, std::uint64_t k, int s) {
    region* r = p->r;
    iter_state* st = r->it;
    int n = next_set(r, s, &p->st.sweeps);
    if (n < 0) {
        finish(r);
        return;
    }
    st->left.store(static_cast<std::int64_t>(st->sets[n]->pools.size()), memory_order_relaxed);
    mark_away(r);
    st->phase.store(make_phase(k + 1, n), memory_order_release);
    wake_sweep(r);
    launch_returning(r);
}

void count_path(counters& c, int path) {
    if (path == WEFT_FIL_PATH_DENSE_2D) ++c.pools_dense_2d;
    else if (path == WEFT_FIL_PATH_DENSE_1D) ++c.pools_dense_1d;
    else ++c.pools_general;
}

// The view one sweep of `pool` runs over (its pattern recognised again, and
// the filaments added since counted as created, if it changed), and the sweep
// counted in the pool.
weft_fil_pool_view_ begin_pool_sweep(const weft_fil_poolset_s* set, weft_fil_pool_s* pool, counters& c) {
    if (pool->dirty) {
        pool->pat = recognize(pool->descs.data(), pool->descs.size());
        pool->dirty = false;
        c.created += pool->uncounted;
        pool->uncounted = 0;
    }
    weft_fil_pool_view_ v{};
    v.desc = reinterpret_cast<const std::int32_t*>(pool->descs.data());
    v.n = pool->is_range ? pool->pat.nrows * pool->pat.ncols : static_cast<std::int64_t>(pool->descs.size());
    v.path = pool->pat.path;
    v.backward = set->order == WEFT_FIL_BACK_AND_FORTH && (pool->sweeps & 1) != 0;
    v.i0 = pool->pat.i0;
    v.istride = pool->pat.istride;
    v.nrows = pool->pat.nrows;
    v.j0 = pool->pat.j0;
    v.ncols = pool->pat.ncols;
    ++pool->sweeps;
    return v;
}

// After the sweep: the path it took, and the participant's counts.
void end_pool_sweep(weft_fil_pool_s* pool, const weft_fil_pool_view_& v, counters& c) {
    pool->last_path.store(v.path, memory_order_relaxed);
    count_path(c, v.path);
    c.run += static_cast<std::uint64_t>(v.n);
}

// Runs one claimed pool (unless the region failed) and counts it in `left`.
void run_pool(part* p, const weft_fil_poolset_s* set, weft_fil_pool_s* pool, std::uint64_t k, int s) {
    region* r = p->r;
    if (!r->failed.load(memory_order_acquire)) {
        weft_fil_pool_view_ v = begin_pool_sweep(set, pool, p->st);
        try {
            set->run(set->run_ctx, &v);
        } catch (...) {
            fail(r, std::current_exception());
        }
        end_pool_sweep(pool, v, p->st);
        if ((pool->owner % r->nparts) != p->hot.index) ++p->st.pools_helped;
    }
    if (r->it->left.fetch_sub(1, memory_order_acq_rel) == 1) {
        if (r->failed.load(memory_order_acquire)) finish(r);
        else advance(p, k, s);
    }
}

// --- The iterative kind of region (region_ops) -------------------------------------

// Before the servers start: resets claims, picks the first sweep (running the
// after functions of leading empty sets), or finishes at once.
void iter_prepare(region* r, int /*mine*/) {
    iter_state* st = r->it;
    for (int s = 0; s < st->nsets; ++s)
        for (weft_fil_pool_s* pool : st->sets[s]->pools) pool->claimed.store(0, memory_order_relaxed);
    int first = 0;
    if (st->sets[0]->pools.empty()) {
        counters c;
        first = next_set(r, 0, &c.sweeps);
        stats_flush(r->root, c);
    }
    if (first < 0) {
        st->done.store(true, memory_order_relaxed);
        r->finished.store(true, memory_order_relaxed);
        return;
    }
    st->left.store(static_cast<std::int64_t>(st->sets[first]->pools.size()), memory_order_relaxed);
    mark_away(r);
    st->phase.store(make_phase(1, first), memory_order_relaxed);
    // Published to the servers by their launch, to the caller by program order.
}

// A participant's part in an iterative region, until it ends (the caller's and
// a server's alike).
void iter_participate(part* p) {
    region* r = p->r;
    iter_state* st = r->it;
    const int me = p->hot.index;
    std::uint64_t seen = 0;
    for (;;) {
        st->active.fetch_add(1, memory_order_seq_cst);
        if (st->done.load(memory_order_seq_cst)) {
            st->active.fetch_sub(1, memory_order_release);
            return;
        }
        std::uint64_t ph = st->phase.load(memory_order_acquire);
        if (ph != seen) {
            seen = ph;
            const std::uint64_t k = ph >> 16;
            const int s = static_cast<int>(ph & 0xffff);
            const weft_fil_poolset_s* set = st->sets[s];
            if (!sits_out(p)) {
                // Own pools first (placement: the data they touch is in our cache).
                for (weft_fil_pool_s* pool : set->pools) {
                    if (pool->owner % r->nparts == me && claim(pool, k)) run_pool(p, set, pool, k, s);
                }
                // Then pools nobody else will run soon: of an owner not there
                // yet, or sitting this sweep out.
                for (weft_fil_pool_s* pool : set->pools) {
                    int o = pool->owner % r->nparts;
                    if (o == me) continue;
                    if (!set->help_any && r->parts[o].joined.load(memory_order_acquire) && !sits_out(&r->parts[o]))
                        continue;
                    if (claim(pool, k)) run_pool(p, set, pool, k, s);
                }
            }
            st->active.fetch_sub(1, memory_order_release);
            continue;  // the sweep may be over already
        }
        st->active.fetch_sub(1, memory_order_release);
        wait_until(p, [st, seen] {
            return st->done.load(memory_order_acquire) || st->phase.load(memory_order_acquire) != seen;
        });
    }
}

// The caller, after the region has ended: waits until no participant reads
// the sets or pools any more.
void iter_wait_quiescent(region* r) {
    // Only participants between their entry and their claim loop's end are
    // counted: they run (no sleep there), so this wait is short.
    while (r->it->active.load(memory_order_acquire) != 0) {
        cpu_relax();
        sched_yield();
    }
}

}  // namespace

const region_ops iterative_region = {
    .prepare = &iter_prepare,
    .launched = nullptr,
    .serve = &iter_participate,
    .lead = &iter_participate,
    .quiesce = &iter_wait_quiescent,
};

void run_sets_serial(const weft_fil_poolset_t* sets, int n, part* p) {
    iter_state st;
    st.sets = sets;
    st.nsets = n;
    int s = 0;
    for (;;) {
        const weft_fil_poolset_s* set = sets[s];
        for (weft_fil_pool_s* pool : set->pools) {
            weft_fil_pool_view_ v = begin_pool_sweep(set, pool, p->st);
            set->run(set->run_ctx, &v);
            end_pool_sweep(pool, v, p->st);
        }
        ++p->st.sweeps;
        if (call_after(&st, s) == WEFT_FIL_DONE) return;
        s = (s + 1) % n;
    }
}

int run_sets(const weft_fil_poolset_t* sets, int n, void* exc) {
    if (sets == nullptr || n < 1 || n > tun::fil_max_sets) return EINVAL;
    for (int s = 0; s < n; ++s)
        if (sets[s] == nullptr || sets[s]->run == nullptr) return EINVAL;
    if (part* p = self_checked()) {
        // Inside a filament: the region is this worker's alone.
        try {
            run_sets_serial(sets, n, p);
        } catch (...) {
            if (exc != nullptr) *static_cast<std::exception_ptr*>(exc) = std::current_exception();
            return ECANCELED;
        }
        return 0;
    }
    // One region per set at a time.
    int taken = 0;
    for (; taken < n; ++taken) {
        bool expected = false;
        if (!sets[taken]->running.compare_exchange_strong(expected, true, memory_order_acquire)) {
            // The same set twice in one sequence is fine; another region is not.
            bool dup = false;
            for (int q = 0; q < taken; ++q) dup |= sets[q] == sets[taken];
            if (!dup) {
                for (int q = 0; q < taken; ++q) {
                    bool again = false;
                    for (int z = 0; z < q; ++z) again |= sets[z] == sets[q];
                    if (!again) sets[q]->running.store(false, memory_order_release);
                }
                return EBUSY;
            }
        }
    }
    auto release_sets = [&] {
        for (int q = 0; q < n; ++q) {
            bool again = false;
            for (int z = 0; z < q; ++z) again |= sets[z] == sets[q];
            if (!again) sets[q]->running.store(false, memory_order_release);
        }
    };
    region* r = new_region(iterative_region);
    if (r == nullptr) {
        release_sets();
        return ENOMEM;
    }
    r->iter.sets = sets;
    r->iter.nsets = n;
    r->it = &r->iter;
    int rc = run_region(r, exc);
    // run_region returns once the last sweep is over: no server touches the
    // sets any more (`sets` itself is only read before `done`).
    release_sets();
    return rc;
}

}  // namespace weft::detail::fil
