// weft-bench — waiting for a peer's idle threads to stop spinning before the
// next timed run (filaments, matmul: their rounds interleave the peers with
// weft and the serial program).
#pragma once

namespace weft::bench {

// Waits (at most 0.2 s) until the process's idle threads have stopped
// spinning: until, over 2 ms in which this thread sleeps, the process uses
// less than a tenth of a CPU. An OpenMP team spins after its region (libgomp:
// up to GOMP_SPINCOUNT iterations) and oneTBB's workers before they sleep;
// the version timed next must not share the CPUs with them.
void settle();

}  // namespace weft::bench
