// weft::detail::fil — whether a worker may run filaments.
#include "fil/available.hpp"

#include "core/runtime.hpp"

namespace weft::detail::fil {

bool available(int worker) {
    runtime* rt = g_rt;
    return rt == nullptr || !rt->workers[worker]->dropped.load(memory_order_relaxed);
}

}  // namespace weft::detail::fil
