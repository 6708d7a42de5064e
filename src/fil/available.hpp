// weft::detail::fil — whether a worker may run filaments.
#pragma once

namespace weft::detail::fil {

// Worker `worker` may run filaments now: it is not dropped (core/active.hpp).
// Every decision of fil/ about dropped workers asks this one query:
//   - no server is launched for an unavailable worker (server.cpp), and a
//     region's caller on one moves to an available worker first (region.cpp);
//   - a participant on an unavailable worker runs what its own list holds and
//     takes nothing from the others (fork_join.cpp: find_job, work_visible),
//     sleeps without spinning first and is not counted hungry while it sleeps
//     (sleepers.hpp: wait_until); wake_one passes it over (sleepers.cpp);
//   - an iterative region takes a snapshot of it for every participant at each
//     sweep (part::away, sweep.cpp: mark_away), so that all participants agree
//     on who sits a sweep out (Severance & Enbody's serial point between two
//     parallel loops).
// Outside a runtime every worker is available.
bool available(int worker);

}  // namespace weft::detail::fil
