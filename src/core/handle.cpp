// weft::detail — the handle table's slow paths (see handle.hpp for the protocol).
#include "core/handle.hpp"

#include <algorithm>
#include <new>

#include "core/own_allocation.hpp"

namespace weft::detail {

namespace {

// The first generation of the next runtime's slots: one above every generation
// an earlier runtime's table used (read and written under the runtime's
// init/finalize lock, which serialises tables' lives).
std::uint64_t g_next_first_generation = 1;

}  // namespace

handle_table::handle_table() : handle_table(g_next_first_generation) {}

handle_table::handle_table(std::uint64_t first_generation) : first_generation_(first_generation) {}

handle_table::~handle_table() {
    std::uint64_t top = first_generation_;
    for (std::uint32_t i = 0; i < carved_; ++i) top = std::max(top, slot(i)->word.load(memory_order_relaxed) >> 2);
    // A run of 2^40 generations through one runtime's slots would need years
    // of runtimes: start over rather than overflow.
    g_next_first_generation = top < handle_generation_max ? top + 1 : 1;
    own_allocation own;  // chunks are the runtime's, not the program's heap
    for (auto& c : chunks_) delete[] c.load(memory_order_relaxed);
}

weft_thread_t handle_table::acquire_slow(handle_cache* cache, ult* u, bool claimed) {
    handle_cache local;  // an external kernel thread takes one slot through a cache of its own
    handle_cache* c = cache != nullptr ? cache : &local;
    if (!refill(c, cache != nullptr ? tun::handle_cache_batch : 1)) return WEFT_THREAD_NULL;
    return take(c, u, claimed);
}

void handle_table::release_slow(handle_cache* cache, weft_thread_t h) {
    std::uint32_t i = handle_index(h);
    handle_slot* s = slot(i);
    std::uint64_t next = handle_generation(h) + 1;
    if (next > handle_generation_max) {
        // Retired: a free slot on no list; every handle of it is stale for good.
        s->word.store(slot_word(handle_generation_max, slot_free), memory_order_release);
        return;
    }
    s->word.store(slot_word(next, slot_free), memory_order_release);
    if (cache != nullptr) {
        s->next_free = cache->head;
        cache->head = i;
        if (++cache->count > tun::handle_cache_max) spill(cache, tun::handle_cache_batch);
        return;
    }
    lock_guard<spinlock> g(lock_);
    s->next_free = shared_head_;
    shared_head_ = i;
}

bool handle_table::refill(handle_cache* cache, std::uint32_t n) {
    lock_guard<spinlock> g(lock_);
    for (std::uint32_t k = 0; k < n; ++k) {
        std::uint32_t i = shared_head_;
        if (i != no_slot) {
            shared_head_ = slot(i)->next_free;
        } else {
            if (carved_ > handle_index_mask) break;  // every index is in use
            i = carved_;
            if ((i & (chunk_slots - 1)) == 0) {
                handle_slot* fresh;
                {
                    own_allocation own;  // not the program's heap
                    fresh = new (std::nothrow) handle_slot[chunk_slots];
                }
                if (fresh == nullptr) break;
                for (std::uint32_t j = 0; j < chunk_slots; ++j)
                    fresh[j].word.store(slot_word(first_generation_, slot_free), memory_order_relaxed);
                // Release: find() (acquire) sees the initialised slots.
                chunks_[i >> chunk_bits].store(fresh, memory_order_release);
            }
            ++carved_;
        }
        slot(i)->next_free = cache->head;
        cache->head = i;
        ++cache->count;
    }
    return cache->head != no_slot;
}

void handle_table::spill(handle_cache* cache, std::uint32_t n) {
    // Detach n slots from the head of the cache (O(n)), then splice them in.
    std::uint32_t first = cache->head;
    std::uint32_t last = first;
    for (std::uint32_t k = 1; k < n; ++k) last = slot(last)->next_free;
    cache->head = slot(last)->next_free;
    cache->count -= n;
    lock_guard<spinlock> g(lock_);
    slot(last)->next_free = shared_head_;
    shared_head_ = first;
}

}  // namespace weft::detail
