// weft::detail::fil — running sequences of pool sets (iterative filaments).
#pragma once

#include <cstdint>

#include "fil/pool.hpp"
#include "fil/region.hpp"

namespace weft::detail::fil {

// Before the servers start: resets claims, picks the first sweep (running the
// after functions of leading empty sets), or finishes at once.
void iter_prepare(region* r);
// A participant's part in an iterative region, until it ends.
void iter_participate(part* p);
// The caller, after the region has ended: waits until no participant reads
// the sets or pools any more.
void iter_wait_quiescent(region* r);

// Runs a sequence on the calling thread alone (a region started inside a
// filament; p is that filament's participant). Exceptions propagate.
void run_sets_serial(const weft_fil_poolset_t* sets, int n, part* p);

// Runs the sequence as a region. ECANCELED (exception in *exc if exc) etc.
int run_sets(const weft_fil_poolset_t* sets, int n, void* exc);

}  // namespace weft::detail::fil
