// weft::detail::fil — running sequences of pool sets (iterative filaments).
#pragma once

#include <cstdint>

#include "fil/pool.hpp"
#include "fil/region.hpp"

namespace weft::detail::fil {

// The iterative kind of region (region_ops): runs the pool sets of r->it,
// sweep after sweep, until an after function says WEFT_FIL_DONE.
extern const region_ops iterative_region;

// Runs a sequence on the calling thread alone (a region started inside a
// filament; p is that filament's participant). Exceptions propagate.
void run_sets_serial(const weft_fil_poolset_t* sets, int n, part* p);

// Runs the sequence as a region. ECANCELED (exception in *exc if exc) etc.
int run_sets(const weft_fil_poolset_t* sets, int n, void* exc);

}  // namespace weft::detail::fil
