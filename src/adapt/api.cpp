// weft_adapt_get and weft_adapt_set_active (include/weft/weft.h).
#include "adapt/controller.hpp"
#include "core/active.hpp"
#include "core/runtime.hpp"

using namespace weft::detail;

extern "C" {

WEFT_API int weft_adapt_get(weft_adapt_info_t* out) {
    runtime* rt = g_rt;
    if (out == nullptr || rt == nullptr) return EINVAL;
    *out = weft_adapt_info_t{};
    out->workers = rt->nworkers;
    out->active_workers = rt->active.load(memory_order_relaxed);
    if (rt->adapt != nullptr) {
        adapt::controller& c = rt->adapt->ctl();
        out->mode = c.probe_name();
        out->interval_ms = c.parameters().interval_ms;
        out->budget_share = c.budget_share();
        out->budget_members = c.budget_members();
    } else {
        out->mode = "off";
    }
    return 0;
}

WEFT_API int weft_adapt_set_active(int n) {
    runtime* rt = g_rt;
    if (rt == nullptr || n < 1 || n > rt->nworkers) return EINVAL;
    (void)set_active_workers(rt, n);
    return 0;
}

}  // extern "C"
