// weft::detail::fil — fork/join jobs: running one, finding one, taking one
// back, and the pruning limits of the other participants (fork_join.cpp).
#pragma once

#include "fil/region.hpp"

namespace weft::detail::fil {

// The fork/join kind of region (region_ops): runs r->root_fn.
extern const region_ops fork_join_region;

// Runs one fork/join job taken from a list (stolen or sent) and completes it.
void run_job(part* p, weft_fil_job_* j);
// Looks for a job: own list first, then (receiver-initiated, and p's worker
// available) the longest list, from its front.
weft_fil_job_* find_job(part* p);
// Whether find_job could find something (the sleeper's last look).
bool work_visible(part* p);
// Removes, from any list, a job not yet started whose latch is l (a waiting
// parent taking back its own child, e.g. one sent to a worker whose server has
// not started). Null if there is none.
weft_fil_job_* reclaim_child(part* p, weft_fil_latch_* l);

// Lets the other participants fork from deeper frames (a hungry one waits).
void deepen_others(part* p);
// Lets the other participants fork from any frame (a hungry one goes to sleep).
void open_others(part* p);

}  // namespace weft::detail::fil
