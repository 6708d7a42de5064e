// weft::detail — the fork gate: fork() copies the process while no kernel
// thread holds one of the runtime's spinlocks.
//
// fork() copies only the calling kernel thread. Every spinlock another kernel
// thread held at that instant stays held in the child, where nothing releases
// it: the child's first use of the guarded object (the pthread_atfork child
// handler unlocking the mutex its prepare handler locked, while other threads
// were queueing on it) spins forever. The thread preparing the fork closes the
// gate, so that no other thread takes a first spinlock, then waits until each
// census (base/primitives.hpp) counts none: the critical sections in flight
// finish, none starts, and the copy is whole. Critical sections are short and
// never block, so the wait is short; a thread that meets the closed gate waits
// for it to open (fork_parent, fork_child) holding nothing.
#pragma once

#include "base/primitives.hpp"

namespace weft::detail {

// Closes the gate for the calling thread, which must hold no spinlock.
void close_fork_gate();
// Returns once the census (a worker's other than the caller's) counts none.
void wait_until_released(const spin_census& census);
// Returns once no kernel thread outside the workers holds a spinlock.
void wait_until_outside_released();
// Opens the gate (in the parent after the copy; in the child, where it was
// copied closed).
void open_fork_gate();

}  // namespace weft::detail
