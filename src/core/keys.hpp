// weft::detail — thread-specific data (weft_key_*).
#pragma once

namespace weft::detail {
struct ult;
// Runs the destructors of t's non-null values, up to WEFT_DESTRUCTOR_ITERATIONS
// rounds (a destructor may set values again), as Pthreads does.
void run_key_destructors(ult* t);
// Frees t's value table.
void free_key_values(ult* t);
// Takes (true) or releases (false) the lock of key creation and deletion: held
// across fork() so that the child never starts with it taken by a thread that
// does not exist there (src/shim/fork.cpp).
void keys_hold_for_fork(bool take);
}  // namespace weft::detail
