// weft::detail::fil — a participant's fork list (Lowenthal, Freeh & Andrews §3.2).
//
// "Newly forked filaments are put on the tail of a processor's local list ...
// other server threads, when idle, ... take filaments off of the list with the
// most filaments", from its front, where the largest units of work are
// (WorkCrews). The owner takes back from the tail (LIFO): see pop_tail_if.
//
// A ring of job pointers under a spinlock. Forks reach the list only when a
// worker is hungry, when the list is empty and keeps one job ready (keep_ready
// below), or during the initial tree distribution (pruning turns every other
// fork into a call), so the lock is taken a few times per steal, not per
// fork; a lock-free deque (Chase-Lev) would save ~10 ns on an operation that is
// already off the hot path, at the price of a much harder proof.
//
// Memory ordering: the lock orders every change of the ring. `size` is also
// written under the lock (relaxed store) and read without it by thieves
// choosing a victim and by sleepers looking for work: a stale value only makes
// them look at the wrong list once; the decision is re-taken under the lock.
// The sleep handshake (sleepers.hpp) adds the fences that make a push visible to
// a worker about to sleep.
#pragma once

#include <cstdint>

#include "base/primitives.hpp"
#include "core/tunables.hpp"
#include "weft/detail/filament_abi.hpp"
#include "weft/weft.h"

namespace weft::detail::fil {

class fj_list {
public:
    // size: where the length is published (the participant's hot prefix, read
    // by the inline pruning test).
    explicit fj_list(atomic<int>* size) : size_(*size) { size_.store(0, memory_order_relaxed); }
    fj_list(const fj_list&) = delete;
    fj_list& operator=(const fj_list&) = delete;

    int size() const { return size_.load(memory_order_relaxed); }

    // From now on (one fork/join region with more than one participant), an
    // empty list asks its owner for a job: the ready bias is in the owner's
    // hunger word exactly while the list is empty, so the owner's next join
    // fails the inline pruning test and forks (fork_job); when a thief empties
    // the list, the owner's fork_limit opens (any frame may refill it). Call
    // while no other thread uses the list.
    void keep_ready(weft_fil_self_t_* owner) {
        owner_ = owner;
        if (tail_ == head_) owner_->hungry.set(hunger_word::ready);
    }

    // Appends j at the tail. False if the ring is full (the caller prunes).
    bool push_tail(weft_fil_job_* j) {
        lock_guard<spinlock> g(lock_);
        if (tail_ - head_ == tun::fil_list_capacity) return false;
        ring_[tail_ & mask] = j;
        ++tail_;
        publish(false);
        return true;
    }

    // Removes and returns the tail if it is j (the owner taking back its own
    // fork in a join); null if j is gone (taken by another worker).
    bool pop_tail_if(weft_fil_job_* j) {
        lock_guard<spinlock> g(lock_);
        if (tail_ == head_ || ring_[(tail_ - 1) & mask] != j) return false;
        --tail_;
        publish(false);
        return true;
    }

    // Removes and returns the tail if its latch is l (a C parent taking back
    // one of its own children in weft_fil_join).
    weft_fil_job_* pop_tail_if_latch(weft_fil_latch_* l) {
        lock_guard<spinlock> g(lock_);
        if (tail_ == head_ || ring_[(tail_ - 1) & mask]->latch != l) return nullptr;
        --tail_;
        publish(false);
        return ring_[tail_ & mask];
    }

    // The owner's pick when it waits: the newest job (tree sends land here).
    weft_fil_job_* pop_tail() {
        lock_guard<spinlock> g(lock_);
        if (tail_ == head_) return nullptr;
        --tail_;
        publish(false);
        return ring_[tail_ & mask];
    }

    // A thief's pick: the oldest job, the biggest in a divide-and-conquer tree.
    weft_fil_job_* pop_head() {
        lock_guard<spinlock> g(lock_);
        if (tail_ == head_) return nullptr;
        weft_fil_job_* j = ring_[head_ & mask];
        ++head_;
        publish(true);
        return j;
    }

    // Removes the oldest job whose latch is l (a parent taking back a child
    // that nobody has started). O(size) under the lock; off the hot path.
    weft_fil_job_* remove_if_latch(weft_fil_latch_* l) {
        lock_guard<spinlock> g(lock_);
        for (unsigned k = head_; k != tail_; ++k) {
            weft_fil_job_* j = ring_[k & mask];
            if (j->latch != l) continue;
            for (unsigned m = k; m + 1 != tail_; ++m) ring_[m & mask] = ring_[(m + 1) & mask];
            --tail_;
            publish(true);
            return j;
        }
        return nullptr;
    }

private:
    // After a change (under the lock): the new length for readers, and, for a
    // list that keeps a job ready, the ready bias in or out of the owner's word
    // when the list became empty or stopped being empty. by_other: the change
    // was not the owner's own (a thief, a parent reclaiming its child).
    void publish(bool by_other) {
        const int n = static_cast<int>(tail_ - head_);
        const int was = size_.load(memory_order_relaxed);
        size_.store(n, memory_order_relaxed);
        if (owner_ == nullptr || (n == 0) == (was == 0)) return;
        if (n != 0) {
            owner_->hungry.clear(hunger_word::ready);
            return;
        }
        // The owner may be deep in pruned code: let its next join refill the
        // list wherever it is (the owner's own take-back sets its limit itself).
        if (by_other) owner_->fork_limit.store(0, memory_order_relaxed);
        owner_->hungry.set(hunger_word::ready);
    }

    static constexpr unsigned mask = tun::fil_list_capacity - 1;

    spinlock lock_;
    atomic<int>& size_;
    weft_fil_self_t_* owner_ = nullptr;  // set by keep_ready
    unsigned head_ = 0;  // guarded by lock_
    unsigned tail_ = 0;  // guarded by lock_
    weft_fil_job_* ring_[tun::fil_list_capacity];
};

}  // namespace weft::detail::fil
