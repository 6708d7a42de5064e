// weft::detail — ws_deque<T>: the work-stealing deque of the ws policy.
//
// A Chase–Lev deque (Chase & Lev, SPAA'05: a growable circular array) with
// the C11/C++11 orderings of Lê, Pop, Cohen & Zappa Nardelli, "Correct and
// efficient work-stealing for weak memory models", PPoPP'13 (their Fig. 1),
// which is the algorithm Arora, Blumofe & Plaxton calls the non-blocking deque: one owner
// pushes and pops at the bottom, any number of thieves take from the top with
// a compare-and-swap, and nobody ever waits for anybody (the owner's push and
// pop are wait-free, a steal is lock-free: it fails only because another
// take succeeded). See docs/design/ws.md for the design and the rejected
// alternatives.
//
// Contract
//   push(x)     owner only. x != nullptr. Never fails (the array grows).
//   pop()       owner only. The most recently pushed item still there
//               (LIFO), or nullptr if the deque is empty or a thief took
//               the last item first.
//   steal(out)  any thread, the owner included. Takes the oldest item
//               (FIFO): success (in out), empty, or lost_race (another
//               taker won the item we aimed at: retry if you need an
//               exact answer; each lost race means someone else took an item,
//               so retrying is lock-free).
//   steal_until_empty()
//               steal() retried on lost races: an item, or nullptr once the
//               deque was seen empty.
//   pop_unshared(), take_top_unshared()
//               owner only, and only while no thread steals (a policy with
//               one worker has no thieves): pop() and steal() without their
//               fence and CAS, which are there only to race with thieves.
//   size_hint() any thread; bottom - top read without ordering: exact for the
//               owner when it says 0 (only the owner adds items, and top
//               only grows), a snapshot for everyone else.
// Undefined: push or pop from two threads at once, or from a thread that is
// not the owner while the owner may run (the owner is whoever pushes/pops;
// ownership may move only with a happens-before edge, e.g. a thread join).
//
// Items are T*: the deque stores and hands out pointers and never
// dereferences them (a thief may read a slot that has since been reused; it
// throws the value away when its CAS fails).
//
// Memory reclamation
// ------------------
// When the array is full, the owner copies [top, bottom) into an array twice
// as large and publishes it. A thief that loaded the old array pointer may
// still read from it, so the old array is *retired*, not freed: it stays
// allocated until the deque is destroyed. This bounds the waste by a geometric
// series (all retired arrays together are smaller than the live one), needs no
// per-steal epoch pinning (crossbeam's choice, which costs every steal an
// epoch announcement and a fence), and the deques of the ws policy live exactly
// as long as the runtime. The array never shrinks: its capacity is the most
// ready threads one worker ever held, a few KiB in practice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "base/primitives.hpp"

namespace weft::detail {

enum class steal_status : unsigned char {
    success,    // an item was taken
    empty,      // top >= bottom when we looked
    lost_race,  // another thief (or the owner's pop of the last item) took it
};

template <class T>
class ws_deque {
public:
    // The array starts with 2^log2_capacity slots (at least 2).
    explicit ws_deque(unsigned log2_capacity = 8) {
        if (log2_capacity < 1) log2_capacity = 1;
        array_.store(ring::make(std::int64_t(1) << log2_capacity), memory_order_relaxed);
    }
    ~ws_deque() {
        ring::destroy(array_.load(memory_order_relaxed));
        while (retired_ != nullptr) {
            ring* next = retired_->next_retired;
            ring::destroy(retired_);
            retired_ = next;
        }
    }
    ws_deque(const ws_deque&) = delete;
    ws_deque& operator=(const ws_deque&) = delete;

    // Memory ordering (push):
    //  - bottom: relaxed load; only the owner writes it.
    //  - top: acquire load. If top has moved past slot i because a thief took
    //    item i, that thief read the slot before its CAS; acquire (pairing
    //    with the CAS's release) orders that read before our overwrite of the
    //    slot one lap later, so the thief cannot see the new item (PPoPP'13).
    //  - the array: relaxed load; only the owner replaces it.
    //  - the slot: relaxed store; published by the release store of bottom.
    //  - bottom: release store. A thief that reads this bottom (acquire) sees
    //    the item and everything the owner wrote before pushing it (the ult's
    //    saved state, a test's payload). Lê et al. write a release fence and a
    //    relaxed store; a release store is the same instructions on x86 and
    //    cheaper on AArch64 (stlr vs dmb + str), and ThreadSanitizer, which
    //    does not model fences, sees the hand-off.
    void push(T* x) {
        std::int64_t b = bottom_.load(memory_order_relaxed);
        std::int64_t t = top_.load(memory_order_acquire);
        ring* a = array_.load(memory_order_relaxed);
        if (b - t > a->mask) a = grow(a, t, b);
        a->slot(b).store(x, memory_order_relaxed);
        bottom_.store(b + 1, memory_order_release);
    }

    // Memory ordering (pop):
    //  - fast path: bottom (own) and top, both relaxed. top only grows and
    //    only the owner adds items, so top >= bottom, even with a stale top,
    //    proves the deque empty at the moment of the load: return at once
    //    without the store/fence/restore below. (An owner with nothing to do
    //    pops an empty deque on every scheduling decision: this saves it a
    //    full fence each time.)
    //  - bottom = b - 1 (release, see below), then a seq_cst fence, then top
    //    (relaxed). The fence is the heart of Chase–Lev: it orders "claim slot
    //    b-1" before "read top", against a thief's seq_cst fence between
    //    "read top" and "read bottom" (store-buffering): for the last item,
    //    either we see the thief's top or it sees our lowered bottom, so an
    //    item is never taken twice. Release on the bottom stores (here and in
    //    the restores) is not needed for that: it makes every value of bottom
    //    a thief can read carry the slots written before it (the restores
    //    re-publish a bottom a thief may read instead of the push's), which
    //    C++20 no longer gives through release sequences, and costs nothing on
    //    x86.
    //  - the slot: relaxed load; the owner wrote it.
    //  - last item (t == b-1): CAS top t -> t+1, seq_cst, as a thief's. The
    //    winner of that CAS owns the item; failure order relaxed: we return
    //    nullptr and read nothing else.
    T* pop() {
        std::int64_t b = bottom_.load(memory_order_relaxed);
        if (top_.load(memory_order_relaxed) >= b) return nullptr;
        --b;
        ring* a = array_.load(memory_order_relaxed);
        bottom_.store(b, memory_order_release);
        fence_seq_cst();
        std::int64_t t = top_.load(memory_order_relaxed);
        if (t > b) {  // a thief took the last item between our two loads of top
            bottom_.store(b + 1, memory_order_release);
            return nullptr;
        }
        T* x = a->slot(b).load(memory_order_relaxed);
        if (t == b) {
            if (!top_.compare_exchange_strong(t, t + 1, memory_order_seq_cst, memory_order_relaxed)) x = nullptr;
            bottom_.store(b + 1, memory_order_release);
        }
        return x;
    }

    // Memory ordering (steal):
    //  - top: acquire load (PPoPP'13). It synchronizes with the CAS of the
    //    taker of item t-1, so our view is at least as recent as that
    //    taker's; on x86 a plain load.
    //  - seq_cst fence: the thief's half of the store-buffering pair described
    //    in pop().
    //  - bottom: acquire load; pairs with the owner's release stores of
    //    bottom, so the slot we read below holds the item and the item's
    //    contents are visible (Arora, Blumofe & Plaxton's hand-off of a thread to a thief).
    //  - the array: acquire load; pairs with grow()'s release store, so a new
    //    array is seen with its copied slots (Lê et al. use consume, which
    //    compilers implement as acquire).
    //  - the slot: relaxed load. It may be stale (the owner may be reusing it
    //    one lap later); then top has moved and our CAS fails, and we discard
    //    the value without using it.
    //  - CAS top t -> t+1: seq_cst on success (PPoPP'13; it is the
    //    linearization point of the steal and releases our read of the slot
    //    to the owner's next push, see push()); relaxed on failure (we return
    //    lost_race and touch nothing).
    steal_status steal(T*& out) {
        std::int64_t t = top_.load(memory_order_acquire);
        fence_seq_cst();
        std::int64_t b = bottom_.load(memory_order_acquire);
        if (t >= b) return steal_status::empty;
        ring* a = array_.load(memory_order_acquire);
        T* x = a->slot(t).load(memory_order_relaxed);
        if (!top_.compare_exchange_strong(t, t + 1, memory_order_seq_cst, memory_order_relaxed))
            return steal_status::lost_race;
        out = x;
        return steal_status::success;
    }

    // With no thief, the owner is the only thread touching top and bottom:
    // relaxed accesses (atomics still, so TSan and the hints stay defined).
    // This saves a seq_cst fence and a CAS per pop of the last item: about
    // 40 of the ~280 cycles of a create+join on one worker.
    T* pop_unshared() {
        std::int64_t b = bottom_.load(memory_order_relaxed);
        if (top_.load(memory_order_relaxed) >= b) return nullptr;
        --b;
        T* x = array_.load(memory_order_relaxed)->slot(b).load(memory_order_relaxed);
        bottom_.store(b, memory_order_relaxed);
        return x;
    }
    T* take_top_unshared() {
        std::int64_t t = top_.load(memory_order_relaxed);
        if (t >= bottom_.load(memory_order_relaxed)) return nullptr;
        T* x = array_.load(memory_order_relaxed)->slot(t).load(memory_order_relaxed);
        top_.store(t + 1, memory_order_relaxed);
        return x;
    }

    T* steal_until_empty() {
        for (;;) {
            T* x = nullptr;
            switch (steal(x)) {
            case steal_status::success: return x;
            case steal_status::empty: return nullptr;
            case steal_status::lost_race: break;
            }
        }
    }

    // Relaxed loads: a hint for idle workers (see the contract above). Loading
    // top first makes a result of 0 from the owner exact.
    std::int64_t size_hint() const {
        std::int64_t t = top_.load(memory_order_relaxed);
        std::int64_t b = bottom_.load(memory_order_relaxed);
        return b > t ? b - t : 0;
    }

    // Slots in the current array (tests and statistics; owner only).
    std::int64_t capacity() const { return array_.load(memory_order_relaxed)->mask + 1; }

private:
    // A circular array of 2^k slots, allocated in one block with its header.
    struct ring {
        std::int64_t mask;             // capacity - 1; capacity is a power of 2
        ring* next_retired = nullptr;  // owner only: the retired list
        explicit ring(std::int64_t m) : mask(m) {}
        atomic<T*>* slots() { return reinterpret_cast<atomic<T*>*>(this + 1); }
        atomic<T*>& slot(std::int64_t i) { return slots()[i & mask]; }

        static ring* make(std::int64_t capacity) {
            static_assert(sizeof(ring) % alignof(atomic<T*>) == 0);
            std::size_t bytes = sizeof(ring) + static_cast<std::size_t>(capacity) * sizeof(atomic<T*>);
            void* mem = ::operator new (bytes, std::align_val_t{64}, std::nothrow);
            if (mem == nullptr) {
                // The deque is called from scheduler callbacks, which cannot
                // fail: say what happened instead of a bare bad_alloc.
                std::fprintf(stderr, "weft: out of memory growing a work-stealing deque to %lld slots\n",
                             static_cast<long long>(capacity));
                std::abort();
            }
            ring* r = new (mem) ring(capacity - 1);
            for (std::int64_t i = 0; i < capacity; ++i) new (&r->slots()[i]) atomic<T*>(nullptr);
            return r;
        }
        static void destroy(ring* r) {
            // atomic<T*> is trivially destructible: nothing to run per slot.
            r->~ring();
            ::operator delete (static_cast<void*>(r), std::align_val_t{64});
        }
    };

    // Owner only: the array is full (bottom - top == capacity). Copies the
    // live items [t, b) into an array twice as large, at the same indices
    // modulo the new capacity, and publishes it with a release store (see
    // steal()). Thieves that still hold the old array read the same items
    // from it: the owner never writes to a retired array. Out of line and
    // cold: inlined, it would make push save six registers on every call.
    [[gnu::noinline, gnu::cold]] ring* grow(ring* old, std::int64_t t, std::int64_t b) {
        ring* a = ring::make((old->mask + 1) * 2);
        for (std::int64_t i = t; i < b; ++i)
            a->slot(i).store(old->slot(i).load(memory_order_relaxed), memory_order_relaxed);
        array_.store(a, memory_order_release);
        old->next_retired = retired_;
        retired_ = old;
        return a;
    }

    // Thieves CAS top; the owner reads it on every push and pop. Its own line,
    // so thieves hammering it do not evict bottom from the owner's cache.
    alignas(64) atomic<std::int64_t> top_{0};
    // Written by the owner (bottom on every push and pop, the array on growth),
    // read by thieves.
    alignas(64) atomic<std::int64_t> bottom_{0};
    atomic<ring*> array_{nullptr};
    ring* retired_ = nullptr;  // owner only
};

}  // namespace weft::detail
