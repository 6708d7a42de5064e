// weft::detail — ults with thread-local storage of their own (thread_pointer.hpp).
#include "core/thread_pointer.hpp"

#include <cxxabi.h>

#include "arch/thread_pointer.hpp"
#include "core/current.hpp"
#include "core/ult.hpp"
#include "core/worker.hpp"

namespace weft::detail {

void (*g_own_tp_exit)(ult*) = nullptr;

namespace {
// Out of line on purpose: the compiler may compute a thread_local's address
// once per function, and this must reach the block made current just before.
[[gnu::noinline]] void* eh_globals_in_current_block() { return abi::__cxa_get_globals(); }
}  // namespace

void switch_thread_pointer(worker* w, ult* to) {
    arch::set_thread_pointer(to->tp != nullptr ? to->tp : w->kernel_tp);
    note_current_worker_in_block(w);
}

void set_own_thread_pointer(void* tp) {
    worker* w = current_worker();
    w->current->tp = tp;
    arch::set_thread_pointer(tp != nullptr ? tp : w->kernel_tp);
    note_current_worker_in_block(w);
}

void set_worker_thread_pointer(worker* w, void* tp) {
    w->kernel_tp = tp;
    arch::set_thread_pointer(tp);
    note_current_worker_in_block(w);
    // C++ exception state of the worker's own flows is now in this block.
    w->eh_globals = eh_globals_in_current_block();
    arch::set_thread_pointer(w->current->tp);
}

}  // namespace weft::detail
