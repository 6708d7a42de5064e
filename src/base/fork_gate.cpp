#include "base/fork_gate.hpp"

#include <sched.h>

namespace weft::detail {

[[gnu::tls_model("initial-exec")]] thread_local spin_census* t_spin_census = nullptr;
[[gnu::tls_model("initial-exec")]] thread_local std::uint32_t t_outside_held = 0;
atomic<std::uint32_t> g_outside_holding{0};
atomic<const void*> g_fork_gate{nullptr};

namespace {
const void* self_identity() {
    if (spin_census* c = t_spin_census; c != nullptr) return c;
    return &t_outside_held;
}
}  // namespace

void wait_at_fork_gate() {
    const void* gate = g_fork_gate.load(memory_order_acquire);
    if (gate == nullptr || gate == self_identity()) return;
    // Uncount the lock not yet taken, so the forker can proceed; wait; count
    // it again (which meets the gate again if another fork closed it).
    spin_census_leave();
    while (g_fork_gate.load(memory_order_acquire) != nullptr) sched_yield();
    spin_census_enter();
}

void close_fork_gate() {
    g_fork_gate.store(self_identity(), memory_order_relaxed);
    heavy_fence();  // against the holders' light_fence (spin_census_enter)
}

void wait_until_released(const spin_census& census) {
    if (&census == t_spin_census) return;
    while (census.held.load(memory_order_acquire) != 0) sched_yield();
}

void wait_until_outside_released() {
    // The caller's own outside holds: none (it holds no spinlock, close_fork_gate).
    while (g_outside_holding.load(memory_order_acquire) != 0) sched_yield();
}

void open_fork_gate() { g_fork_gate.store(nullptr, memory_order_release); }

}  // namespace weft::detail
