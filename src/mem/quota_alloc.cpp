// weft::detail — weft_malloc & co.: heap accounting and the memory quota.
// The design (slots, sampling, the quota window) is in quota_alloc.hpp.
#include "mem/quota_alloc.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "base/primitives.hpp"
#include "core/dispatch.hpp"
#include "core/own_allocation.hpp"
#include "core/preempt.hpp"
#include "core/runtime.hpp"
#include "core/stats.hpp"
#include "core/tunables.hpp"

namespace weft::detail {

namespace {

// Every block starts with this header, just below the pointer handed out: the
// requested size (what is charged and credited) and the distance back to what
// the C library returned. 16 bytes keep the malloc alignment.
struct alignas(16) block_header {
    std::size_t size;
    std::size_t offset;  // 16 for plain blocks, the alignment for aligned ones
};
constexpr std::size_t header_bytes = sizeof(block_header);
static_assert(header_bytes == 16);

block_header* header_of(void* p) { return static_cast<block_header*>(p) - 1; }

struct alignas(64) heap_slot {
    // Read by anyone summing (relaxed: a statistic), written by the owner.
    atomic<std::int64_t> total{0};
    atomic<std::uint64_t> peak_seen{0};
    // Owner only.
    std::int64_t sampled_at = 0;      // `total` at this slot's last sample
    const ult* window_ult = nullptr;  // the quota window: who opened it,
    std::uint64_t window_epoch = 0;   // at which worker switch count,
    std::uint64_t window_gen = 0;     // in which stats generation,
    std::int64_t window_net = 0;      // and what it has allocated since (net)
};

heap_slot g_slots[tun::max_workers];
// Slots that may be non-zero: the most workers any runtime of this process had.
atomic<int> g_slots_used{0};
alignas(64) atomic<std::int64_t> g_external{0};  // external kernel threads, no runtime
atomic<std::uint64_t> g_external_peak{0};
atomic<std::uint64_t> g_peak_base{0};  // the sum at the last weft_stats_reset
// weft_stats_reset zeroes the workers' switch counts, which the quota windows
// use as epochs: without this, a window opened at count n before the reset
// would look current at count n after it. Bumped by every reset.
atomic<std::uint64_t> g_window_gen{0};

std::int64_t heap_sum() {
    std::int64_t sum = g_external.load(memory_order_relaxed);
    int used = g_slots_used.load(memory_order_relaxed);
    for (int i = 0; i < used; ++i) sum += g_slots[i].total.load(memory_order_relaxed);
    return sum;
}

void raise(atomic<std::uint64_t>& peak, std::int64_t v) {
    if (v <= 0) return;
    auto u = static_cast<std::uint64_t>(v);
    std::uint64_t cur = peak.load(memory_order_relaxed);
    while (u > cur && !peak.compare_exchange_weak(cur, u, memory_order_relaxed)) {
    }
}

heap_slot& slot_of(worker* w) {
    // A worker index beyond those seen so far: widen the summed range once.
    int used = g_slots_used.load(memory_order_relaxed);
    while (w->index >= used && !g_slots_used.compare_exchange_weak(used, w->index + 1, memory_order_relaxed)) {
    }
    return g_slots[w->index];
}

std::uint64_t switch_count(worker* w) { return w->switches.load(memory_order_relaxed); }

// Opens a fresh quota window for the running ult if the current one is not its.
heap_slot& window(worker* w) {
    heap_slot& s = slot_of(w);
    std::uint64_t epoch = switch_count(w);
    std::uint64_t gen = g_window_gen.load(memory_order_relaxed);  // rarely written: a shared, clean line
    if (s.window_ult != w->current || s.window_epoch != epoch || s.window_gen != gen) {
        s.window_ult = w->current;
        s.window_epoch = epoch;
        s.window_gen = gen;
        s.window_net = 0;
    }
    return s;
}

// Before an allocation of `bytes` by the running ult: asks the policy whether
// the ult must first be preempted or delayed behind dummy threads, and does it.
// Returns the worker the ult runs on afterwards.
worker* charge_quota(worker* w, std::size_t bytes) {
    runtime* rt = g_rt;
    auto on_alloc = rt->policy->space.on_alloc;
    if (on_alloc == nullptr) return w;
    heap_slot& s = window(w);
    ult* self = w->current;
    alloc_verdict v = on_alloc(rt->policy_state, w->index, self, bytes, s.window_net, rt->cfg.quota);
    if (v.dummies != 0)
        w = await_turn(run_dummies(w, v.dummies), v.dummies);
    else if (v.preempt)
        w = preempt(w);
    else
        return w;
    // Rescheduled (or found to be still the leftmost): a fresh quantum, even
    // if no switch happened.
    heap_slot& s2 = slot_of(w);
    s2.window_ult = self;
    s2.window_epoch = switch_count(w);
    s2.window_gen = g_window_gen.load(memory_order_relaxed);
    s2.window_net = 0;
    return w;
}

void account_alloc(worker* w, std::size_t bytes) {
    auto b = static_cast<std::int64_t>(bytes);
    if (w == nullptr) {
        raise(g_external_peak, g_external.fetch_add(b, memory_order_relaxed) + b);
        // The workers' slots count too: sum them once more for the peak.
        raise(g_external_peak, heap_sum());
        return;
    }
    heap_slot& s = window(w);
    std::int64_t total = s.total.load(memory_order_relaxed) + b;
    s.total.store(total, memory_order_relaxed);
    s.window_net += b;
    if (g_rt->nworkers == 1 || bytes >= tun::heap_sample_step ||
        total - s.sampled_at >= std::int64_t(tun::heap_sample_step)) {
        s.sampled_at = total;
        raise(s.peak_seen, heap_sum());
    }
}

void account_free(worker* w, std::size_t bytes) {
    auto b = static_cast<std::int64_t>(bytes);
    if (w == nullptr) {
        g_external.fetch_sub(b, memory_order_relaxed);
        return;
    }
    heap_slot& s = window(w);  // a free credits the running ult's quota
    std::int64_t total = s.total.load(memory_order_relaxed) - b;
    s.total.store(total, memory_order_relaxed);
    s.window_net -= b;
    if (total < s.sampled_at) s.sampled_at = total;  // growth is measured from the low point
}

// The one allocation path. align: 0 for malloc alignment, else a power of two
// above 16. zero: calloc semantics.
void* allocate(std::size_t size, std::size_t align, bool zero) {
    std::size_t lead = align == 0 ? header_bytes : align;
    if (size > SIZE_MAX - lead - align) {
        errno = ENOMEM;
        return nullptr;
    }
    worker* w = current_worker();
    if (w != nullptr) w = charge_quota(w, size);
    void* raw;
    if (align == 0) {
        raw = zero ? std::calloc(1, size + lead) : std::malloc(size + lead);
    } else {
        std::size_t total = (size + lead + align - 1) & ~(align - 1);  // aligned_alloc wants a multiple
        raw = std::aligned_alloc(align, total);
        if (raw != nullptr && zero) std::memset(raw, 0, total);
    }
    if (raw == nullptr) {
        errno = ENOMEM;
        return nullptr;
    }
    void* p = static_cast<char*>(raw) + lead;
    *header_of(p) = block_header{size, lead};
    account_alloc(w, size);
    return p;
}

}  // namespace

void heap_add_stats(weft_stats_t* out) {
    std::int64_t now = heap_sum();
    std::uint64_t peak = g_peak_base.load(memory_order_relaxed);
    int used = g_slots_used.load(memory_order_relaxed);
    for (int i = 0; i < used; ++i) peak = std::max(peak, g_slots[i].peak_seen.load(memory_order_relaxed));
    peak = std::max(peak, g_external_peak.load(memory_order_relaxed));
    out->heap_bytes = now > 0 ? static_cast<std::uint64_t>(now) : 0;
    out->heap_bytes_peak = std::max(peak, out->heap_bytes);
}

const char* heap_source = "weft_malloc";

void heap_charge(std::size_t bytes) {
    if (worker* w = current_worker(); w != nullptr && g_rt != nullptr) (void)charge_quota(w, bytes);
}

void heap_note_alloc(std::size_t bytes) {
    if (!in_own_allocation()) account_alloc(g_rt != nullptr ? current_worker() : nullptr, bytes);
}

void heap_note_free(std::size_t bytes) {
    if (!in_own_allocation()) account_free(g_rt != nullptr ? current_worker() : nullptr, bytes);
}

void heap_reset_stats() {
    std::int64_t now = heap_sum();
    g_peak_base.store(now > 0 ? static_cast<std::uint64_t>(now) : 0, memory_order_relaxed);
    int used = g_slots_used.load(memory_order_relaxed);
    for (int i = 0; i < used; ++i) g_slots[i].peak_seen.store(0, memory_order_relaxed);
    g_external_peak.store(0, memory_order_relaxed);
    // Every quota window starts again at its next allocation or free (a ult
    // in the middle of its quantum gets a fresh one: lenient, and rare).
    g_window_gen.fetch_add(1, memory_order_relaxed);
}

}  // namespace weft::detail

using namespace weft::detail;

extern "C" {

WEFT_API void* weft_malloc(size_t size) { return allocate(size, 0, false); }

WEFT_API void* weft_calloc(size_t count, size_t size) {
    if (size != 0 && count > SIZE_MAX / size) {
        errno = ENOMEM;
        return nullptr;
    }
    return allocate(count * size, 0, true);
}

WEFT_API void* weft_aligned_alloc(size_t alignment, size_t size) {
    if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
        errno = EINVAL;
        return nullptr;
    }
    return allocate(size, alignment <= header_bytes ? 0 : alignment, false);
}

WEFT_API void weft_free(void* p) {
    if (p == nullptr) return;
    block_header h = *header_of(p);
    account_free(current_worker(), h.size);
    std::free(static_cast<char*>(p) - h.offset);
}

WEFT_API void* weft_realloc(void* p, size_t size) {
    if (p == nullptr) return allocate(size, 0, false);
    if (size == 0) {
        weft_free(p);
        return nullptr;
    }
    block_header h = *header_of(p);
    if (h.offset != header_bytes) {
        // An aligned block: the C library has no aligned realloc; move it.
        void* q = allocate(size, h.offset, false);
        if (q == nullptr) return nullptr;
        std::memcpy(q, p, h.size < size ? h.size : size);
        weft_free(p);
        return q;
    }
    if (size > SIZE_MAX - header_bytes) {
        errno = ENOMEM;
        return nullptr;
    }
    // Only the growth is a new allocation for the quota.
    worker* w = current_worker();
    if (w != nullptr && size > h.size) w = charge_quota(w, size - h.size);
    void* raw = std::realloc(static_cast<char*>(p) - header_bytes, size + header_bytes);
    if (raw == nullptr) {
        errno = ENOMEM;
        return nullptr;  // p is untouched, as with realloc
    }
    void* q = static_cast<char*>(raw) + header_bytes;
    header_of(q)->size = size;
    if (size > h.size)
        account_alloc(w, size - h.size);
    else
        account_free(w, h.size - size);
    return q;
}

}  // extern "C"
