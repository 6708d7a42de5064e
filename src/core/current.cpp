// weft::detail — the worker the calling kernel thread is (current.hpp).
#include "core/current.hpp"

#include <cxxabi.h>

#include "arch/thread_pointer.hpp"
#include "base/primitives.hpp"
#include "core/worker.hpp"

namespace weft::detail {

namespace {
// Initial-exec: in libweft-pthread (a shared library, loaded at start by
// LD_PRELOAD or as a dependency) every access would otherwise call
// __tls_get_addr, about eight times per pthread_create + join; in a program
// linked with libweft the linker makes it local-exec either way.
[[gnu::tls_model("initial-exec")]] thread_local worker* tls_worker = nullptr;
}  // namespace

worker* current_worker() { return tls_worker; }

ult* current_ult() {
    worker* w = tls_worker;
    return w != nullptr ? w->current : nullptr;
}

void set_current_worker(worker* w) {
    tls_worker = w;
    t_spin_census = w != nullptr ? &w->census : nullptr;
    if (w != nullptr) {
        w->eh_globals = abi::__cxa_get_globals();
        w->kernel_tp = arch::thread_pointer();
    }
}

// Out of line on purpose: the compiler may compute a thread_local's address
// once per function, and this must reach the block made current just before.
[[gnu::noinline]] void note_current_worker_in_block(worker* w) {
    tls_worker = w;
    t_spin_census = &w->census;
    asm volatile("" ::: "memory");
}

}  // namespace weft::detail
