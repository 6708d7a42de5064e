// weft::detail — one lock-protected list of ready ults shared by all workers:
// the structure of the fifo and lifo policies (Narlikar & Blelloch's Solaris baselines).
//
// Memory ordering: the spinlock orders all list accesses; `size_` is also read
// without the lock by idle workers (has_work), where a stale value only delays
// or repeats a look, never loses work (the parking protocol re-checks).
//
// With one worker the lock is skipped: the policy contract says its callbacks
// run only on workers (external kernel threads go through the core's inject
// queue), so with a single worker every access comes from the same kernel
// thread, in program order. That saves the one locked instruction of a yield
// and two of a spawn+join (measured: docs/results.md, "Measurements behind
// the design notes", "core.md: what the hot path's choices are worth").
#pragma once

#include "base/primitives.hpp"
#include "core/ult.hpp"

namespace weft::detail {

class alignas(64) global_queue {
    // Takes the lock only if several workers share the queue.
    struct guard {
        explicit guard(global_queue& q) : lock_(q.shared_ ? &q.lock_ : nullptr) {
            if (lock_ != nullptr) lock_->lock();
        }
        ~guard() {
            if (lock_ != nullptr) lock_->unlock();
        }
        guard(const guard&) = delete;
        guard& operator=(const guard&) = delete;
        spinlock* lock_;
    };

public:
    explicit global_queue(int workers) : shared_(workers > 1) {}

    void push_back(ult* t) {
        guard g(*this);
        t->q_next = nullptr;
        t->q_prev = tail_;
        if (tail_ != nullptr) tail_->q_next = t;
        else head_ = t;
        tail_ = t;
        size_.store(size_.load(memory_order_relaxed) + 1, memory_order_relaxed);
    }
    void push_front(ult* t) {
        guard g(*this);
        t->q_prev = nullptr;
        t->q_next = head_;
        if (head_ != nullptr) head_->q_prev = t;
        else tail_ = t;
        head_ = t;
        size_.store(size_.load(memory_order_relaxed) + 1, memory_order_relaxed);
    }
    ult* pop_front() {
        if (size_.load(memory_order_relaxed) == 0) return nullptr;
        guard g(*this);
        ult* t = head_;
        if (t == nullptr) return nullptr;
        head_ = t->q_next;
        if (head_ != nullptr) head_->q_prev = nullptr;
        else tail_ = nullptr;
        t->q_next = t->q_prev = nullptr;
        size_.store(size_.load(memory_order_relaxed) - 1, memory_order_relaxed);
        return t;
    }
    // Yield in one critical section: t goes to the back, the front comes out;
    // t itself if the queue is empty.
    ult* swap_back_front(ult* t) {
        if (size_.load(memory_order_relaxed) == 0) return t;
        guard g(*this);
        ult* front = head_;
        if (front == nullptr) return t;
        head_ = front->q_next;
        t->q_next = nullptr;
        t->q_prev = nullptr;
        if (head_ != nullptr) {
            head_->q_prev = nullptr;
            t->q_prev = tail_;
            tail_->q_next = t;
        } else {
            head_ = t;
        }
        tail_ = t;
        front->q_next = front->q_prev = nullptr;
        return front;
    }
    bool maybe_nonempty() const { return size_.load(memory_order_relaxed) != 0; }

private:
    const bool shared_;
    spinlock lock_;
    ult* head_ = nullptr;
    ult* tail_ = nullptr;
    atomic<std::size_t> size_{0};
};

}  // namespace weft::detail
