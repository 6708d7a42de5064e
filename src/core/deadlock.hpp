// weft::detail — the deadlock detector's verdict (src/core/deadlock.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace weft::detail {

struct runtime;

// Called by the last worker to park, each time every weft thread has been
// blocked, with no timer pending and no worker running anything, for one more
// check period; quiet_ns is how long that has lasted, outside_gen the
// registry generation of outside waits (core/outside.hpp) at the start of the
// period. Reports and aborts when nothing can wake any blocked thread any
// more; otherwise returns, after printing one warning per process once
// quiet_ns reaches tun::deadlock_warn_ns.
void check_deadlock(runtime* rt, std::int64_t quiet_ns, std::uint64_t outside_gen);

// Names the object of a wait for the report, for a layer above the core whose
// objects a user knows by another name than their address (message passing:
// a port by its ID): writes the text into out (cap bytes) and returns true, or
// false to leave it to the address. At most one; null clears it. The report
// calls it while every weft thread is blocked.
using wait_object_namer = bool (*)(const char* what, const void* object, char* out, std::size_t cap);
void set_wait_object_namer(wait_object_namer f);

}  // namespace weft::detail
