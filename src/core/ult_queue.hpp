// weft::detail — a queue of ready ults handed to workers outside the scheduling
// policy: a worker's inbox (ults pinned to that worker) and the runtime's
// inject queue (ults made ready by a kernel thread that is not a worker).
//
// FIFO, linked through ult::q_next under a spinlock. Any thread pushes; workers
// pop. `nonempty` lets a worker skip the lock while the queue is empty, which
// is nearly always: both queues are off the common path of the policy.
//
// Memory ordering: push links the ult and stores `nonempty` (release) under
// the lock, and the pusher then wakes the target (dispatch.cpp). pop loads
// `nonempty` with acquire before it takes the lock; a stale false only delays
// the ult until the next look, which the wake-up guarantees (the parked worker
// re-checks after announcing sleep: worker.cpp). maybe_nonempty is a relaxed
// hint for idle workers deciding whether to look at all.
#pragma once

#include <atomic>

#include "base/primitives.hpp"
#include "core/ult.hpp"

namespace weft::detail {

class ult_queue {
public:
    // Appends t (its q_next is overwritten).
    void push(ult* t) {
        lock_guard<spinlock> g(lock_);
        t->q_next = nullptr;
        if (tail_ != nullptr) tail_->q_next = t;
        else head_ = t;
        tail_ = t;
        nonempty_.store(true, memory_order_release);
    }

    // Removes and returns the oldest ult, or null.
    ult* pop() {
        if (!nonempty_.load(memory_order_acquire)) return nullptr;
        lock_guard<spinlock> g(lock_);
        ult* t = head_;
        if (t == nullptr) return nullptr;
        head_ = t->q_next;
        if (head_ == nullptr) {
            tail_ = nullptr;
            nonempty_.store(false, memory_order_relaxed);
        }
        t->q_next = nullptr;
        return t;
    }

    // A hint: false may be stale only while a push races with it.
    bool maybe_nonempty(std::memory_order o = memory_order_relaxed) const { return nonempty_.load(o); }

private:
    spinlock lock_;
    ult* head_ = nullptr;  // guarded by lock_
    ult* tail_ = nullptr;  // guarded by lock_
    atomic<bool> nonempty_{false};
};

}  // namespace weft::detail
