// weft::detail — the deadlock report.
//
// The last worker to park, with no timer armed, sleeps for a grace period
// (tunables.hpp) instead of forever. If on waking no worker has switched in the
// meantime, every worker is still parked, no timer is armed, and every live ult
// is blocked in a weft primitive, nothing inside the process can ever wake any
// of them: the program is deadlocked. We print who waits on what and abort,
// rather than hang. (A kernel thread outside weft could still post a semaphore;
// programs that rely on that after a long quiet spell set WEFT_DEADLOCK=off.)
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/runtime.hpp"

namespace weft::detail {

bool all_blocked_without_timers() {
    runtime* rt = g_rt;
    bool any = false;
    for (auto& w : rt->workers) {
        lock_guard<spinlock> g(w->reg_lock);
        for (ult* u = w->reg_head; u != nullptr; u = u->reg_next) {
            if (u->wait_kind == nullptr) return false;
            any = true;
        }
    }
    return any;
}

void report_deadlock() {
    runtime* rt = g_rt;
    std::fprintf(stderr,
                 "weft: deadlock: every weft thread is blocked and no timer is pending; %" PRIu64
                 " thread(s) wait:\n",
                 rt->live.load(memory_order_relaxed));
    for (auto& w : rt->workers) {
        lock_guard<spinlock> g(w->reg_lock);
        for (ult* u = w->reg_head; u != nullptr; u = u->reg_next) {
            std::fprintf(stderr, "  thread %" PRIu64 " (%s) waits in %s", u->id, u->name[0] ? u->name : "unnamed",
                         u->wait_kind);
            if (u->wait_object != nullptr) std::fprintf(stderr, " on %p", u->wait_object);
            if (std::strncmp(u->wait_kind, "weft_mutex", 10) == 0 && u->wait_object != nullptr) {
                auto* owner = static_cast<ult*>(static_cast<const weft_mutex_t*>(u->wait_object)->owner_);
                if (owner != nullptr) std::fprintf(stderr, " held by thread %" PRIu64 " (%s)", owner->id, owner->name[0] ? owner->name : "unnamed");
            } else if (std::strcmp(u->wait_kind, "weft_thread_join") == 0 && u->wait_object != nullptr) {
                auto* target = static_cast<const ult*>(u->wait_object);
                std::fprintf(stderr, " (thread %" PRIu64 ")", target->id);
            }
            std::fputc('\n', stderr);
        }
    }
    std::fprintf(stderr, "weft: aborting (set WEFT_DEADLOCK=off to wait forever instead)\n");
    std::fflush(stderr);
    std::abort();
}

}  // namespace weft::detail
