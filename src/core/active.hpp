// weft::detail — how many workers run threads: dropping workers and taking
// them back (process control: Tucker & Gupta, as Arora, Blumofe & Plaxton and
// Severance & Enbody use it). Who decides is src/adapt/ (the controller); this
// is the mechanism, the same for every scheduling policy and for filaments.
//
// Workers 0..active-1 are active; the others are dropped. Worker 0 is never
// dropped (it is the kernel thread main began on). A dropped worker
//   - finishes the ult it runs up to that ult's next scheduling point: a
//     child it spawns goes to the policy (ready(.., spawned)) and the parent
//     goes on; a yield hands the ult to the policy; a block or an exit leaves
//     the worker with nothing to run;
//   - takes nothing from the policy, the inject queue or the timers; what the
//     policy holds for it (a ws deque) is taken by the active workers;
//   - still runs the pinned ults of its inbox (a filament region's server, a
//     thread that must end on it): nothing waits on a sleeping worker;
//   - then sleeps "dormant" (core/worker.cpp, go_dormant), out of the wake
//     list of notify_work, until it is taken back or a pinned ult arrives.
// A filament region reads the dropped flags at each sweep (src/fil/sweep.cpp).
#pragma once

#include <cstdint>
#include <vector>

namespace weft::detail {

struct runtime;

// Makes workers 0..n-1 active and the others dropped; n is clamped to
// 1..nworkers. Returns the count set. Serialized (a mutex): any kernel thread.
int set_active_workers(runtime* rt, int n);

// The active count over the run, for the trace: one entry per change.
struct active_change {
    std::uint64_t at_ticks;  // ticks() (core/profile.hpp), as the trace's slices
    int active;
};
std::vector<active_change> active_history(runtime* rt);

}  // namespace weft::detail
