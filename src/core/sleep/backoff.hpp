// weft::detail::sleep — the stages of every wait in weft: spin, then yield, then
// block; and the sleeper's half of the sleep/wake protocol (fall_asleep).
//
// The design note is README.md beside this file: the states, the counters, the
// numbered steps with their fences, why each stage exists, the proof sketch that
// no wake-up is lost, and which waiters use this and how each blocks.
//
// This header needs only the standard library and base/primitives.hpp, so that
// the coarse-grain baselines of apps/, which run on std::threads and know nothing
// of workers, wait with it too (apps/coarse.hpp). Each waiter's constants are
// put together in stages.hpp, from core/tunables.hpp.
#pragma once

#include <cstdint>
#include <thread>

#include "base/primitives.hpp"
#include "core/clock.hpp"

namespace weft::detail::sleep {

// What a waiter does after a look that found nothing (backoff::next).
enum class stage : std::uint8_t {
    spin,   // look again: backoff::next has relaxed once
    yield,  // give the CPU away once, in the waiter's own way (README.md, "Stages"), then look again
    block,  // run fall_asleep: announce, fence, look once more, block
};

// What one spin does between two looks.
enum class relax : std::uint8_t {
    pause,     // cpu_relax(): keep the CPU, tell the core we spin
    os_yield,  // sched_yield(): let another runnable kernel thread have the CPU between
               // looks (Arora, Blumofe & Plaxton's yield between failed steal attempts)
};

// A yield budget: a number of yields. State: the yields made so far.
struct yield_count {
    int n;         // yields before blocking; >= 0
    int used = 0;

    bool take() noexcept { return used < n ? (++used, true) : false; }
    void reset() noexcept { used = 0; }
};

// A yield budget: a time spent yielding, from the first yield of the stage.
// State: when the stage began (0: not yet).
struct yield_for {
    std::int64_t ns;  // nanoseconds of yielding before blocking; >= 0
    std::int64_t since = 0;

    bool take() noexcept {
        std::int64_t t = monotonic_ns();
        if (since == 0) since = t;
        return t - since < ns;
    }
    void reset() noexcept { since = 0; }
};

// The stages of one wait: `spins` rounds of spinning (each relaxes as `r` says),
// then yield rounds while the budget lasts, then block. The waiter looks for what
// it waits for before every call to next(), and calls reset() when it has found
// something (work to run, or a wake-up), so that its next wait starts spinning
// again. Owned by one waiter: no atomics, no sharing.
//
//     sleep::backoff b(spins, sleep::relax::pause, sleep::yield_count{4});
//     for (;;) {
//         if (look()) { b.reset(); ...; continue; }
//         switch (b.next()) {
//         case sleep::stage::spin: break;
//         case sleep::stage::yield: my_yield(); break;
//         case sleep::stage::block: sleep::fall_asleep(...); b.reset(); break;
//         }
//     }
template <class Budget> class backoff {
public:
    constexpr backoff(int spins, relax r, Budget budget) noexcept : spin_limit_(spins), relax_(r), budget_(budget) {}

    // The stage of this round. For stage::spin it has already relaxed.
    stage next() noexcept {
        if (spun_ < spin_limit_) {
            ++spun_;
            if (relax_ == relax::os_yield) std::this_thread::yield();
            else cpu_relax();
            return stage::spin;
        }
        return budget_.take() ? stage::yield : stage::block;
    }
    void reset() noexcept {
        spun_ = 0;
        budget_.reset();
    }
    // Spin rounds made since the last reset (a waiter may do more every k-th).
    int spins() const noexcept { return spun_; }

private:
    int spun_ = 0;
    const int spin_limit_;
    const relax relax_;
    Budget budget_;
};

// The sleeper's steps 1-5 (README.md, "The protocol"):
//   1. announce(): make itself visible to wakers (a seq_cst read-modify-write
//      of a sleepers count, and a flag or a place in a set that a waker claims);
//   2. fence(): the sleeper's full fence (heavy_fence(), the expensive side of
//      base/asymmetric_fence.hpp, against the wakers' light_fence());
//   3. recheck(): look once more for what it waits for; true if found;
//   4. if not found, block(): return only once a waker has claimed it (or at a
//      deadline the waiter set itself);
//   5. retract(): take the announcement back if no waker claimed it, and
//      restore what the waiter changed to block.
// Returns true if it blocked. Either way the caller looks again afterwards: a
// block may end early (a wake-up left over from a cancelled sleep), and a waker
// may claim a sleeper that did not block.
//
// A blocking kind that announces and re-checks inside its own wait (std::atomic::
// wait, whose library counts its waiters and compares the value under the futex)
// passes no-ops for announce, fence and retract: the steps are then the
// library's (README.md, "Waiters").
template <class Announce, class Fence, class Recheck, class Block, class Retract>
inline bool fall_asleep(Announce&& announce, Fence&& fence, Recheck&& recheck, Block&& block, Retract&& retract) {
    announce();
    fence();
    const bool blocked = !recheck();
    if (blocked) block();
    retract();
    return blocked;
}

}  // namespace weft::detail::sleep
