// weft::detail::fil — filament statistics (weft_fil_stats_get).
//
// A participant counts into plain fields of its own (no shared writes on the
// paths that count) and adds them to its worker's slot when it leaves the
// region. The slots are atomics written with relaxed adds: a reader may see
// one worker's figures a region late, never torn ones.
#pragma once

#include <cstdint>

#include "sync/primitives.hpp"

namespace weft::detail::fil {

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

// Adds c to the slot of worker w (w < 0: the slot of external callers).
void stats_flush(int w, const counters& c);
// Filaments created outside any region (weft_fil_create, root forks).
void stats_add_created(std::uint64_t n);

}  // namespace weft::detail::fil
