// ws — the non-blocking work stealer of Arora, Blumofe & Plaxton ("Thread
// scheduling for multiprogrammed multiprocessors", SPAA'98; Hood).
//
// Design essay (the long form, with the measurements, is docs/design/ws.md)
// -------------------------------------------------------------------------
// Glossary
//   deque     a worker's ws_deque (src/sched/ws_deque.hpp): the owner pushes
//             and pops at the bottom, thieves take from the top with a CAS.
//   thief     a worker whose own deques are empty and that takes from another
//             worker's; the other worker is its victim.
//   round     one steal attempt at every other worker, starting at a random
//             one: what pick_next does when its own deques are empty.
//   continuation  the rest of a parent after a spawn: the parent ult itself,
//             queued while its child runs.
//
// Each worker has two deques:
//   work      continuations, woken threads, spawned threads. The owner runs
//             them LIFO (the most recent first: depth-first, cache-warm);
//             thieves take the oldest, i.e. the continuation highest in the
//             fork tree, which carries the most work (Arora, Blumofe & Plaxton's structural
//             lemma: the deque is top-heavy), so one steal moves a large
//             piece of the computation and steals stay rare (O(P * T_inf)
//             expected).
//   yielded   threads that called weft_thread_yield. Everyone, the owner
//             included, takes them oldest first. In the work deque a yielder
//             would be popped straight back (LIFO) and a yield would be a
//             no-op; here it waits behind every other ready thread of its
//             worker, and yielders go round-robin among themselves.
//
// Work-first (Cilk-5): spawn runs the child at once; the core then queues the
// parent's continuation with ready(.., preempted_by_child), at the bottom of
// the worker's work deque, where thieves can take it. On one worker this is
// exactly the serial depth-first execution of the program, and a thief always
// takes a continuation (never a not-yet-started child), so each worker holds
// at most one continuation per level of the fork tree (Cilk's space bound,
// S_P <= P * S_1). The core never asks a pinned parent's child to run first
// (policy.hpp, "Pinned ults"): it gives us ready(child, spawned), and the
// child waits at the bottom of the work deque, stealable, like a
// continuation.
//
// Picking the next thread (pick_next), in order:
//   1. every tun::ws_fair_interval picks, the oldest yielder first (below);
//   2. the own work deque, bottom (LIFO);
//   3. the own yielded deque, top (FIFO);
//   4. a round of steals: for each other worker, starting at a random one
//      (per-worker xorshift), its work deque's top, then its yielded
//      deque's top. A steal that loses a race retries the same victim (a lost
//      race means another taker succeeded, so this is lock-free), so a round
//      that finds nothing saw every deque empty: the core's parking protocol
//      relies on that for its final look (core/sleep/README.md, step 3).
// Step 1 bounds how long a yielder can wait behind a worker that keeps its
// work deque busy (threads waking each other forever): at most tun::ws_fair_interval
// scheduling decisions (Go's runtime checks its global queue every 61
// schedticks for the same reason).
//
// Idle workers (src/core/worker.cpp): at most one steals, the spinning worker
// (core/sleep/README.md, "The spinning worker"; Go's rule): it looks with
// has_work (a scan of every deque's size) and pick_next, with a sched_yield()
// between failed looks (tun::ws_idle_yield_rounds), then parks; the others
// look at their own deques (pick_local) and park. A push wakes a parked
// worker only when none spins. The yield is Arora, Blumofe & Plaxton's: under
// multiprogramming a thief that spins keeps the processor from a descheduled
// worker that may hold the very thread everyone waits for; yielding gives it
// the processor. WEFT_WS_YIELD=off takes the yield away, for the experiment
// that measures it (weft-bench oversub; docs/design/ws.md, section 4).
//
// Futile steals: a thief that steals from a serial chain (a parent that
// spawns a child and joins it at once, as knary's first r children) takes
// the parent's continuation, which blocks at its join straight away; the
// thief steals the next one, and so on, once per spawn. It then keeps a CPU
// busy for a program with nothing to run in parallel, moves the chain
// between CPUs, and never parks, since each steal starts its idle stages
// over. So each steal
// is judged when the thief next looks for work: futile if the stolen thread
// stopped within tun::ws_futile_steal_ns and queued nothing meanwhile (no
// spawn, no wake-up on this worker). After tun::ws_futile_streak futile
// steals in a row, the look returns nothing and the idle loop naps
// (idle_nap_ns; policy.hpp), out of notify_work's reach, for
// tun::ws_nap_first_ns, doubled after each further futile steal up to
// tun::ws_nap_max_ns; a steal that was not futile ends the streak. The napping
// thief is the spinning worker and keeps the role through its naps and
// through each steal made in a streak (spinner_keep_ns), so that the chain's
// pushes wake no other thief (docs/design/ws.md, "One thief at a time").
// Arora, Blumofe & Plaxton's thief yields its processor between failed steal
// attempts; this one also gives it back between steals that fail in effect
// (docs/design/ws.md, "Futile steals").
//
// Lost wake-ups: a push is one release store of bottom; make_ready then runs
// the core's notify_work (light fence, load of `sleepers`, then of the
// spinner). The spinning worker, before it parks, gives its role up,
// increments `sleepers`, runs the heavy fence, and makes one last full round;
// another idle worker, after the same fence, looks at its own deques and
// takes the role if nobody has it. The fences make these store-buffering
// pairs: either the round sees the new bottom, or notify_work sees the
// sleeper or the spinner (core/sleep/README.md, "The spinning worker").
//
// Statistics: steals and failed steals, counted by each worker in its own
// counters (relaxed load + store, no locked instruction); weft_stats_reset
// moves a per-worker baseline instead of clearing them, so a reset never races
// with an owner's increment.
#include <algorithm>
#include <cassert>
#include <cstdint>
#include <memory>
#include <utility>

#include "core/clock.hpp"
#include "core/dispatch.hpp"
#include "core/runtime.hpp"
#include "core/tunables.hpp"
#include "core/ult.hpp"
#include "core/wait.hpp"
#include "sched/policy.hpp"
#include "sched/ws_deque.hpp"

namespace weft::detail {
namespace {


// --- State ----------------------------------------------------------------------

struct alignas(64) ws_worker {
    ws_deque<ult> work{tun::ws_work_log2_capacity};
    ws_deque<ult> yielded{tun::ws_yielded_log2_capacity};

    // Owner only, touched on every pick.
    alignas(64) std::uint64_t rng = 0;  // xorshift64 state, never 0
    unsigned fair_countdown = tun::ws_fair_interval;
    // Futile steals (above), owner only.
    std::uint64_t pushes = 0;           // threads queued by ready(): a stolen thread that spawns or wakes one
    std::uint64_t pushes_at_steal = 0;
    std::int64_t stolen_at_ns = 0;      // the last steal, not yet judged; 0: none
    ult* last_stolen = nullptr;         // the thread of that steal (spinner_keep_ns)
    int last_victim = -1;               // the worker it was stolen from
    int futile_streak = 0;
    std::int64_t nap_next_ns = tun::ws_nap_first_ns;
    std::int64_t nap_due_ns = 0;        // the nap the idle loop takes next; 0: none
    // Statistics: written by the owner only (relaxed load + store), read by
    // anyone. The baselines are written by weft_stats_reset.
    atomic<std::uint64_t> steals{0};
    atomic<std::uint64_t> failed_steals{0};
    atomic<std::uint64_t> steals_base{0};
    atomic<std::uint64_t> failed_steals_base{0};
    atomic<std::uint64_t> naps{0};
    atomic<std::uint64_t> naps_base{0};
};

struct ws_state {
    explicit ws_state(int workers) : n(workers), w(std::make_unique<ws_worker[]>(static_cast<std::size_t>(workers))) {
        for (int i = 0; i < n; ++i) {
            // splitmix64 of the index: distinct, well-mixed, non-zero seeds.
            std::uint64_t z = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(i + 1);
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
            z ^= z >> 31;
            w[i].rng = z != 0 ? z : 1;
        }
    }
    const int n;
    std::unique_ptr<ws_worker[]> w;
};

ws_state& st(void* self) { return *static_cast<ws_state*>(self); }

// Owner-only counter: no locked instruction (worker stats in runtime.hpp).
void bump(atomic<std::uint64_t>& c, std::uint64_t d) {
    c.store(c.load(memory_order_relaxed) + d, memory_order_relaxed);
}

// A uniform integer in [0, range) from the worker's xorshift64 (Marsaglia)
// and Lemire's multiply-shift reduction: no division.
std::uint32_t random_below(ws_worker& me, std::uint32_t range) {
    std::uint64_t x = me.rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    me.rng = x;
    return static_cast<std::uint32_t>((static_cast<std::uint64_t>(static_cast<std::uint32_t>(x >> 32)) * range) >> 32);
}

// The callbacks run on worker w only: its deques have exactly one owner.
void assert_owner([[maybe_unused]] int w) { assert(current_worker() != nullptr && current_worker()->index == w); }

// Steps 1-3 of pick_next: the worker's own deques. `solo`: one worker, so no
// thief ever touches them (the unshared variants skip the fences and CASes).
ult* take_local(ws_worker& me, bool solo) {
    auto take_yielded = [&] { return solo ? me.yielded.take_top_unshared() : me.yielded.steal_until_empty(); };
    if (--me.fair_countdown == 0) {
        me.fair_countdown = tun::ws_fair_interval;
        if (me.yielded.size_hint() > 0)
            if (ult* t = take_yielded()) return t;
    }
    if (ult* t = solo ? me.work.pop_unshared() : me.work.pop()) return t;
    // size_hint() == 0 is exact for the owner: skip the steal's fence.
    if (me.yielded.size_hint() > 0) return take_yielded();
    return nullptr;
}

// Step 4: one round of steals, starting at a random victim. With
// with_yielded false only work deques are robbed (see yield_swap). *from: the
// worker the thread returned was taken from.
ult* steal_round(ws_state& s, int self, bool with_yielded, int* from = nullptr) {
    const int n = s.n;
    if (n < 2) return nullptr;
    ws_worker& me = s.w[self];
    const std::uint32_t others = static_cast<std::uint32_t>(n - 1);
    std::uint32_t k = random_below(me, others);
    std::uint64_t failed = 0;
    ult* got = nullptr;
    for (std::uint32_t i = 0; i < others; ++i, ++k) {
        if (k == others) k = 0;
        int v = self + 1 + static_cast<int>(k);
        if (v >= n) v -= n;
        ws_worker& victim = s.w[v];
        // The size hint (two plain loads) skips the steal's fence and CAS
        // for deques that look empty: most of them, when workers go idle.
        if ((victim.work.size_hint() > 0 && (got = victim.work.steal_until_empty()) != nullptr) ||
            (with_yielded && victim.yielded.size_hint() > 0 && (got = victim.yielded.steal_until_empty()) != nullptr)) {
            if (from != nullptr) *from = v;
            break;
        }
        ++failed;
    }
    if (failed != 0) bump(me.failed_steals, failed);
    if (got != nullptr) bump(me.steals, 1);
    return got;
}

// Judges the worker's last steal (the stolen thread has stopped and the
// worker's own deques are empty). True when it ends a run of
// tun::ws_futile_streak futile steals: the caller returns nothing, and the
// idle loop naps for nap_due_ns if it is the spinning worker (a worker that
// steals no more has nothing to nap away from).
bool after_futile_steal(ws_worker& me) {
    bool futile = me.pushes == me.pushes_at_steal && monotonic_ns() - me.stolen_at_ns < tun::ws_futile_steal_ns;
    me.stolen_at_ns = 0;
    me.last_stolen = nullptr;
    if (!futile) {
        me.futile_streak = 0;
        me.nap_next_ns = tun::ws_nap_first_ns;
        return false;
    }
    if (++me.futile_streak < tun::ws_futile_streak) return false;
    me.nap_due_ns = me.nap_next_ns;
    me.nap_next_ns = std::min(me.nap_next_ns * 2, tun::ws_nap_max_ns);
    bump(me.naps, 1);
    return true;
}

bool deque_nonempty(ws_worker& x) { return x.work.size_hint() > 0 || x.yielded.size_hint() > 0; }

// --- Callbacks ----------------------------------------------------------------

void* ws_create(int workers) { return new ws_state(workers); }

void ws_destroy(void* self) { delete static_cast<ws_state*>(self); }

// Work-first: run the child now; the core queues the parent's continuation
// in our work deque.
bool ws_spawn(void*, int, ult*, ult*) { return true; }

void ws_ready(void* self, int w, ult* t, ready_reason why) {
    assert_owner(w);
    ws_worker& me = st(self).w[w];
    ++me.pushes;
    if (why == ready_reason::yielded)
        me.yielded.push(t);
    else
        me.work.push(t);  // continuation, woken, a pinned parent's child, preempted: the owner's next pick
}

ult* ws_pick_next(void* self, int w) {
    assert_owner(w);
    ws_state& s = st(self);
    ws_worker& me = s.w[w];
    if (ult* t = take_local(me, s.n < 2)) return t;
    if (me.stolen_at_ns != 0 && after_futile_steal(me)) return nullptr;
    ult* t = steal_round(s, w, /*with_yielded=*/true, &me.last_victim);
    if (t != nullptr) {
        me.stolen_at_ns = monotonic_ns();
        me.pushes_at_steal = me.pushes;
        me.last_stolen = t;
    }
    return t;
}

// An idle worker that is not the spinning worker: its own deques only.
ult* ws_pick_local(void* self, int w) {
    assert_owner(w);
    ws_state& s = st(self);
    ws_worker& me = s.w[w];
    if (ult* t = take_local(me, s.n < 2)) return t;
    // The stolen thread has stopped: judge the steal here too, since a worker
    // whose thread blocks looks here first (dispatch), not in pick_next.
    if (me.stolen_at_ns != 0) (void)after_futile_steal(me);
    return nullptr;
}

// The spinning worker keeps its role while it runs a thread it stole in a run
// of futile steals: that thread will most likely block at once, and handing
// the role on would wake another worker to steal the next link of the chain
// (docs/design/ws.md, "One thief at a time").
std::int64_t ws_spinner_keep_ns(void* self, int w, ult* t, int* from) {
    ws_worker& me = st(self).w[w];
    if (t != me.last_stolen || me.futile_streak == 0) return 0;
    *from = me.last_victim;
    return tun::ws_futile_steal_ns;
}

std::int64_t ws_idle_nap_ns(void* self, int w) { return std::exchange(st(self).w[w].nap_due_ns, 0); }

// t yields: the next thread comes from this worker's deques, else from other
// workers' work deques; t then goes to the yielded deque. A yield never steals
// another worker's yielders: two busy workers whose threads spin on yield
// would otherwise trade them back and forth on every yield (a migration and a
// remote CAS each); idle thieves still take yielders (pick_next).
ult* ws_yield_swap(void* self, int w, ult* t) {
    assert_owner(w);
    ws_state& s = st(self);
    ws_worker& me = s.w[w];
    ult* next = take_local(me, s.n < 2);
    if (next == nullptr) next = steal_round(s, w, /*with_yielded=*/false);
    if (next == nullptr) return t;  // nothing else to run: t goes on, unqueued
    me.yielded.push(t);
    return next;
}

// False only if every deque looked empty; a push racing with the scan may be
// missed, which the parking protocol's final full round catches.
bool ws_has_work(void* self, int w) {
    ws_state& s = st(self);
    if (deque_nonempty(s.w[w])) return true;
    for (int v = 0; v < s.n; ++v)
        if (v != w && deque_nonempty(s.w[v])) return true;
    return false;
}

void ws_add_stats(void* self, weft_stats_t* out) {
    ws_state& s = st(self);
    for (int i = 0; i < s.n; ++i) {
        ws_worker& x = s.w[i];
        out->steals += x.steals.load(memory_order_relaxed) - x.steals_base.load(memory_order_relaxed);
        out->failed_steals +=
            x.failed_steals.load(memory_order_relaxed) - x.failed_steals_base.load(memory_order_relaxed);
        out->steal_naps += x.naps.load(memory_order_relaxed) - x.naps_base.load(memory_order_relaxed);
    }
}

void ws_reset_stats(void* self) {
    ws_state& s = st(self);
    for (int i = 0; i < s.n; ++i) {
        ws_worker& x = s.w[i];
        x.steals_base.store(x.steals.load(memory_order_relaxed), memory_order_relaxed);
        x.failed_steals_base.store(x.failed_steals.load(memory_order_relaxed), memory_order_relaxed);
        x.naps_base.store(x.naps.load(memory_order_relaxed), memory_order_relaxed);
    }
}

const sched_policy_def ws_policy = {
    .name = "ws",
    .description = "non-blocking work stealing: a lock-free deque per worker, work-first spawn, random victims",
    .create = ws_create,
    .destroy = ws_destroy,
    .spawn = ws_spawn,
    .ready = ws_ready,
    .pick_next = ws_pick_next,
    .yield_swap = ws_yield_swap,
    .pick_local = ws_pick_local,
    .spinner_keep_ns = ws_spinner_keep_ns,
    .has_work = ws_has_work,
    .idle_nap_ns = ws_idle_nap_ns,
    .add_stats = ws_add_stats,
    .reset_stats = ws_reset_stats,
    // No space hooks: a blocked thread is in no deque (ready(.., woken) brings
    // it back), and ws bounds space by the work-first order alone.
    .idle_yield_rounds = tun::ws_idle_yield_rounds,
};

}  // namespace
WEFT_REGISTER(ws_policy);
}  // namespace weft::detail
