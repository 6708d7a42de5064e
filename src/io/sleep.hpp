// weft::detail::io — a sleep a signal can end (nanosleep, clock_nanosleep,
// usleep and sleep under the shim; docs/design/syscalls.md, "Signals").
#pragma once

#include <cstdint>

namespace weft::detail::io {

// Parks the calling weft thread until the absolute CLOCK_MONOTONIC deadline
// (ns), or until a signal interrupts it (core/interrupt.hpp) and a handler
// runs (take_signals: sleeps are never restarted). Returns 0, or EINTR. A
// cancellation that ends the sleep returns 0 (the caller's cancellation point
// acts on it).
int sleep_until(std::int64_t deadline_ns);

}  // namespace weft::detail::io
