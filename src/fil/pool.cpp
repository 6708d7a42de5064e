// weft::detail::fil — the C API of pools and pool sets, and the C loop that
// runs a pool (Lowenthal, Freeh & Andrews §2.1: fCreatePoolSet, fCreatePools, fCreateFilament).
//
// In C the body is a function pointer, so a call per filament remains; what
// the recognised paths remove is the descriptor traffic: the arguments are
// loop counters. (The C++ API inlines the body as well: filament.hpp; both
// run the same loops.)
#include <cerrno>
#include <climits>
#include <exception>
#include <new>

#include "core/runtime.hpp"
#include "fil/pool.hpp"
#include "fil/program.hpp"
#include "fil/region.hpp"
#include "fil/stats.hpp"
#include "fil/sweep.hpp"
#include "weft/detail/fil_pool_loops.hpp"

namespace weft::detail::fil {
namespace {

// A pool of a C pool set: the loops of every pool (weft/detail/fil_pool_loops.hpp),
// with a call through the set's function pointer as the body.
void c_run_pool(void* ctx, const weft_fil_pool_view_* v) {
    auto* set = static_cast<weft_fil_poolset_s*>(ctx);
    const weft_fil_fn fn = set->fn;
    void* const arg = set->arg;
    run_pool_loops([fn, arg](int i, int j) { fn(i, j, arg); }, v);
}

int c_after(void* ctx) {
    auto* set = static_cast<weft_fil_poolset_s*>(ctx);
    return set->c_after(set->arg);
}

int nworkers() {
    runtime* rt = g_rt;
    return rt != nullptr ? rt->nworkers : 1;
}

weft_fil_poolset_s* new_set() { return new (std::nothrow) weft_fil_poolset_s; }

}  // namespace
}  // namespace weft::detail::fil

using namespace weft::detail;
using namespace weft::detail::fil;

extern "C" {

WEFT_API int weft_fil_poolset_create(weft_fil_poolset_t* ps, weft_fil_fn fn, weft_fil_after_fn after, void* arg) {
    if (ps == nullptr || fn == nullptr) return EINVAL;
    if (int rc = weft_fil_init(); rc != 0) return rc;
    weft_fil_poolset_s* s = new_set();
    if (s == nullptr) return ENOMEM;
    s->fn = fn;
    s->arg = arg;
    s->c_after = after;
    s->run = &c_run_pool;
    s->run_ctx = s;
    if (after != nullptr) {
        s->after = &c_after;
        s->after_ctx = s;
    }
    if (int rc = program_add_set(s); rc != 0) {
        delete s;
        return rc;
    }
    s->in_program = true;
    *ps = s;
    return 0;
}

WEFT_API int weft_fil_poolset_create_cb_(weft_fil_poolset_t* ps, weft_fil_run_pool_fn_ run, weft_fil_after_ctx_fn_ after,
                                         void* ctx) {
    if (ps == nullptr || run == nullptr) return EINVAL;
    if (int rc = weft_fil_init(); rc != 0) return rc;
    weft_fil_poolset_s* s = new_set();
    if (s == nullptr) return ENOMEM;
    s->run = run;
    s->run_ctx = ctx;
    s->after = after;
    s->after_ctx = ctx;
    *ps = s;
    return 0;
}

WEFT_API int weft_fil_poolset_destroy(weft_fil_poolset_t ps) {
    if (ps == nullptr) return EINVAL;
    if (ps->running.load(memory_order_acquire)) return EBUSY;
    if (ps->in_program) program_remove_set(ps);
    for (weft_fil_pool_s* p : ps->pools) {
        stats_add_created(p->uncounted);  // created, never swept since
        delete p;
    }
    delete ps;
    return 0;
}

WEFT_API int weft_fil_poolset_set_order(weft_fil_poolset_t ps, int order) {
    if (ps == nullptr || (order != WEFT_FIL_BACK_AND_FORTH && order != WEFT_FIL_FORWARD)) return EINVAL;
    if (ps->running.load(memory_order_acquire)) return EBUSY;
    ps->order = order;
    return 0;
}

WEFT_API int weft_fil_pool_create(weft_fil_poolset_t ps, int worker, size_t capacity, weft_fil_pool_t* pool) {
    if (ps == nullptr || pool == nullptr) return EINVAL;
    if (ps->running.load(memory_order_acquire)) return EBUSY;
    auto* p = new (std::nothrow) weft_fil_pool_s;
    if (p == nullptr) return ENOMEM;
    int n = nworkers();
    p->set = ps;
    p->owner = ((worker % n) + n) % n;
    try {
        p->descs.reserve(capacity);
        ps->pools.push_back(p);
    } catch (const std::bad_alloc&) {
        delete p;
        return ENOMEM;
    }
    *pool = p;
    return 0;
}

WEFT_API int weft_fil_pools_create(weft_fil_poolset_t ps, size_t capacity, weft_fil_pool_t* pools) {
    if (ps == nullptr || pools == nullptr) return EINVAL;
    int n = nworkers();
    for (int w = 0; w < n; ++w) {
        if (int rc = weft_fil_pool_create(ps, w, capacity, &pools[w]); rc != 0) return rc;
    }
    return 0;
}

WEFT_API int weft_fil_create(weft_fil_pool_t pool, int i, int j) {
    // Also allowed from the set's own after function (every worker waits
    // then); a body adding to a pool being swept is undefined (documented).
    if (pool == nullptr || pool->is_range) return EINVAL;
    try {
        pool->descs.push_back(desc{i, j});
    } catch (const std::bad_alloc&) {
        return ENOMEM;
    }
    pool->dirty = true;
    ++pool->uncounted;
    return 0;
}

WEFT_API int weft_fil_create_range(weft_fil_pool_t pool, int i0, int i1, int istride, int j0, int j1) {
    if (pool == nullptr || pool->is_range || istride < 1) return EINVAL;
    if (i1 <= i0 || j1 <= j0) return 0;  // an empty range, as a loop over it would be
    // 64-bit: i1 - i0 may not fit an int.
    const std::size_t rows = static_cast<std::size_t>(
        (static_cast<std::int64_t>(i1) - i0 + istride - 1) / istride);
    const std::size_t cols = static_cast<std::size_t>(j1 - j0);
    try {
        pool->descs.reserve(pool->descs.size() + rows * cols);
    } catch (const std::exception&) {  // bad_alloc, or length_error past max_size
        return ENOMEM;
    }
    // 64-bit index: i may step past INT_MAX on its way out of the loop.
    for (std::int64_t i = i0; i < i1; i += istride)
        for (int j = j0; j < j1; ++j) pool->descs.push_back(desc{static_cast<std::int32_t>(i), j});
    pool->dirty = true;
    pool->uncounted += rows * cols;
    return 0;
}

WEFT_API int weft_fil_pool_clear(weft_fil_pool_t pool) {
    if (pool == nullptr || pool->is_range) return EINVAL;
    pool->descs.clear();
    pool->dirty = true;
    return 0;
}

WEFT_API size_t weft_fil_pool_size(weft_fil_pool_t pool) { return pool != nullptr ? pool->descs.size() : 0; }

WEFT_API int weft_fil_pool_path(weft_fil_pool_t pool) {
    return pool != nullptr ? pool->last_path.load(memory_order_relaxed) : WEFT_FIL_PATH_NONE;
}

WEFT_API int weft_fil_run_sets(const weft_fil_poolset_t* sets, int n) {
    if (int rc = weft_fil_init(); rc != 0) return rc;
    return run_sets(sets, n, nullptr);
}

WEFT_API int weft_fil_run_sets_ex_(const weft_fil_poolset_t* sets, int n, void* exc) {
    if (int rc = weft_fil_init(); rc != 0) return rc;
    return run_sets(sets, n, exc);
}

}  // extern "C"
