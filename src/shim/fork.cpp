// fork() from a threaded program under the shim: weft's runtime in the child.
//
// glibc's fork runs the pthread_atfork handlers (prepare in reverse order of
// registration, parent and child in order), copies the process with only the
// calling kernel thread, and resets its own state in the child. The shim adds
// the runtime's part as one more set of handlers, registered before any of
// the program's (a constructor that runs before the program's and before
// start.cpp's), so that
//   - its prepare runs last: the program's prepare handlers may block as weft
//     threads (a weft mutex), which needs the runtime whole; then the other
//     kernel threads finish their spinlock critical sections and start no
//     other (core/runtime.hpp, fork_quiesce), the runtime's process-wide locks
//     are taken, and nothing switches until the copy;
//   - its child handler runs first: the child's runtime is a fresh one of one
//     worker, on the forking kernel thread, whose main weft thread is the
//     thread that forked (core/runtime.hpp, fork_child), before the program's
//     child handlers create threads or take mutexes.
// The program's fork() is glibc's own, so its return value and errno are.
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "core/dispatch.hpp"
#include "core/runtime.hpp"
#include "shim/kernel_threads.hpp"
#include "shim/shim.hpp"
#include "shim/signals.hpp"

namespace weft::shim {
namespace {

void prepare() {
    if (!ready()) return;
    detail::fork_quiesce();  // before any lock: no other kernel thread holds a spinlock from here on
    signals_fork_prepare();  // then the signal thread's lock, then the runtime's
    detail::fork_prepare();
}

void parent() {
    if (!ready()) return;
    detail::fork_parent();
    signals_fork_parent();
}

void child() {
    if (!ready()) return;
    // The child's main weft thread keeps the stack it runs on: a weft
    // thread's own, or main's, the process's stack, which glibc still
    // describes by the first kernel thread's pthread_t (copied into the
    // child). A kernel thread outside weft becomes main on its own stack.
    if (detail::current_worker() == nullptr) g_initial_kernel_thread = real::pthread_self();
    forget_all_kernel_threads();  // the parent's other kernel threads do not exist here
    if (int rc = detail::fork_child(); rc != 0) {
        // The child cannot run weft threads: say so and end it, rather than
        // let it hang at its first pthread call.
        std::fprintf(
            stderr, "weft-pthread: the child of fork() could not start weft's runtime (%s); it exits with status 127\n",
            std::strerror(rc));
        _exit(127);
    }
    signals_fork_child();
}

__attribute__((constructor(103))) void register_fork_handlers() { pthread_atfork(&prepare, &parent, &child); }

}  // namespace
}  // namespace weft::shim
