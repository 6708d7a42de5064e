// weft::detail::fil — filament statistics: per-worker slots (stats.hpp).
#include <cerrno>

#include "core/runtime.hpp"
#include "core/tunables.hpp"
#include "fil/stats.hpp"
#include "weft/weft.h"

namespace weft::detail::fil {
namespace {

constexpr int nfields = 13;
static_assert(sizeof(weft_fil_stats_t) == nfields * sizeof(std::uint64_t), "one slot field per stats field");

// One slot per worker, and the last one for external threads and for work
// counted outside regions.
struct alignas(64) slot {
    atomic<std::uint64_t> v[nfields];
};
slot g_slots[tun::max_workers + 1];

void to_array(const counters& c, std::uint64_t* a) {
    const std::uint64_t vals[nfields] = {c.regions,       c.created,        c.run,           c.forks,
                                         c.pruned,        c.steals,         c.tree_sends,    c.pools_general,
                                         c.pools_dense_1d, c.pools_dense_2d, c.pools_helped, c.sweeps,
                                         c.sleeps};
    for (int i = 0; i < nfields; ++i) a[i] = vals[i];
}

void read_slot(const slot& s, weft_fil_stats_t* out) {
    std::uint64_t a[nfields];
    for (int i = 0; i < nfields; ++i) a[i] = s.v[i].load(memory_order_relaxed);
    out->regions = a[0];
    out->filaments_created = a[1];
    out->filaments_run = a[2];
    out->forks = a[3];
    out->forks_pruned = a[4];
    out->steals = a[5];
    out->tree_sends = a[6];
    out->pools_general = a[7];
    out->pools_dense_1d = a[8];
    out->pools_dense_2d = a[9];
    out->pools_helped = a[10];
    out->sweeps = a[11];
    out->sleeps = a[12];
}

}  // namespace

void stats_flush(int w, const counters& c) {
    counters d = c;
    // Pruned forks are filaments too: created, and run (as calls).
    d.created += c.pruned;
    d.run += c.pruned;
    std::uint64_t a[nfields];
    to_array(d, a);
    slot& s = g_slots[(w < 0 || w >= tun::max_workers) ? tun::max_workers : w];
    for (int i = 0; i < nfields; ++i)
        if (a[i] != 0) s.v[i].fetch_add(a[i], memory_order_relaxed);
}

void stats_add_created(std::uint64_t n) {
    worker* w = current_worker();
    int k = w != nullptr ? w->index : tun::max_workers;
    g_slots[k].v[1].fetch_add(n, memory_order_relaxed);
}

}  // namespace weft::detail::fil

using namespace weft::detail;
using namespace weft::detail::fil;

extern "C" {

WEFT_API int weft_fil_stats_get(weft_fil_stats_t* out) {
    if (out == nullptr) return EINVAL;
    *out = weft_fil_stats_t{};
    std::uint64_t* o = reinterpret_cast<std::uint64_t*>(out);
    for (const slot& s : g_slots)
        for (int i = 0; i < nfields; ++i) o[i] += s.v[i].load(memory_order_relaxed);
    return 0;
}

WEFT_API int weft_fil_worker_stats_get(int worker, weft_fil_stats_t* out) {
    if (out == nullptr || worker < 0 || worker >= tun::max_workers) return EINVAL;
    if (g_rt != nullptr && worker >= g_rt->nworkers) return EINVAL;
    read_slot(g_slots[worker], out);
    return 0;
}

WEFT_API int weft_fil_stats_reset(void) {
    for (slot& s : g_slots)
        for (auto& v : s.v) v.store(0, memory_order_relaxed);
    return 0;
}

}  // extern "C"
