// weft::detail::fil — filament statistics in the core's per-worker counters
// (stats.hpp).
#include <cerrno>

#include "core/dispatch.hpp"
#include "core/runtime.hpp"
#include "core/tunables.hpp"
#include "fil/stats.hpp"
#include "weft/weft.h"

namespace weft::detail::fil {
namespace {

static_assert(sizeof(counters) == sizeof(weft_fil_stats_t) && fil_stat_fields == 13,
              "one counters field, and one worker::fil counter, per weft_fil_stats_t field");

// The counters of worker w of the running runtime (w < 0 or out of range:
// worker 0's), or null without a runtime.
atomic<std::uint64_t>* counters_of(int w) {
    runtime* rt = g_rt;
    if (rt == nullptr) return nullptr;
    if (w < 0 || w >= rt->nworkers) w = 0;
    return rt->workers[static_cast<std::size_t>(w)]->fil;
}

// Adds one worker's counters to *out.
void add_to(weft_fil_stats_t* out, const atomic<std::uint64_t>* c) {
    std::uint64_t v[fil_stat_fields];
    for (int i = 0; i < fil_stat_fields; ++i) v[i] = c[i].load(memory_order_relaxed);
    out->regions += v[0];
    out->filaments_created += v[1];
    out->filaments_run += v[2];
    out->forks += v[3];
    out->forks_pruned += v[4];
    out->steals += v[5];
    out->tree_sends += v[6];
    out->pools_general += v[7];
    out->pools_dense_1d += v[8];
    out->pools_dense_2d += v[9];
    out->pools_helped += v[10];
    out->sweeps += v[11];
    out->sleeps += v[12];
}

}  // namespace

void stats_flush(int w, const counters& c) {
    atomic<std::uint64_t>* s = counters_of(w);
    if (s == nullptr) return;
    // Pruned forks are filaments too: created, and run (as calls).
    const std::uint64_t v[fil_stat_fields] = {c.regions,        c.created + c.pruned, c.run + c.pruned, c.forks,
                                              c.pruned,         c.steals,             c.tree_sends,     c.pools_general,
                                              c.pools_dense_1d, c.pools_dense_2d,     c.pools_helped,   c.sweeps,
                                              c.sleeps};
    for (int i = 0; i < fil_stat_fields; ++i)
        if (v[i] != 0) s[i].fetch_add(v[i], memory_order_relaxed);
}

void stats_add_created(std::uint64_t n) {
    if (n == 0) return;
    worker* w = current_worker();
    if (atomic<std::uint64_t>* s = counters_of(w != nullptr ? w->index : 0)) s[1].fetch_add(n, memory_order_relaxed);
}

}  // namespace weft::detail::fil

using namespace weft::detail;
using namespace weft::detail::fil;

extern "C" {

WEFT_API int weft_fil_stats_get(weft_fil_stats_t* out) {
    if (out == nullptr) return EINVAL;
    *out = weft_fil_stats_t{};
    if (runtime* rt = g_rt; rt != nullptr)
        for (auto& w : rt->workers) add_to(out, w->fil);
    return 0;
}

WEFT_API int weft_fil_worker_stats_get(int worker, weft_fil_stats_t* out) {
    if (out == nullptr || worker < 0 || worker >= tun::max_workers) return EINVAL;
    runtime* rt = g_rt;
    if (rt != nullptr && worker >= rt->nworkers) return EINVAL;
    *out = weft_fil_stats_t{};
    if (rt != nullptr) add_to(out, rt->workers[static_cast<std::size_t>(worker)]->fil);
    return 0;
}

WEFT_API int weft_fil_stats_reset(void) {
    if (runtime* rt = g_rt; rt != nullptr)
        for (auto& w : rt->workers)
            for (auto& c : w->fil) c.store(0, memory_order_relaxed);
    return 0;
}

}  // extern "C"
