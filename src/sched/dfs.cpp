// dfs — the space-efficient scheduler of seed 000 (Narlikar & Blelloch, SC'98,
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
//      its serial recursion would.
//   2. Pick: a worker that needs a ult (its ult exited, blocked, yielded or
//      was preempted) takes the leftmost ready ult (pick_next: heap minimum).
//      With p workers, the p leftmost ready ults run, up to the lag below.
//   3. No asynchronous preemption: a ult that becomes ready left of a running
//      one does not stop it; the running ult goes on until its next scheduling
//      point (fork, block, exit, yield, or quota). This is the paper's
//      algorithm (a processor picks at scheduling points only); the quota is
//      what bounds how far a ult may run ahead of higher-priority work, and
//      what the space bound S1 + O(K*p*D) charges for.
//   4. Quota: a ult that would exceed K is preempted (ready_reason::preempted:
//      it goes back to its place and the worker takes the leftmost ready ult,
//      which may be the same ult); an allocation larger than K first forks
//      about size/K dummy threads as a binary tree (just left of the ult, so
//      higher-priority work gets ahead of the allocation) and joins them
//      (on_alloc here decides; src/mem and src/core/preempt.cpp carry it out).
//   5. Block: a blocked ult keeps its place in the order (it stays in the
//      list, out of the heap); woken, it re-enters the heap at its place.
//   6. Yield (weft_thread_yield): the ult lets the leftmost *other* ready ult
//      run, then competes again from its place. A strict "the leftmost runs"
//      yield would never let a spin-wait loop (yield until a flag is set) see a
//      lower-priority ult set the flag: livelock on one worker.
//   7. Ults the policy first sees without a fork (main, ults created by kernel
//      threads outside weft, which reach workers through the core's inject
//      queue) are appended at the right end: new roots run after the work
//      already in the order, in order of appearance.
//
// Structure: one spinlock guards the order and the heap. Every operation is
// O(1) or O(log r) (r = ready ults, typically O(p*D)), plus the amortized
// relabelling of the order. The paper kept one lock-protected list of all ults
// and scanned it for the first ready one: O(live ults) per pick when many are
// blocked. Per-worker structures (DFDeques, the paper's [33]) scale further but
// give up the exact global order this policy promises; with the machines weft
// targets (2-16 workers) one short critical section per operation is cheaper
// than the coordination they need. Measured in docs/design/dfs.md.
//
// Costs per fork/exit pair: three lock acquisitions (spawn: insert child and
// ready the parent; on_exit: unlink; pick_next: pop). ready(.., preempted_by_
// child) is free: spawn already readied the parent in the same critical
// section.
//
// Memory ordering: the spinlock orders everything; `ready_count_` mirrors the
// heap size for has_work and for an empty pick without the lock (a stale value
// only delays or repeats a look; the parking protocol re-checks with pick_next
// after announcing sleep).
#include <algorithm>
#include <memory>
#include <vector>

#include "core/tunables.hpp"
#include "core/ult.hpp"
#include "sched/dfs_order.hpp"
#include "sched/policy.hpp"
#include "sync/primitives.hpp"

namespace weft::detail {
namespace {

struct heap_entry {
    std::uint64_t key;  // the ult's label when cached (refreshed after a relabel)
    ult* u;
};

// Quota figures, per worker: written by the owner only (no locked instruction).
struct alignas(64) dfs_counters {
    atomic<std::uint64_t> quota_preemptions{0};
    atomic<std::uint64_t> dummy_threads{0};
};

void bump(atomic<std::uint64_t>& c, std::uint64_t d) {
    c.store(c.load(memory_order_relaxed) + d, memory_order_relaxed);
}

class dfs_state {
public:
    explicit dfs_state(int workers) : counters_(new dfs_counters[static_cast<std::size_t>(workers)]) {
        heap_.reserve(256);
    }

    // Rule 1. The parent is readied here, in the same critical section;
    // ready(.., preempted_by_child), which the core calls next, does nothing.
    void spawn(ult* parent, ult* child) {
        lock_guard<spinlock> g(lock_);
        if (!dfs_order::placed(parent)) note(order_.append(parent));
        note(order_.insert_before(child, parent));
        // A pinned parent (main during weft_finalize) goes to its worker's
        // inbox instead: the core never hands it to ready().
        if (parent->pinned_worker < 0) push(parent);
    }

    void ready(ult* t) {
        lock_guard<spinlock> g(lock_);
        if (!dfs_order::placed(t)) note(order_.append(t));
        push(t);
    }

    ult* pick() {
        if (ready_count_.load(memory_order_relaxed) == 0) return nullptr;
        lock_guard<spinlock> g(lock_);
        return heap_.empty() ? nullptr : pop();
    }

    // Rule 6: the leftmost other ready ult runs; t goes back to its place.
    ult* yield_swap(ult* t) {
        if (ready_count_.load(memory_order_relaxed) == 0) return t;
        lock_guard<spinlock> g(lock_);
        if (heap_.empty()) return t;
        if (!dfs_order::placed(t)) note(order_.append(t));
        ult* next = pop();
        push(t);
        return next;
    }

    bool has_work() const { return ready_count_.load(memory_order_relaxed) != 0; }

    // Rule 5: a blocked ult stays where it is; one never seen gets a place now,
    // so that it has one when it is woken.
    void on_block(ult* t) {
        if (dfs_order::placed(t)) return;
        lock_guard<spinlock> g(lock_);
        note(order_.append(t));
    }

    void on_exit(ult* t) {
        if (!dfs_order::placed(t)) return;
        lock_guard<spinlock> g(lock_);
        order_.remove(t);
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

    void add_stats(weft_stats_t* out, int workers) const {
        for (int i = 0; i < workers; ++i) {
            out->quota_preemptions += counters_[i].quota_preemptions.load(memory_order_relaxed);
            out->dummy_threads += counters_[i].dummy_threads.load(memory_order_relaxed);
        }
    }
    void reset_stats(int workers) {
        for (int i = 0; i < workers; ++i) {
            counters_[i].quota_preemptions.store(0, memory_order_relaxed);
            counters_[i].dummy_threads.store(0, memory_order_relaxed);
        }
    }

    int workers = 0;

private:
    // Relabelling keeps the order, so the heap stays a heap; only the keys
    // cached in it are stale.
    void note(bool relabelled) {
        if (relabelled)
            for (heap_entry& e : heap_) e.key = dfs_order::label(e.u);
    }

    void push(ult* t) {
        std::size_t i = heap_.size();
        heap_.push_back(heap_entry{dfs_order::label(t), t});
        heap_entry e = heap_[i];
        while (i > 0) {
            std::size_t parent = (i - 1) / 2;
            if (heap_[parent].key <= e.key) break;
            heap_[i] = heap_[parent];
            i = parent;
        }
        heap_[i] = e;
        ready_count_.store(heap_.size(), memory_order_relaxed);
    }

    ult* pop() {
        ult* top = heap_.front().u;
        heap_entry e = heap_.back();
        heap_.pop_back();
        std::size_t n = heap_.size();
        if (n != 0) {
            std::size_t i = 0;
            for (;;) {
                std::size_t c = 2 * i + 1;
                if (c >= n) break;
                if (c + 1 < n && heap_[c + 1].key < heap_[c].key) ++c;
                if (e.key <= heap_[c].key) break;
                heap_[i] = heap_[c];
                i = c;
            }
            heap_[i] = e;
        }
        ready_count_.store(n, memory_order_relaxed);
        return top;
    }

    // Touched on every operation, by every worker.
    alignas(64) spinlock lock_;
    dfs_order order_;
    std::vector<heap_entry> heap_;
    // Read without the lock by idle workers and empty picks.
    alignas(64) atomic<std::size_t> ready_count_{0};
    std::unique_ptr<dfs_counters[]> counters_;
};

dfs_state& s(void* self) { return *static_cast<dfs_state*>(self); }

const sched_policy_def dfs_policy = {
    .name = "dfs",
    .description = "space-efficient depth-first order (seed 000): a forked child runs first, workers take "
                   "the leftmost ready thread, memory quota WEFT_QUOTA",
    .create =
        [](int workers) -> void* {
            auto* st = new dfs_state(workers);
            st->workers = workers;
            return st;
        },
    .destroy = [](void* self) { delete static_cast<dfs_state*>(self); },
    .spawn =
        [](void* self, int, ult* parent, ult* child) {
            s(self).spawn(parent, child);
            return true;
        },
    .ready =
        [](void* self, int, ult* t, ready_reason why) {
            if (why != ready_reason::preempted_by_child) s(self).ready(t);
        },
    .pick_next = [](void* self, int) { return s(self).pick(); },
    .yield_swap = [](void* self, int, ult* t) { return s(self).yield_swap(t); },
    .has_work = [](void* self, int) { return s(self).has_work(); },
    .on_block = [](void* self, int, ult* t) { s(self).on_block(t); },
    .on_exit = [](void* self, int, ult* t) { s(self).on_exit(t); },
    .add_stats = [](void* self, weft_stats_t* out) { s(self).add_stats(out, s(self).workers); },
    .reset_stats = [](void* self) { s(self).reset_stats(s(self).workers); },
    .on_alloc = [](void* self, int w, ult*, std::size_t bytes, std::ptrdiff_t net,
                   std::size_t quota) { return s(self).on_alloc(w, bytes, net, quota); },
};

}  // namespace
WEFT_REGISTER_POLICY(dfs_policy);
}  // namespace weft::detail
