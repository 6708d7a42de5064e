// weft::detail — the deadlock report.
//
// The last worker to park, with no timer armed, sleeps for a grace period
// (tunables.hpp) instead of forever. If on waking no worker has switched in the
// meantime, every worker is still parked, and no timer is armed, then no ult is
// running and none is ready: every live ult is blocked in a weft primitive and
// nothing inside the process can wake any of them. We print who waits on what
// and abort rather than hang. (A kernel thread outside weft could still post a
// semaphore; programs that rely on that after a quiet spell set
// WEFT_DEADLOCK=off.)
//
// Finding the ults costs nothing while the program runs: there is no registry
// to update on create and exit. Like Go's allgs, we rely on control blocks
// being recycled with their stacks: the report walks every stack the pool has
// carved and reads the control block at its top, which carries a magic word
// and a pointer to its own stack while the ult is alive.
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/runtime.hpp"

namespace weft::detail {

namespace {

void describe(const ult* u) {
    std::fprintf(stderr, "  thread %" PRIu64 " (%s) waits in %s", u->id, u->name[0] ? u->name : "unnamed",
                 u->wait_kind != nullptr ? u->wait_kind : "(not blocked: running or ready)");
    if (u->wait_object != nullptr) std::fprintf(stderr, " on %p", u->wait_object);
    if (u->wait_kind != nullptr && std::strncmp(u->wait_kind, "weft_mutex", 10) == 0 && u->wait_object != nullptr) {
        const auto* m = static_cast<const weft_mutex_t*>(u->wait_object);
        const auto* owner = static_cast<const ult*>(m->owner_);
        if (owner != nullptr) std::fprintf(stderr, ", held by thread %" PRIu64, owner->id);
    } else if (u->wait_kind != nullptr && std::strcmp(u->wait_kind, "weft_thread_join") == 0) {
        std::fprintf(stderr, " (thread %" PRIu64 ")", static_cast<const ult*>(u->wait_object)->id);
    }
    std::fputc('\n', stderr);
}

}  // namespace

void report_deadlock() {
    // Several workers may reach the verdict at once (each parked last, as far
    // as it could tell): one reports, the others wait for the abort.
    static atomic<bool> reporting{false};
    if (reporting.exchange(true, memory_order_acq_rel)) {
        for (;;) pause();
    }
    runtime* rt = g_rt;
    std::fprintf(stderr,
                 "weft: deadlock: every weft thread is blocked and no timer is pending; %" PRId64
                 " thread(s) wait:\n",
                 live_ults(rt));
    if (rt->main->magic == ult_magic_live) describe(rt->main);
    rt->stacks->for_each_stack(
        [](const arch::stack& s, void*) {
            auto top = reinterpret_cast<std::uintptr_t>(s.hi());
            const auto* u = reinterpret_cast<const ult*>((top - sizeof(ult)) & ~std::uintptr_t(63));
            // A thread that has ended but was never joined keeps its control
            // block (for its joiner) but waits on nothing: not part of the report.
            if (u->magic == ult_magic_live && u->stack.lo == s.lo && u->kind == ult_kind::regular && u->started &&
                u->join_word.load(memory_order_acquire) != join_finished && u->wait_kind != nullptr)
                describe(u);
        },
        nullptr);
    std::fprintf(stderr, "weft: aborting (set WEFT_DEADLOCK=off to wait forever instead)\n");
    std::fflush(stderr);
    std::abort();
}

}  // namespace weft::detail
