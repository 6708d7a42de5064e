// lifo — one global LIFO stack; a forked child is pushed and the parent goes
// on. On one worker it runs a fork tree close to depth-first (the most recent
// fork runs next), keeping few threads live, but it gives no space guarantee
// with several workers and no order between siblings (Narlikar & Blelloch, Figure 1).
// A yielding thread goes to the bottom of the stack: at the top it would be
// picked again at once and yield would never let anything else run.
#include "sched/global_queue.hpp"
#include "sched/policy.hpp"

namespace weft::detail {
namespace {

global_queue& q(void* self) { return *static_cast<global_queue*>(self); }

const sched_policy_def lifo_policy = {
    .name = "lifo",
    .description = "one global LIFO stack; the parent continues after a fork",
    .create = [](int workers) -> void* { return new global_queue(workers); },
    .destroy = [](void* self) { delete static_cast<global_queue*>(self); },
    .spawn =
        [](void* self, int, ult*, ult* child) {
            q(self).push_front(child);
            return false;
        },
    .ready =
        [](void* self, int, ult* t, ready_reason why) {
            if (why == ready_reason::yielded) q(self).push_back(t);
            else q(self).push_front(t);
        },
    .pick_next = [](void* self, int) { return q(self).pop_front(); },
    .yield_swap = [](void* self, int, ult* t) { return q(self).swap_back_front(t); },
    .has_work = [](void* self, int) { return q(self).maybe_nonempty(); },
};

}  // namespace
WEFT_REGISTER(lifo_policy);
}  // namespace weft::detail
