// fifo — one global FIFO queue; a forked child is queued and the parent goes
// on. The breadth-first baseline of Narlikar & Blelloch (the Solaris Pthreads scheduler):
// on a fork tree it creates threads much faster than it retires them, which is
// the memory blow-up the space-efficient scheduler (dfs) exists to prevent.
#include "sched/global_queue.hpp"
#include "sched/policy.hpp"

namespace weft::detail {
namespace {

global_queue& q(void* self) { return *static_cast<global_queue*>(self); }

const sched_policy_def fifo_policy = {
    .name = "fifo",
    .description = "one global FIFO queue; the parent continues after a fork (breadth-first)",
    .create = [](int workers) -> void* { return new global_queue(workers); },
    .destroy = [](void* self) { delete static_cast<global_queue*>(self); },
    .spawn =
        [](void* self, int, ult*, ult* child) {
            q(self).push_back(child);
            return false;
        },
    .ready = [](void* self, int, ult* t, ready_reason) { q(self).push_back(t); },
    .pick_next = [](void* self, int) { return q(self).pop_front(); },
    .yield_swap = [](void* self, int, ult* t) { return q(self).swap_back_front(t); },
    .has_work = [](void* self, int) { return q(self).maybe_nonempty(); },
};

}  // namespace
WEFT_REGISTER(fifo_policy);
}  // namespace weft::detail
