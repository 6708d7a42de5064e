// weft::detail::fil — an idle participant's wait, sleep and wake-up: the
// core's sleep protocol (core/sleep/README.md), blocking on the participant's
// semaphore, which blocks its server ult, not the worker. The sleeper's steps
// are wait_until's (below) through sleep::fall_asleep; the wakers are wake,
// wake_all and wake_one (sleepers.cpp).
#pragma once

#include <sched.h>

#include "base/asymmetric_fence.hpp"
#include "core/sleep/stages.hpp"
#include "fil/fork_join.hpp"
#include "fil/region.hpp"

namespace weft::detail::fil {

// Waits, as an idle participant, until done() holds: runs fork/join filaments
// found meanwhile (own list, then, if receiver-initiated, other lists), with
// the stages of core/sleep/stages.hpp (filament_stages: spin, then yield for
// tun::fil_wait_yield_ns), then sleeps. `done` must become true only through a
// change that is followed by a wake of this participant (wake / wake_all). Before sleeping it
// calls reclaim(), which may make progress itself (take back a job it waits
// for) and then returns true. counted: p is already counted in `hungry` (a
// server that has just arrived) and stays counted when this returns.
template <class Done, class Reclaim>
void wait_until(part* p, Done done, Reclaim reclaim, bool counted);
template <class Done>
void wait_until(part* p, Done done, bool counted = false) {
    wait_until(
        p, done, [] { return false; }, counted);
}

// Wakes q if it sleeps (or is about to). Call after publishing what q waits for.
void wake(part* q);
// Wakes every sleeping participant and an external caller (the region ended).
void wake_all(region* r);
// Wakes one sleeping participant other than `from` on an available worker, if
// any (new work).
void wake_one(region* r, part* from);

// The sleeper's steps of core/sleep/README.md for a participant, blocking on
// its semaphore.
void sleep_announce(part* p);  // step 1: sleeping = 1, sleepers += 1
void sleep_block(part* p);     // step 4: settle, weft_sem_wait
void sleep_retract(part* p);   // step 5: sleeping = 0, sleepers -= 1

template <class Done, class Reclaim>
void wait_until(part* p, Done done, Reclaim reclaim, bool counted) {
    region* r = p->r;
    if (!counted) add_hunger(r, 1);
    auto stages = sleep::filament_stages();
    for (;;) {
        if (done()) break;
        if (weft_fil_job_* j = find_job(p)) {
            add_hunger(r, -1);
            run_job(p, j);
            add_hunger(r, 1);
            stages.reset();
            continue;
        }
        // An unavailable worker sleeps without spinning first, and is not
        // counted hungry while it sleeps (available.hpp).
        const bool unavailable = !available(p->hot.index);
        switch (unavailable ? sleep::stage::block : stages.next()) {
        case sleep::stage::spin:
            if (stages.spins() % tun::fil_deepen_every == 0 && r->receiver_initiated) deepen_others(p);
            continue;
        case sleep::stage::yield:
            weft_fil_self_ = &weft_fil_outside_;  // another weft thread may run here meanwhile
            (void)weft_thread_yield();
            weft_fil_self_ = &p->hot;
            sched_yield();  // and other kernel threads (more workers than CPUs)
            continue;
        case sleep::stage::block: break;
        }
        if (reclaim()) {
            stages.reset();
            continue;
        }
        // About to sleep: nobody deepens the others' limits any more, and a
        // worker deep in a big pruned subtree would give nothing away until it
        // climbed back to its limit (quadrature: milliseconds per steal).
        if (r->receiver_initiated) open_others(p);
        if (unavailable) add_hunger(r, -1);
        sleep::fall_asleep([p] { sleep_announce(p); }, [] { heavy_fence(); },
                           [&done, p] { return done() || work_visible(p); }, [p] { sleep_block(p); },
                           [p] { sleep_retract(p); });
        if (unavailable) add_hunger(r, 1);
        stages.reset();
    }
    if (!counted) add_hunger(r, -1);
}

}  // namespace weft::detail::fil
