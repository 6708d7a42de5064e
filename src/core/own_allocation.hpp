// weft::detail — the runtime's own allocations, kept out of the heap figure.
//
// The heap figure (weft_stats_t::heap_bytes, heap_bytes_peak) is the
// program's heap: what Narlikar & Blelloch's Figure 9 compares between
// schedulers. Under libweft-pthread every malloc is counted, so the
// structures weft itself allocates through malloc as threads are created
// would count as the program's: a TLS block per thread (glibc's static TLS,
// TCB and DTV, about 4.7 KB; src/shim/tls_block.cpp), which glibc keeps in the
// thread's stack mapping, not in the heap, and the handle table's chunks
// (98,304 bytes for the first 4,096 threads; src/core/handle.cpp). These grow
// with the threads live at once, so a program with more threads alive would
// show more heap for allocations it never made. Code that allocates (and
// frees) such a structure does it inside an own_allocation scope, and the
// heap accounting (heap_note_alloc / heap_note_free) skips what the scope's
// thread allocates or frees meanwhile. A scope must not span a thread
// switch; it is per kernel thread, or per weft thread under the shim (which
// gives each its own TLS block).
#pragma once

namespace weft::detail {

// The running thread's open own_allocation scopes. Initial-exec: read on
// every malloc and free under the shim, where a __tls_get_addr could allocate.
[[gnu::tls_model("initial-exec")]] inline thread_local int t_own_allocations = 0;

class own_allocation {
public:
    own_allocation() { ++t_own_allocations; }
    ~own_allocation() { --t_own_allocations; }
    own_allocation(const own_allocation&) = delete;
    own_allocation& operator=(const own_allocation&) = delete;
};

inline bool in_own_allocation() { return t_own_allocations != 0; }

}  // namespace weft::detail
