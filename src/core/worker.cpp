// weft::detail — a worker's idle ult: look for work, spin, park; and the wake side.
// The stages and the park are the core's sleep module (core/sleep/backoff.hpp);
// the protocol, its steps and its proof sketch are in core/sleep/README.md.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

#include "base/asymmetric_fence.hpp"
#include "core/deadlock.hpp"
#include "core/dispatch.hpp"
#include "core/futex.hpp"
#include "core/outside.hpp"
#include "core/progress.hpp"
#include "core/runtime.hpp"
#include "core/sleep/claim.hpp"
#include "core/sleep/stages.hpp"
#include "core/sleep/timed_park.hpp"
#include "core/timer.hpp"
#include "core/tunables.hpp"
#include "core/wait.hpp"
#include "core/worker.hpp"

namespace weft::detail {

namespace {

bool may_have_work(runtime* rt, worker* w) {
    if (w->inbox.maybe_nonempty() || rt->inject.maybe_nonempty()) return true;
    if (rt->timers->pending() && rt->timers->next_deadline() <= monotonic_ns()) return true;
    if (rt->policy->has_work != nullptr) return rt->policy->has_work(rt->policy_state, w->index);
    return true;  // no hint: let pick decide
}

// Takes w out of the parked set; false if it was not in it (running, spinning,
// or already taken out by another waker). Call with rt->park_lock held.
bool leave_parked_set(runtime* rt, worker* w) {
    if (!w->parked) return false;
    w->parked = false;
    if (w->napping) {  // counted nowhere: only its inbox and the runtime's stop end a nap early
        w->napping = false;
        return true;
    }
    if (w->dormant) {  // a dropped worker is in no list: only its inbox and set_active_workers wake it
        w->dormant = false;
        rt->dormant.fetch_sub(1, memory_order_relaxed);
        return true;
    }
    // Most claims take the last to park (sleep::parked_to_claim).
    if (rt->parked.back() == w) rt->parked.pop_back();
    else rt->parked.erase(std::find(rt->parked.begin(), rt->parked.end(), w));
    rt->sleepers.fetch_sub(1, memory_order_relaxed);
    return true;
}

// The one way a parked worker is woken: w has been taken out of the parked
// set (by its waker, under park_lock); its wake word is set, then the futex
// woken, so that a worker between its last look and futex_wait sees the word
// and does not sleep.
void rouse(runtime* rt, worker* w) {
    w->wake_word.store(1, memory_order_release);
    futex_wake(&w->wake_word);
    rt->wakeups.fetch_add(1, memory_order_relaxed);
}

// Removes w from the parked set if it is still there (it found work itself).
void unpark_self(runtime* rt, worker* w) {
    lock_guard<spinlock> g(rt->park_lock);
    (void)leave_parked_set(rt, w);
}

// --- The spinning worker (core/sleep/README.md, "The spinning worker") ------
// At most one idle worker looks in the other workers' shares (steals); a push
// wakes a parked worker only when none does. Only for a policy with per-worker
// shares (pick_local); for the others `spinner` stays null and every idle
// worker looks at the shared queue.

bool has_roles(runtime* rt) { return rt->policy->pick_local != nullptr && rt->nworkers > 1; }

bool is_spinner(runtime* rt, worker* w) { return rt->spinner.load(memory_order_relaxed) == w; }

// Takes the role if nobody has it.
bool try_spin(runtime* rt, worker* w) {
    worker* none = nullptr;
    return has_roles(rt) && rt->spinner.load(memory_order_relaxed) == nullptr &&
           rt->spinner.compare_exchange_strong(none, w, memory_order_seq_cst);
}

// Gives the role up, if w still has it (a push may have taken it: notify_work).
// Seq_cst: the release is the store of the spinner's step S1 (README).
void stop_spinning(runtime* rt, worker* w) {
    worker* me = w;
    rt->spinner.compare_exchange_strong(me, nullptr, memory_order_seq_cst);
}

// Wakes a parked worker (sleep::parked_to_claim: one that parked on another
// CPU than the waker's, if any) as the spinning worker if nobody spins (with
// `role`; without, just wakes it). The role is given under park_lock together
// with the claim, so that no push sees the role taken before a worker has it.
void wake_parked(runtime* rt, bool role) {
    worker* target = nullptr;
    int const waker_cpu = sched_getcpu();
    {
        lock_guard<spinlock> g(rt->park_lock);
        if (rt->parked.empty()) return;
        target = sleep::parked_to_claim(rt->parked, waker_cpu);
        worker* none = nullptr;
        if (role && !rt->spinner.compare_exchange_strong(none, target, memory_order_seq_cst)) return;
        (void)leave_parked_set(rt, target);
    }
    rouse(rt, target);
}

// A spinning worker that found work, or gave the role up and then found work
// in its last look, hands the role on (Go's resetspinning + wakep): pushes
// made while it spun woke nobody, and some of that work may remain.
void hand_on(runtime* rt) {
    if (rt->sleepers.load(memory_order_relaxed) != 0) wake_parked(rt, true);
}

// --- The keep watcher (core/sleep/README.md, "The spinning worker") ---------
// A push by the worker that a keeping spinner stole from wakes nobody while
// the keep lasts. If the stolen thread then runs on (it busy-waits for that
// very work, say) and the victim's thread too, nothing else would ever look
// at that push: so while a role is kept, one parked worker, the watcher,
// sleeps at most tun::ws_keep_watch_ns at a time and takes the role when the
// keep has run out with work queued.

// Whether the spinner (not w) keeps the role for a thread or a nap.
bool role_kept(runtime* rt, worker* w) {
    worker* s = rt->spinner.load(memory_order_seq_cst);
    return s != nullptr && s != w && s->spin_for.load(memory_order_relaxed) >= 0;
}

// A push that a keep held back: makes sure a worker watches the kept role.
// If one does, nothing to do; else claims the last parked worker as the
// watcher (under park_lock, with the claim) and rouses it. With nobody
// parked, every worker runs or looks, and one that parks will stand watch.
void watch_kept_role(runtime* rt) {
    if (rt->keep_watcher.load(memory_order_relaxed) != nullptr) return;
    worker* target = nullptr;
    {
        lock_guard<spinlock> g(rt->park_lock);
        if (rt->parked.empty()) return;
        target = rt->parked.back();
        worker* none = nullptr;
        if (!rt->keep_watcher.compare_exchange_strong(none, target, memory_order_seq_cst)) return;
        (void)leave_parked_set(rt, target);
    }
    rouse(rt, target);
}

// Step N1 of a park, for the watch: w stands watch (or stays the watcher)
// while a role is kept and nobody else watches; else it gives the watch up.
// True: w is the watcher and sleeps at most tun::ws_keep_watch_ns.
bool stand_watch(runtime* rt, worker* w) {
    worker* cur = rt->keep_watcher.load(memory_order_relaxed);
    if (role_kept(rt, w)) {
        if (cur == w) return true;
        worker* none = nullptr;
        return cur == nullptr && rt->keep_watcher.compare_exchange_strong(none, w, memory_order_seq_cst);
    }
    if (cur == w) rt->keep_watcher.store(nullptr, memory_order_seq_cst);
    return false;
}

// w leaves the watch to run a thread, to spin, or to sleep dormant: if a role
// is still kept after its release (and the fence: the pushes that read w as
// the watcher came before it), the watch passes to a parked worker.
void end_watch(runtime* rt, worker* w) {
    worker* me = w;
    if (rt->keep_watcher.load(memory_order_relaxed) != w ||
        !rt->keep_watcher.compare_exchange_strong(me, nullptr, memory_order_seq_cst))
        return;
    heavy_fence();
    if (role_kept(rt, w)) watch_kept_role(rt);
}

// The watcher's look (step N3): a spinner whose keep for a running thread has
// run out while work is queued in some share (its victim's held-back pushes,
// maybe) loses the role to w, which then looks everywhere. A keep that has
// not run out, or a nap (bounded by tun::ws_nap_max_ns), is left alone.
bool take_expired_role(runtime* rt, worker* w) {
    worker* s = rt->spinner.load(memory_order_seq_cst);
    if (s == nullptr || s == w || s->spin_for.load(memory_order_relaxed) < 0) return false;
    std::int64_t until = s->spin_keep_until.load(memory_order_relaxed);
    if (until == 0 || monotonic_ns() < until) return false;
    if (rt->policy->has_work != nullptr && !rt->policy->has_work(rt->policy_state, w->index)) return false;
    return rt->spinner.compare_exchange_strong(s, w, memory_order_seq_cst);
}

// Every worker asleep: the active ones parked, the dropped ones dormant.
bool all_asleep(runtime* rt) {
    return rt->sleepers.load(memory_order_relaxed) + rt->dormant.load(memory_order_relaxed) == rt->nworkers;
}

std::uint64_t total_switches(runtime* rt) {
    std::uint64_t s = 0;
    for (auto& w : rt->workers) s += w->switches.load(memory_order_relaxed);
    return s;
}

// The last stretch of a timed park: pauses until w is woken or the deadline passes.
void spin_until(worker* w, std::int64_t deadline) {
    while (w->wake_word.load(memory_order_acquire) == 0 && monotonic_ns() < deadline) cpu_relax();
}

// Step 4 of a park: futex-waits on w's wake word until a waker sets it (or the
// earliest timer's deadline passes). The last worker to go to sleep with no
// timer armed may be looking at a deadlock: it sleeps for the grace period
// instead, then asks the detector (deadlock.cpp); while it finds that a kernel
// thread outside weft could still wake someone, it looks again after longer
// and longer periods. The keep watcher sleeps until watch_deadline at most
// (INT64_MAX: not the watcher).
void sleep_on_wake_word(runtime* rt, worker* w, std::int64_t watch_deadline) {
    std::int64_t deadline = std::min(rt->timers->next_deadline(), watch_deadline);
    // With a progress hook (a network transport), a message may arrive at any
    // time and only a poll finds it: sleep no longer than the hook's period.
    // Nor is every thread being blocked a deadlock then: they may wait for
    // another node.
    bool polled = progress_hook_set();
    if (polled) deadline = std::min(deadline, monotonic_ns() + tun::progress_park_ns);
    // A thread parked for a system call is woken by the kernel (src/io), not
    // by another thread: no deadlock while one waits.
    bool last = rt->deadlock_detection && !polled && deadline == INT64_MAX && all_asleep(rt) &&
                !kernel_waits_pending();
    std::uint64_t switches_before = last ? total_switches(rt) : 0;
    std::uint64_t outside_gen = last ? outside_generation() : 0;
    std::int64_t quiet_since = last ? monotonic_ns() : 0;
    std::int64_t period = tun::deadlock_grace_ns;
    if (last) deadline = quiet_since + period;

    // A deadline that is a timer's: sleep until a wake-up before it, then
    // spin to it, so the timer's waiter runs on time (sleep/timed_park.hpp).
    std::int64_t const wake_at =
        sleep::sleep_until(deadline, rt->timers->next_deadline(), last, tun::timer_wake_early_ns);

    w->parks.fetch_add(1, memory_order_relaxed);
    for (;;) {
        while (w->wake_word.load(memory_order_acquire) == 0) {
            if (wake_at != deadline && monotonic_ns() >= wake_at) {
                spin_until(w, deadline);
                break;
            }
            futex_wait(&w->wake_word, 0, wake_at);
            if (deadline != INT64_MAX && monotonic_ns() >= deadline) break;
        }
        if (!last || w->wake_word.load(memory_order_acquire) != 0 ||
            !all_asleep(rt) || total_switches(rt) != switches_before ||
            rt->timers->pending() || kernel_waits_pending() || rt->stopping.load(memory_order_acquire) ||
            rt->inject.maybe_nonempty(memory_order_acquire))
            break;
        std::int64_t now = monotonic_ns();
        check_deadlock(rt, now - quiet_since, outside_gen);
        outside_gen = outside_generation();
        period = std::min(period * 2, tun::deadlock_recheck_max_ns);
        // ... and once at the moment the warning is due.
        std::int64_t warn_at = quiet_since + tun::deadlock_warn_ns;
        deadline = now < warn_at ? std::min(now + period, warn_at) : now + period;
    }
}

// Parks w until woken (or, with a timer armed, until its deadline): the
// sleeper's steps of core/sleep/README.md, blocking on w's futex word.
// Returns the ult found on the final look, if any. `was_spinning`: w gave the
// spinning role up just before (step S1), and its last look is everywhere
// (step S3); otherwise it looks at its own share and, if nobody spins, takes
// the role instead of blocking (step N3), and, while the spinner keeps the
// role, may be the keep watcher (above).
ult* park(runtime* rt, worker* w, bool was_spinning) {
    ult* found = nullptr;
    bool watching = false;
    int const cpu = sched_getcpu();
    sleep::fall_asleep(
        [&] {  // step 1: in the parked set, and counted in `sleepers`
            {
                lock_guard<spinlock> g(rt->park_lock);
                w->wake_word.store(0, memory_order_relaxed);
                w->parked = true;
                w->park_cpu = cpu;
                rt->parked.push_back(w);
                rt->sleepers.fetch_add(1, memory_order_seq_cst);
            }
            if (!was_spinning && has_roles(rt)) watching = stand_watch(rt, w);
        },
        // Step 2: pairs with the light fence in notify_work (store-buffering:
        // with a full fence on both sides, one of us must see the other's write).
        [] { heavy_fence(); },
        [&] {  // step 3: look once more after announcing ourselves
            found = pick(w, true, /*steal=*/was_spinning || !has_roles(rt));
            return found != nullptr || rt->stopping.load(memory_order_acquire) ||
                   (!was_spinning && (try_spin(rt, w) || (watching && take_expired_role(rt, w))));
        },
        [&] {  // step 4 (the keep watcher: for one watch period at most)
            sleep_on_wake_word(rt, w, watching ? monotonic_ns() + tun::ws_keep_watch_ns : INT64_MAX);
        },
        [&] { unpark_self(rt, w); });  // step 5: leave the set if no waker took us out
    return found;
}

// A dropped worker's sleep (core/active.hpp): the same steps, but in no wake
// list (notify_work never picks it), counted in `dormant`, with no timer to
// serve (the active workers fire timers), until set_active_workers takes it
// back or a pinned ult arrives in its inbox (make_ready: wake_worker). Before
// it sleeps it hands over: whatever it left in the policy (its ws deque) is
// announced to the active workers. Returns the pinned ult found on the final
// look, if any.
ult* go_dormant(runtime* rt, worker* w) {
    notify_work(nullptr);
    ult* found = nullptr;
    sleep::fall_asleep(
        [&] {
            lock_guard<spinlock> g(rt->park_lock);
            w->wake_word.store(0, memory_order_relaxed);
            w->parked = true;
            w->dormant = true;
            rt->dormant.fetch_add(1, memory_order_seq_cst);
        },
        [] { heavy_fence(); },
        [&] {
            found = w->inbox.pop();
            return found != nullptr || !w->dropped.load(memory_order_acquire) ||
                   rt->stopping.load(memory_order_acquire);
        },
        [&] {
            w->parks.fetch_add(1, memory_order_relaxed);
            while (w->wake_word.load(memory_order_acquire) == 0) futex_wait(&w->wake_word, 0, INT64_MAX);
        },
        [&] { unpark_self(rt, w); });
    return found;
}

// A nap the policy asked for (policy.hpp, idle_nap_ns): the sleeper's steps
// with a deadline, in no wake list, so notify_work does not end it (the work
// the policy naps away from is pushed again and again). Its inbox (a pinned
// ult: wake_worker) and the runtime's stop end it early; an armed timer's
// deadline ends it no later than that. Returns the pinned ult found on the
// final look, if any.
ult* nap(runtime* rt, worker* w, std::int64_t ns) {
    std::int64_t deadline = std::min(monotonic_ns() + ns, rt->timers->next_deadline());
    ult* found = nullptr;
    sleep::fall_asleep(
        [&] {
            lock_guard<spinlock> g(rt->park_lock);
            w->wake_word.store(0, memory_order_relaxed);
            w->parked = true;
            w->napping = true;
        },
        [] { heavy_fence(); },
        [&] {
            found = w->inbox.pop();
            return found != nullptr || rt->stopping.load(memory_order_acquire) ||
                   w->dropped.load(memory_order_acquire);
        },
        [&] {
            while (w->wake_word.load(memory_order_acquire) == 0 && monotonic_ns() < deadline)
                futex_wait(&w->wake_word, 0, deadline);
        },
        [&] { unpark_self(rt, w); });
    return found;
}

}  // namespace

bool worker_may_have_work(worker* w) { return w->dropped.load(memory_order_relaxed) || may_have_work(g_rt, w); }

void wake_worker(worker* target) {
    runtime* rt = g_rt;
    {
        lock_guard<spinlock> g(rt->park_lock);
        if (!leave_parked_set(rt, target)) return;  // running or spinning: it will look at its inbox
    }
    rouse(rt, target);
}

// The waker's steps (core/sleep/README.md): light fence, then `sleepers`,
// then `spinner`. A spinning worker that is looking will find the work. One
// that runs a thread it kept the role for (spinner_keep_ns), or naps after
// it, keeps the role against pushes by the worker that thread came from
// (while it runs the thread: until its keep has run out); a push by that
// thread itself (self == s) or by any other worker takes the role back.
void notify_work(worker* self) {
    runtime* rt = g_rt;
    light_fence();
    if (rt->sleepers.load(memory_order_relaxed) == 0) return;
    worker* s = rt->spinner.load(memory_order_relaxed);
    if (s != nullptr) {
        if (s != self) {
            int from = s->spin_for.load(memory_order_relaxed);
            if (from < 0) return;  // looking
            if (self != nullptr && self->index == from) {
                std::int64_t until = s->spin_keep_until.load(memory_order_relaxed);
                if (until == 0) return;  // a nap: it ends within tun::ws_nap_max_ns, and s looks
                if (monotonic_ns() < until) {
                    watch_kept_role(rt);  // held back: someone must look once the keep has run out
                    return;
                }
            }
        }
        if (!rt->spinner.compare_exchange_strong(s, nullptr, memory_order_seq_cst)) return;
    }
    wake_parked(rt, has_roles(rt));
}

void wake_one_parked() {
    runtime* rt = g_rt;
    light_fence();
    if (rt->sleepers.load(memory_order_relaxed) == 0) return;
    wake_parked(rt, false);
}

// The body of every worker's idle ult. Runs until the runtime stops.
void worker_idle_loop(worker* w) {
    runtime* rt = g_rt;
    for (;;) {
        std::int64_t idle_start = monotonic_ns();
        w->idle_now.store(true, memory_order_relaxed);
        // Back from a thread it kept the spinning role for, if it did.
        if (w->spin_keep_until.load(memory_order_relaxed) != 0) w->spin_keep_until.store(0, memory_order_relaxed);
        ult* next = nullptr;
        // A policy whose look is a round of steals (ws) asks for Arora, Blumofe & Plaxton's
        // idle loop: a sched_yield() after each failed look instead of a pause
        // (policy.hpp, idle_yield_rounds). WEFT_WS_YIELD=off takes that yield
        // away, for the experiment that shows what it is for (weft-bench oversub).
        auto stages = sleep::idle_worker_stages(rt->cfg.ws_yield ? rt->policy->idle_yield_rounds : 0);
        std::uint32_t polls = 0;  // looks made polling a progress hook (below)
        bool polling = false;     // the hook was active lately: poll, do not go through the stages
        while (next == nullptr) {
            if (rt->stopping.load(memory_order_acquire)) {
                w->idle_ns.fetch_add(static_cast<std::uint64_t>(monotonic_ns() - idle_start), memory_order_relaxed);
                return;
            }
            if (w->dropped.load(memory_order_relaxed)) {
                end_watch(rt, w);
                stop_spinning(rt, w);
                if ((next = w->inbox.pop()) == nullptr) next = go_dormant(rt, w);
                stages.reset();
                continue;
            }
            // A nap is the spinning worker's: the others steal nothing to nap from.
            if (rt->policy->idle_nap_ns != nullptr) {
                std::int64_t ns = rt->policy->idle_nap_ns(rt->policy_state, w->index);
                if (ns > 0 && (is_spinner(rt, w) || !has_roles(rt))) {
                    if ((next = nap(rt, w, ns)) != nullptr) break;
                    continue;
                }
            }
            // core/progress.hpp: a network's completions first. Whether the
            // hook was active lately costs a clock read: once every 64 looks.
            if (progress_when_idle()) polling = true;
            else if (progress_hook_set() && polls % 64 == 0) polling = progress_recently_active();
            // Only the spinning worker looks in the other workers' shares; the
            // others look at their own, then park (core/sleep/README.md, "The
            // spinning worker"). Polling a progress hook, every idle worker
            // looks. Looking, it keeps the role against every push.
            if (w->spin_for.load(memory_order_relaxed) >= 0) w->spin_for.store(-1, memory_order_relaxed);
            const bool spinning = is_spinner(rt, w) || try_spin(rt, w) || !has_roles(rt);
            if (spinning) end_watch(rt, w);  // a watcher that took the role (take_expired_role) watches no more
            if (spinning || polling) {
                if (may_have_work(rt, w) && (next = pick(w, true, /*steal=*/true)) != nullptr) break;
            } else if ((next = pick(w)) != nullptr) {
                break;
            }
            ++polls;
            if (polling) {
                // A conversation in progress: poll again after a pause, as an
                // MPI rank polls in MPI_Recv, giving the CPU away only every
                // tun::progress_yield_every looks (a sched_yield per look, the
                // ws policy's relax, let a loaded machine's other processes in
                // before every reply: 60% of the ping-pong's time in perf).
                if (polls % tun::progress_yield_every == 0) sched_yield();
                else cpu_relax();
                continue;
            }
            if (!spinning) {
                if ((next = park(rt, w, false)) == nullptr) stages.reset();  // maybe the spinner now
                continue;
            }
            switch (stages.next()) {
            case sleep::stage::spin:
                break;
            case sleep::stage::yield:
                sched_yield();
                break;
            case sleep::stage::block:
                if (has_roles(rt)) stop_spinning(rt, w);
                next = park(rt, w, has_roles(rt));
                if (next != nullptr && has_roles(rt)) hand_on(rt);
                // A park that a progress hook's period ended, with nothing
                // found, parks again at once: spinning through the stages
                // every period would cost an idle node a third of a CPU
                // (docs/design/mpi.md, "Progress").
                if (next != nullptr || !progress_hook_set() || progress_recently_active() ||
                    may_have_work(rt, w))
                    stages.reset();
                break;
            }
        }
        end_watch(rt, w);  // runs a thread: watches nothing meanwhile
        if (is_spinner(rt, w)) {
            // Found work as the spinning worker: keep the role while it runs
            // if the policy asks, else hand it on.
            int from = -1;
            std::int64_t keep = rt->policy->spinner_keep_ns == nullptr
                                    ? 0
                                    : rt->policy->spinner_keep_ns(rt->policy_state, w->index, next, &from);
            if (keep > 0 && from >= 0) {
                w->spin_keep_until.store(monotonic_ns() + keep, memory_order_relaxed);
                w->spin_for.store(from, memory_order_relaxed);
            } else {
                stop_spinning(rt, w);
                hand_on(rt);
            }
        }
        w->idle_now.store(false, memory_order_relaxed);
        w->idle_ns.fetch_add(static_cast<std::uint64_t>(monotonic_ns() - idle_start), memory_order_relaxed);
        switch_to(w, w->idle, next);
    }
}

}  // namespace weft::detail
