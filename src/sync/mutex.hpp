// weft::detail — mutex internals shared with the condition variable.
#pragma once

#include <cstdint>

#include "weft/weft.h"

namespace weft::detail {
// Locks m for `self`; deadline_ns 0 = none. Returns 0, ETIMEDOUT, EDEADLK, EAGAIN.
int mutex_lock(weft_mutex_t* m, void* self, std::int64_t deadline_ns);
// Unlocks m, owned by `self`. Returns 0 or EPERM.
int mutex_unlock(weft_mutex_t* m, void* self);
// Releases every level of a (possibly recursive) mutex and returns the depth,
// and the inverse: relock to that depth (cond wait).
std::uint32_t mutex_release_all(weft_mutex_t* m, void* self);
void mutex_reacquire(weft_mutex_t* m, void* self, std::uint32_t depth);
}  // namespace weft::detail
