// weft::detail::fil — filament statistics (weft_fil_stats_get).
//
// The counters live with the core's per-worker statistics (worker::fil,
// core/worker.hpp), one per field of weft_fil_stats_t. A participant counts
// into plain fields of its own (no shared writes on the paths that count) and
// adds them to its worker's counters when it leaves the region or sleeps in
// it (relaxed adds: a reader may see one worker's figures a region late, never
// torn ones). Work counted for no worker (an external caller's region,
// filaments created by an external kernel thread) counts on worker 0, which
// serves an external caller's root. The counters belong to the runtime: they
// start at zero with weft_init, and both weft_stats_reset and
// weft_fil_stats_reset clear them.
#pragma once

#include <cstdint>

#include "base/primitives.hpp"

namespace weft::detail::fil {

// A participant's own counts, in weft_fil_stats_t's order.
struct counters {
    std::uint64_t regions = 0;
    std::uint64_t created = 0;
    std::uint64_t run = 0;
    std::uint64_t forks = 0;
    std::uint64_t pruned = 0;
    std::uint64_t steals = 0;
    std::uint64_t tree_sends = 0;
    std::uint64_t pools_general = 0;
    std::uint64_t pools_dense_1d = 0;
    std::uint64_t pools_dense_2d = 0;
    std::uint64_t pools_helped = 0;
    std::uint64_t sweeps = 0;
    std::uint64_t sleeps = 0;
};

// Adds c to the counters of worker w (w < 0: worker 0's). Dropped when no
// runtime runs.
void stats_flush(int w, const counters& c);
// Filaments created outside any region (weft_fil_create, root forks), counted
// on the calling worker (an external thread: worker 0).
void stats_add_created(std::uint64_t n);

}  // namespace weft::detail::fil
