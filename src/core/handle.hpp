// weft::detail — thread handles: what a weft_thread_t names, and how a stale one is caught.
//
// A handle is not the address of a control block. It is a pair packed in the
// 64 bits of the opaque pointer:
//
//     bits 0..23   index of a slot in the runtime's handle table
//     bits 24..63  the slot's generation when the handle was made (>= 1, so no
//                  handle is WEFT_THREAD_NULL)
//
// The slot holds the current generation, a state and the ult:
//
//     free     the slot waits in a free list; no handle names it
//     live     a thread that nobody has joined or detached
//     claimed  a thread that a joiner or a detach owns (created detached, being
//              joined, detached), or main or an idle ult: neither joinable
//              nor detachable
//
// Steps:
//   1. create: take a free slot, store the ult, publish generation|live (or
//      claimed) with a release store; the handle is (index, generation).
//   2. join, detach: compare-and-swap generation|live -> generation|claimed.
//      Failure because the generation differs or the slot is free: the handle
//      is stale (ESRCH); because the slot is claimed: EINVAL. The claim makes
//      the caller the only one that may end the thread's life, so its ult
//      stays put until the caller itself releases it.
//   3. release (after the join, or when a detached thread ends): store
//      (generation + 1)|free with a release store, then put the slot in a free
//      list. Every handle made before then now fails step 2 and every lookup.
//   Names, ids and start only load the word (acquire) and compare: they must
//   not race the join or detach that ends the thread (as in Pthreads), but a
//   handle already stale when the call begins never reaches a control block.
//
// Why a table and not a generation in the pointer's spare bits: a check must
// read the generation from memory that stays valid whatever happened to the
// thread. A control block lives at the top of its stack, and a stack of a
// non-default size is unmapped when its thread is reclaimed, so a generation
// kept there could fault; default stacks are recycled and could be read, but
// only 6 low bits (64-byte alignment) and 7 to 16 high bits (the virtual
// address width) are spare, which wraps within minutes of a create/join loop.
// The table's slots are never freed while the runtime lives (it only grows, by
// chunks), so a check never reads freed memory, and a garbage handle whose
// index was never handed out is ESRCH too.
//
// Generations. 40 bits: a slot's generation reaches 2^40 - 1 after that many
// threads have used it (over 15 hours of back-to-back create+join on one
// slot at ~50 ns each); such a slot is retired, never reused, so one
// (index, generation) pair names one thread for the life of the process. A
// new runtime's table starts its slots above every generation the previous
// runtime's table used, so a handle kept across weft_finalize and weft_init
// stays stale too. 24 index bits: up to 16,777,215 threads alive at once
// (EAGAIN beyond).
//
// Free slots are cached per worker (LIFO, like stacks: the slot a join just
// freed is the next creation's, warm in cache), moved to and from the shared
// list in batches (tun::handle_cache_batch) under its spinlock.
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "base/primitives.hpp"
#include "core/tunables.hpp"
#include "weft/weft.h"

namespace weft::detail {

struct ult;
struct worker;

inline constexpr unsigned handle_index_bits = 24;
inline constexpr std::uint64_t handle_index_mask = (std::uint64_t(1) << handle_index_bits) - 1;
inline constexpr std::uint64_t handle_generation_max = (std::uint64_t(1) << (64 - handle_index_bits)) - 1;
inline constexpr std::uint32_t no_slot = ~std::uint32_t(0);

// slot::word = generation << 2 | state.
inline constexpr std::uint64_t slot_free = 0;
inline constexpr std::uint64_t slot_live = 1;
inline constexpr std::uint64_t slot_claimed = 2;
inline constexpr std::uint64_t slot_state_mask = 3;

struct handle_slot {
    atomic<std::uint64_t> word{0};
    // The thread while the slot is not free. Relaxed: the word's release store
    // (step 1) or the claim (step 2) orders it; atomic only because a stale
    // lookup racing a reuse (a caller's error) may read it.
    atomic<ult*> u{nullptr};
    std::uint32_t next_free = no_slot;  // free-list link, while free
};

// A worker's free slots: a LIFO list through handle_slot::next_free. Touched
// only by its worker.
struct handle_cache {
    std::uint32_t head = no_slot;
    std::uint32_t count = 0;
};

inline std::uint64_t handle_bits(weft_thread_t h) { return reinterpret_cast<std::uintptr_t>(h); }
inline std::uint64_t handle_generation(weft_thread_t h) { return handle_bits(h) >> handle_index_bits; }
inline std::uint32_t handle_index(weft_thread_t h) { return static_cast<std::uint32_t>(handle_bits(h) & handle_index_mask); }
inline std::uint64_t slot_word(std::uint64_t generation, std::uint64_t state) { return generation << 2 | state; }

class handle_table {
public:
    // Slots start one above every generation an earlier table used.
    handle_table();
    // Slots start at first_generation (>= 1): for tests of the generation's end.
    explicit handle_table(std::uint64_t first_generation);
    ~handle_table();
    handle_table(const handle_table&) = delete;
    handle_table& operator=(const handle_table&) = delete;

    // Step 1: gives u a handle, its slot live (joinable) or claimed. cache: the
    // calling worker's, or null (external kernel thread). WEFT_THREAD_NULL if
    // the table is full or no memory is left for a new chunk.
    [[nodiscard]] weft_thread_t acquire(handle_cache* cache, ult* u, bool claimed) {
        if (cache == nullptr || cache->head == no_slot) return acquire_slow(cache, u, claimed);
        return take(cache, u, claimed);
    }

    // The slot of h's index, or null if that index was never handed out.
    handle_slot* find(weft_thread_t h) const {
        std::uint32_t i = handle_index(h);
        handle_slot* c = chunks_[i >> chunk_bits].load(memory_order_acquire);
        return c != nullptr ? &c[i & (chunk_slots - 1)] : nullptr;
    }

    // The ult h names, or null if h is stale (or was never a handle).
    ult* resolve(weft_thread_t h) const {
        const handle_slot* s = find(h);
        if (s == nullptr) return nullptr;
        std::uint64_t w = s->word.load(memory_order_acquire);
        if ((w >> 2) != handle_generation(h) || (w & slot_state_mask) == slot_free) return nullptr;
        return s->u.load(memory_order_relaxed);
    }

    // Step 2: 0 and *out = the thread; ESRCH stale; EINVAL already claimed.
    [[nodiscard]] int claim(weft_thread_t h, ult** out) {
        handle_slot* s = find(h);
        if (s == nullptr) return ESRCH;
        std::uint64_t live = slot_word(handle_generation(h), slot_live);
        std::uint64_t w = s->word.load(memory_order_relaxed);
        while (w == live) {
            if (s->word.compare_exchange_weak(w, slot_word(handle_generation(h), slot_claimed), memory_order_acq_rel,
                                              memory_order_relaxed)) {
                *out = s->u.load(memory_order_relaxed);
                return 0;
            }
        }
        return w == slot_word(handle_generation(h), slot_claimed) ? EINVAL : ESRCH;
    }

    // Step 3: h's slot moves to the next generation and back to a free list.
    // Called once, by whoever claimed h (or by the thread's end, if it was
    // created detached or detached while it ran).
    void release(handle_cache* cache, weft_thread_t h) {
        std::uint64_t next = handle_generation(h) + 1;
        if (cache == nullptr || next > handle_generation_max) return release_slow(cache, h);
        std::uint32_t i = handle_index(h);
        handle_slot* s = slot(i);
        s->word.store(slot_word(next, slot_free), memory_order_release);
        s->next_free = cache->head;
        cache->head = i;
        if (++cache->count > tun::handle_cache_max) spill(cache, tun::handle_cache_batch);
    }

private:
    // Fixed-size chunks, found through a directory that covers every index, so
    // a lookup is two loads. A chunk is allocated when its first index is
    // handed out: 4096 slots, 96 KiB.
    static constexpr unsigned chunk_bits = 12;
    static constexpr std::uint32_t chunk_slots = std::uint32_t(1) << chunk_bits;
    static constexpr std::uint32_t max_chunks = std::uint32_t(1) << (handle_index_bits - chunk_bits);

    // Owner paths (the slot's index was handed out, so its chunk exists).
    handle_slot* slot(std::uint32_t i) const {
        return &chunks_[i >> chunk_bits].load(memory_order_relaxed)[i & (chunk_slots - 1)];
    }
    weft_thread_t take(handle_cache* cache, ult* u, bool claimed) {
        std::uint32_t i = cache->head;
        handle_slot* s = slot(i);
        cache->head = s->next_free;
        --cache->count;
        std::uint64_t gen = s->word.load(memory_order_relaxed) >> 2;
        s->u.store(u, memory_order_relaxed);
        // Release: whoever loads this word (after getting the handle from us,
        // through the caller's own synchronisation) sees u.
        s->word.store(slot_word(gen, claimed ? slot_claimed : slot_live), memory_order_release);
        return reinterpret_cast<weft_thread_t>(static_cast<std::uintptr_t>(gen << handle_index_bits | i));
    }
    weft_thread_t acquire_slow(handle_cache* cache, ult* u, bool claimed);
    void release_slow(handle_cache* cache, weft_thread_t h);
    // Moves up to n free slots from the shared list (or new ones) into *cache.
    // Returns false if none could be had. Takes lock_.
    bool refill(handle_cache* cache, std::uint32_t n);
    // Moves n slots from the head of *cache to the shared list. Takes lock_.
    void spill(handle_cache* cache, std::uint32_t n);

    atomic<handle_slot*> chunks_[max_chunks] = {};
    spinlock lock_;                        // guards what follows
    std::uint32_t shared_head_ = no_slot;  // shared free list
    std::uint32_t carved_ = 0;             // indices handed out so far
    std::uint64_t first_generation_;       // of every slot this table carves
};

}  // namespace weft::detail
