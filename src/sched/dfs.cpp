// dfs — the space-efficient scheduler of Narlikar & Blelloch (SC'98,
// and its reference [34], the AsyncDF algorithm).
//
// Design essay (docs/design/dfs.md has the measurements and the bound)
// --------------------------------------------------------------------
// Glossary:
//   order     every live ult the policy has seen, in the order a serial
//             depth-first execution of the program would run them
//             (dfs_order.hpp). "Left" = earlier = higher priority.
//   ready set the ready ults, a binary min-heap keyed by order label.
//   quota K   bytes a ult may allocate through weft's allocator, net of frees,
//             between two scheduling points (WEFT_QUOTA; src/mem).
//
// The rules, and where each is implemented:
//   1. Fork: the child goes immediately left of its parent and runs at once;
//      the parent becomes ready in its place (spawn returns true). This is the
//      serial depth-first order, so on one worker a fork tree runs exactly as
//      its serial recursion would. A pinned parent is not preempted (the core
//      calls ready(child, spawned) instead, policy.hpp "Pinned ults"): its
//      child gets the same place and waits in the worker's deque, where it is
//      the worker's next pick and a thief's target, and the parent goes on.
//   2. Pick (take): each worker keeps the threads it readied in its own
//      deque, ordered by label (a forking parent, a thread it woke, one it
//      preempted). A worker that needs a thread takes the leftmost of its own
//      deque: its most recent, deepest continuation, as the serial execution
//      would. With its own deque empty it steals from the deque that holds
//      the leftmost ready thread of all, and takes that deque's *rightmost*
//      thread, its oldest and shallowest: the biggest piece of the
//      highest-priority work, which it then runs depth-first on its own
//      (Narlikar's DFDeques, SPAA'99, the paper's reference [33]). On one
//      worker there is one deque: the leftmost ready thread runs, exactly
//      AsyncDF's rule.
//   3. No asynchronous preemption: a ult that becomes ready left of a running
//      one does not stop it; the running ult goes on until its next scheduling
//      point (fork, block, exit, yield, or quota). A processor picks at
//      scheduling points only, as in the paper.
//   4. Quota: a ult that would exceed K is preempted (ready_reason::preempted:
//      it goes back to its place) and the worker's next pick takes the
//      leftmost ready thread of all, from any deque (AsyncDF's rule: the
//      quota is what stops a worker from running far ahead of the
//      higher-priority work, and the space bound charges for it). An
//      allocation larger than K first forks about size/K dummy threads as a
//      binary tree just left of the ult and joins them (on_alloc here
//      decides; src/mem and src/core/preempt.cpp carry it out): the worker
//      runs them depth-first like any fork, with every ready thread left of
//      them in its deque going first, while idle workers steal the top of
//      the leftmost deque. Then the allocation waits for its turn
//      (alloc_turn): the dummies delay it by scheduling steps, not by time,
//      and a thief that has just started a new subproblem would otherwise
//      allocate its temporary while the subproblem left of it still holds
//      its own (Narlikar & Blelloch's matrix multiply on 2 workers: 1.25x the serial
//      heap, 1.01x with the turn; docs/design/dfs.md).
//   5. Block: a blocked ult keeps its place in the order (it stays in the
//      list, out of every deque); woken, it enters the waker's deque at its
//      place.
//   6. Yield (weft_thread_yield): the ult lets the thread rule 2 picks run,
//      then competes again from its place. A strict "the leftmost runs"
//      yield would never let a spin-wait loop (yield until a flag is set) see a
//      lower-priority ult set the flag: livelock on one worker.
//   7. Ults the policy first sees without a fork (main, ults created by kernel
//      threads outside weft, which reach workers through the core's inject
//      queue) are appended at the right end: new roots run after the work
//      already in the order, in order of appearance.
//
// Why per-worker deques (rule 2) and not "the p leftmost ready threads run":
// with the latter (AsyncDF, what this policy did first) an idle worker takes
// the leftmost ready thread, the deepest continuation, so two workers split
// the same subtree leaf by leaf: on Narlikar & Blelloch's matrix multiply the same
// instructions took 1.22x the cycles of ws (2.2x the cache misses: each worker's
// leaves reuse the blocks the other just loaded), 1.39x over serial on 2
// workers. Stealing the top of the leftmost deque gives each worker a whole
// subtree: 2.08x, at the same peak heap (docs/design/dfs.md, Measurements).
// Dummy exits do not trigger rule 4's leftmost pick: tried, every dummy's end
// moved a worker into another subtree (1,334 steals instead of 24), 1.62x and
// 1.49x the serial heap instead of 1.25x.
//
// Structure: one spinlock guards the order and the p deques (binary min-heaps
// by label). Every operation is O(1) or O(log r) (r = ready ults of that
// worker, typically O(D)), plus the amortized relabelling of the order; a
// steal scans the p deque minima and the victim's leaves, O(p + r). The
// paper kept one lock-protected list of all ults and scanned it for the
// first ready one: O(live ults) per pick when many are blocked.
//
// Costs per fork/exit pair: three lock acquisitions (spawn: insert child and
// ready the parent; on_exit: unlink; pick_next: pop). ready(.., preempted_by_
// child) is free: spawn already readied the parent in the same critical
// section.
//
// Memory ordering: the spinlock orders everything; `ready_count_` mirrors the
// total of the deques for has_work and for an empty pick without the lock (a
// stale value only delays or repeats a look; the parking protocol re-checks
// with pick_next after announcing sleep).
#include <algorithm>
#include <memory>
#include <vector>

#include "base/primitives.hpp"
#include "core/tunables.hpp"
#include "core/ult.hpp"
#include "sched/dfs_order.hpp"
#include "sched/policy.hpp"

namespace weft::detail {
namespace {

struct heap_entry {
    std::uint64_t key;  // the ult's label when cached (refreshed after a relabel)
    // The ult, and in bit 0 whether it is waiting for its large allocation's
    // turn (alloc_turn queued it): then it is not higher-priority work that
    // another waiting ult should run first. One word, not a third field: the
    // heap moves entries on every push and pop (a 24-byte entry cost 30
    // instructions per yield, callgrind).
    std::uintptr_t tagged;

    heap_entry(std::uint64_t k, ult* t, bool awaiting) : key(k), tagged(reinterpret_cast<std::uintptr_t>(t) | awaiting) {}
    ult* u() const { return reinterpret_cast<ult*>(tagged & ~std::uintptr_t(1)); }
    bool awaiting_turn() const { return (tagged & 1) != 0; }
};
static_assert(alignof(ult) >= 2, "heap_entry keeps a flag in bit 0 of a ult pointer");

// A worker's ready threads (its "deque"), a binary min-heap by order label.
// Threads a worker readies (a forking parent, a thread it wakes, one it
// preempts) go into its own heap, so the heap's minimum is its most recent,
// deepest continuation (the bottom of a deque) and its maximum the oldest,
// shallowest one (the top). Guarded by dfs_state::lock_.
struct alignas(64) dfs_deque {
    std::vector<heap_entry> heap;
    // The next pick is a quota pick (rule 4): set by a quota preemption and
    // by the exit of a dummy thread.
    bool quota_pick = false;
};

// Per-worker figures: written by the owner only (no locked instruction).
struct alignas(64) dfs_counters {
    atomic<std::uint64_t> quota_preemptions{0};
    atomic<std::uint64_t> dummy_threads{0};
    atomic<std::uint64_t> steals{0};
};

void bump(atomic<std::uint64_t>& c, std::uint64_t d) {
    c.store(c.load(memory_order_relaxed) + d, memory_order_relaxed);
}

class dfs_state {
public:
    explicit dfs_state(int workers)
        : workers(workers),
          deques_(new dfs_deque[static_cast<std::size_t>(workers)]),
          counters_(new dfs_counters[static_cast<std::size_t>(workers)]),
          running_(new worker_runs[static_cast<std::size_t>(workers)]) {
        for (int i = 0; i < workers; ++i) deques_[i].heap.reserve(64);
    }

    // Rule 1. The parent is readied here, in the same critical section;
    // ready(.., preempted_by_child), which the core calls next, does nothing.
    void spawn(int w, ult* parent, ult* child) {
        lock_guard<spinlock> g(lock_);
        place_child(child, parent);
        set_running(w, child);
        push(w, parent);
    }

    void ready(int w, ult* t, ready_reason why) {
        lock_guard<spinlock> g(lock_);
        if (why == ready_reason::preempted) deques_[w].quota_pick = true;
        if (!dfs_order::placed(t)) place_new(t, why);
        push(w, t);
        clear_running(w, t);
    }

    // Rule 2.
    ult* pick(int w) {
        if (ready_count_.load(memory_order_relaxed) == 0) return nullptr;
        lock_guard<spinlock> g(lock_);
        ult* next = take(w);
        if (next != nullptr) hand_over(w, next);
        return next;
    }

    // Rule 6: the next thread by rule 2 runs; t goes back to its place.
    ult* yield_swap(int w, ult* t) {
        if (ready_count_.load(memory_order_relaxed) == 0) return t;
        lock_guard<spinlock> g(lock_);
        ult* next = take(w);
        if (next == nullptr) return t;
        if (!dfs_order::placed(t)) note(order_.append(t));
        push(w, t);
        set_running(w, next);
        return next;
    }

    bool has_work() const { return ready_count_.load(memory_order_relaxed) != 0; }

    // Rule 5: a blocked ult stays where it is; one never seen gets a place now,
    // so that it has one when it is woken.
    void on_block(int w, ult* t) {
        clear_running(w, t);
        if (dfs_order::placed(t)) return;
        lock_guard<spinlock> g(lock_);
        note(order_.append(t));
    }

    void on_exit(int w, ult* t) {
        if (!dfs_order::placed(t)) return;
        lock_guard<spinlock> g(lock_);
        clear_running(w, t);  // under the lock: alloc_turn reads t's label
        order_.remove(t);
    }

    void on_run(int w, ult* t) {
        if (dfs_order::placed(t)) hand_over(w, t);
    }

    // Rule 4. The quota applies to the allocation about to be made: a ult is
    // preempted *before* the allocation that would take it past K, so memory
    // is only ever allocated by a ult that has just been (re)scheduled at its
    // priority or is within its quota.
    alloc_verdict on_alloc(int w, std::size_t bytes, std::ptrdiff_t net, std::size_t quota) {
        dfs_counters& c = counters_[static_cast<std::size_t>(w)];
        if (bytes > quota) {
            std::size_t n = std::min<std::size_t>(bytes / quota, tun::max_dummies_per_alloc);
            bump(c.dummy_threads, n);
            return alloc_verdict{static_cast<std::uint32_t>(n), false};
        }
        if (net <= static_cast<std::ptrdiff_t>(quota - bytes)) return alloc_verdict{};
        bump(c.quota_preemptions, 1);
        return alloc_verdict{0, true};
    }

    // Rule 4, the large allocation's turn: after its dummy threads, t waits
    // while higher-priority work is under way, so that the allocation is not
    // made ahead of the serial order. In turn:
    //   - a ready thread left of t runs first on this worker: of the leftmost
    //     deque, the rightmost one left of t (the biggest such piece, as a
    //     steal takes);
    //   - a thread left of t running on another worker: t waits;
    //   - another large allocation left of t waiting for its turn in a deque:
    //     it runs first (the leftmost one; nothing is left of it, so it goes);
    //   - otherwise t goes ahead.
    // The core bounds how long t waits (src/core/preempt.cpp, await_turn).
    ult* alloc_turn(int w, ult* t, bool* wait) {
        *wait = false;
        if (!dfs_order::placed(t)) return t;
        lock_guard<spinlock> g(lock_);
        const std::uint64_t key = dfs_order::label(t);
        int v = leftmost_left_of(key, /*awaiting_turn=*/false);
        if (v >= 0) return turn_to(w, t, remove_rightmost_left_of(deques_[v], key), v);
        for (int x = 0; x < workers; ++x) {
            if (x == w) continue;
            ult* now = running_[x].now.load(memory_order_relaxed);
            ult* exiting = running_[x].exiting.load(memory_order_relaxed);
            if ((now != nullptr && dfs_order::label(now) < key) || (exiting != nullptr && dfs_order::label(exiting) < key)) {
                *wait = true;
                return t;
            }
        }
        v = leftmost_left_of(key, /*awaiting_turn=*/true);
        if (v >= 0) return turn_to(w, t, remove_leftmost_awaiting(deques_[v]), v);
        return t;
    }

    void add_stats(weft_stats_t* out) const {
        for (int i = 0; i < workers; ++i) {
            out->quota_preemptions += counters_[i].quota_preemptions.load(memory_order_relaxed);
            out->dummy_threads += counters_[i].dummy_threads.load(memory_order_relaxed);
            out->steals += counters_[i].steals.load(memory_order_relaxed);
        }
    }
    void reset_stats() {
        for (int i = 0; i < workers; ++i) {
            counters_[i].quota_preemptions.store(0, memory_order_relaxed);
            counters_[i].dummy_threads.store(0, memory_order_relaxed);
            counters_[i].steals.store(0, memory_order_relaxed);
        }
    }

    // What worker w runs, for alloc_turn (ults in the order only; written by w
    // only, read by the others under the lock). `now` is set when w starts a
    // ult and cleared when that ult blocks, yields, is preempted or exits. An
    // exiting ult's worker chooses its next ult (pick_next, on_run) before
    // on_exit, and wakes the joiner in between: `exiting` keeps the exiting
    // ult until on_exit, so that the worker never looks idle to a large
    // allocation waiting for its turn while the work left of it goes on.
    void set_running(int w, ult* t) { running_[w].now.store(t, memory_order_relaxed); }
    void hand_over(int w, ult* t) {
        worker_runs& r = running_[w];
        if (ult* prev = r.now.load(memory_order_relaxed); prev != nullptr) r.exiting.store(prev, memory_order_relaxed);
        r.now.store(t, memory_order_relaxed);
    }
    void clear_running(int w, ult* t) {
        worker_runs& r = running_[w];
        if (r.now.load(memory_order_relaxed) == t) r.now.store(nullptr, memory_order_relaxed);
        if (r.exiting.load(memory_order_relaxed) == t) r.exiting.store(nullptr, memory_order_relaxed);
    }

    const int workers;

private:
    // Rule 2 proper, under the lock: the quota pick, else the worker's own
    // deepest continuation, else a steal.
    [[gnu::always_inline]] ult* take(int w) {
        dfs_deque& d = deques_[w];
        if (d.quota_pick) {
            d.quota_pick = false;
            return take_leftmost_thread(w);
        }
        if (!d.heap.empty()) return pop_min(d);
        return steal_top_of_leftmost_deque(w);
    }

    // The deque whose minimum is the leftmost ready thread (w's own excluded
    // unless own_too), or -1 if all are empty.
    int leftmost_deque(int w, bool own_too) const {
        int victim = -1;
        std::uint64_t best = 0;
        for (int v = 0; v < workers; ++v) {
            const auto& h = deques_[v].heap;
            if (h.empty() || (v == w && !own_too)) continue;
            if (victim < 0 || h.front().key < best) {
                victim = v;
                best = h.front().key;
            }
        }
        return victim;
    }

    // The quota pick: the leftmost ready thread of all (AsyncDF's rule, which
    // the space bound rests on), wherever it is.
    ult* take_leftmost_thread(int w) {
        int v = leftmost_deque(w, /*own_too=*/true);
        if (v < 0) return nullptr;
        if (v != w) bump(counters_[static_cast<std::size_t>(w)].steals, 1);
        return pop_min(deques_[v]);
    }

    // An idle worker's steal: the *rightmost* thread of the leftmost deque,
    // its top: the oldest and shallowest continuation, the biggest piece of
    // the leftmost work, which the thief then runs depth-first on its own.
    ult* steal_top_of_leftmost_deque(int w) {
        int v = leftmost_deque(w, /*own_too=*/false);
        if (v < 0) return nullptr;
        bump(counters_[static_cast<std::size_t>(w)].steals, 1);
        return pop_max(deques_[v]);
    }

    // The deque holding the leftmost ready thread left of `key` whose
    // awaiting_turn flag is `awaiting_turn`, or -1. O(ready threads): rare.
    int leftmost_left_of(std::uint64_t key, bool awaiting_turn) const {
        int victim = -1;
        std::uint64_t best = key;
        for (int v = 0; v < workers; ++v)
            for (const heap_entry& e : deques_[v].heap)
                if (e.awaiting_turn() == awaiting_turn && e.key < best) {
                    victim = v;
                    best = e.key;
                }
        return victim;
    }

    // alloc_turn's switch: t is queued on w's deque, waiting for its turn;
    // next (taken from deque v) runs.
    ult* turn_to(int w, ult* t, ult* next, int v) {
        if (v != w) bump(counters_[static_cast<std::size_t>(w)].steals, 1);
        push(w, t, /*awaiting_turn=*/true);
        set_running(w, next);
        return next;
    }

    // Removes and returns the rightmost ready thread of d left of `key` that is
    // not waiting for its turn (there is one). O(r).
    ult* remove_rightmost_left_of(dfs_deque& d, std::uint64_t key) {
        auto& h = d.heap;
        std::size_t m = h.size();
        for (std::size_t i = 0; i < h.size(); ++i)
            if (!h[i].awaiting_turn() && h[i].key < key && (m == h.size() || h[i].key > h[m].key)) m = i;
        return remove_at(d, m);
    }

    // Removes and returns d's leftmost thread waiting for its turn (there is one).
    ult* remove_leftmost_awaiting(dfs_deque& d) {
        auto& h = d.heap;
        std::size_t m = h.size();
        for (std::size_t i = 0; i < h.size(); ++i)
            if (h[i].awaiting_turn() && (m == h.size() || h[i].key < h[m].key)) m = i;
        return remove_at(d, m);
    }

    // Removes and returns d's entry at index m; the last entry fills the slot
    // and moves up or down to keep the heap.
    ult* remove_at(dfs_deque& d, std::size_t m) {
        auto& h = d.heap;
        ult* out = h[m].u();
        heap_entry e = h.back();
        h.pop_back();
        if (m < h.size()) {
            if (m > 0 && e.key < h[(m - 1) / 2].key) sift_up(h, m, e);
            else sift_down(h, m, e);
        }
        ready_count_.store(ready_count_.load(memory_order_relaxed) - 1, memory_order_relaxed);
        return out;
    }

    // A ult readied before it has a place: a pinned parent's child (ready(..,
    // spawned), policy.hpp: rule 1's place, its parent being the ult running
    // on this worker, which goes on) or one first seen without a fork (rule
    // 7). Out of line: rare, and its call would cost every wake-up a saved
    // register.
    [[gnu::noinline]] void place_new(ult* t, ready_reason why) {
        if (why == ready_reason::spawned) place_child(t, current_ult());
        else note(order_.append(t));
    }

    // Rule 1's place: immediately left of the parent (placed first if new).
    void place_child(ult* child, ult* parent) {
        if (!dfs_order::placed(parent)) note(order_.append(parent));
        note(order_.insert_before(child, parent));
    }

    // Relabelling keeps the order, so the heaps stay heaps; only the keys
    // cached in them are stale.
    void note(bool relabelled) {
        if (!relabelled) return;
        for (int v = 0; v < workers; ++v)
            for (heap_entry& e : deques_[v].heap) e.key = dfs_order::label(e.u());
    }

    static void sift_up(std::vector<heap_entry>& h, std::size_t i, heap_entry e) {
        while (i > 0) {
            std::size_t parent = (i - 1) / 2;
            if (h[parent].key <= e.key) break;
            h[i] = h[parent];
            i = parent;
        }
        h[i] = e;
    }

    void push(int w, ult* t, bool awaiting_turn = false) {
        auto& h = deques_[w].heap;
        h.emplace_back(dfs_order::label(t), t, awaiting_turn);
        sift_up(h, h.size() - 1, h.back());
        ready_count_.store(ready_count_.load(memory_order_relaxed) + 1, memory_order_relaxed);
    }

    static void sift_down(std::vector<heap_entry>& h, std::size_t i, heap_entry e) {
        const std::size_t n = h.size();
        for (;;) {
            std::size_t c = 2 * i + 1;
            if (c >= n) break;
            if (c + 1 < n && h[c + 1].key < h[c].key) ++c;
            if (e.key <= h[c].key) break;
            h[i] = h[c];
            i = c;
        }
        h[i] = e;
    }

    ult* pop_min(dfs_deque& d) {
        auto& h = d.heap;
        ult* top = h.front().u();
        heap_entry e = h.back();
        h.pop_back();
        if (!h.empty()) sift_down(h, 0, e);
        ready_count_.store(ready_count_.load(memory_order_relaxed) - 1, memory_order_relaxed);
        return top;
    }

    // The maximum of a min-heap is one of its leaves (the second half). O(r)
    // for r ready threads on that worker: steals are rare.
    ult* pop_max(dfs_deque& d) {
        auto& h = d.heap;
        std::size_t n = h.size();
        std::size_t m = n / 2;
        for (std::size_t i = n / 2 + 1; i < n; ++i)
            if (h[i].key > h[m].key) m = i;
        return remove_at(d, m);
    }

    // Touched on every operation, by every worker.
    alignas(64) spinlock lock_;
    dfs_order order_;
    std::unique_ptr<dfs_deque[]> deques_;
    // Read without the lock by idle workers and empty picks; written under it.
    alignas(64) atomic<std::size_t> ready_count_{0};
    std::unique_ptr<dfs_counters[]> counters_;
    struct alignas(64) worker_runs {
        atomic<ult*> now{nullptr};
        atomic<ult*> exiting{nullptr};
    };
    std::unique_ptr<worker_runs[]> running_;
};

dfs_state& s(void* self) { return *static_cast<dfs_state*>(self); }

const sched_policy_def dfs_policy = {
    .name = "dfs",
    .description = "space-efficient depth-first order (Narlikar & Blelloch, with DFDeques' per-worker deques): a "
                   "forked child runs first, an idle worker takes the top of the leftmost deque, memory quota WEFT_QUOTA",
    .create = [](int workers) -> void* { return new dfs_state(workers); },
    .destroy = [](void* self) { delete static_cast<dfs_state*>(self); },
    .spawn =
        [](void* self, int w, ult* parent, ult* child) {
            s(self).spawn(w, parent, child);
            return true;
        },
    .ready =
        [](void* self, int w, ult* t, ready_reason why) {
            if (why != ready_reason::preempted_by_child) s(self).ready(w, t, why);
        },
    .pick_next = [](void* self, int w) { return s(self).pick(w); },
    .yield_swap = [](void* self, int w, ult* t) { return s(self).yield_swap(w, t); },
    .has_work = [](void* self, int) { return s(self).has_work(); },
    .add_stats = [](void* self, weft_stats_t* out) { s(self).add_stats(out); },
    .reset_stats = [](void* self) { s(self).reset_stats(); },
    .space =
        {
            .on_block = [](void* self, int w, ult* t) { s(self).on_block(w, t); },
            .on_exit = [](void* self, int w, ult* t) { s(self).on_exit(w, t); },
            .on_alloc = [](void* self, int w, ult*, std::size_t bytes, std::ptrdiff_t net,
                           std::size_t quota) { return s(self).on_alloc(w, bytes, net, quota); },
            .on_run = [](void* self, int w, ult* t) { s(self).on_run(w, t); },
            .alloc_turn = [](void* self, int w, ult* t, bool* wait) { return s(self).alloc_turn(w, t, wait); },
        },
};

}  // namespace
WEFT_REGISTER(dfs_policy);
}  // namespace weft::detail
