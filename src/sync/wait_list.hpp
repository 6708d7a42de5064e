// weft::detail — the FIFO of wait records every blocking primitive keeps in the
// head_/tail_ fields of its public struct. Guarded by the primitive's spinlock.
#pragma once

#include "core/wait.hpp"

namespace weft::detail {

class wait_list {
public:
    wait_list(void*& head, void*& tail) : head_(head), tail_(tail) {}

    bool empty() const { return head_ == nullptr; }
    wait_record* front() const { return static_cast<wait_record*>(head_); }

    // Links rec at the back; `owner` is the primitive (for unlink on timeout).
    void push_back(wait_record* rec, void* owner, void (*unlink)(wait_record*)) {
        rec->next = nullptr;
        rec->prev = static_cast<wait_record*>(tail_);
        if (tail_ != nullptr) static_cast<wait_record*>(tail_)->next = rec;
        else head_ = rec;
        tail_ = rec;
        rec->linked = true;
        rec->queue = owner;
        rec->unlink = unlink;
    }
    // Links rec at the front (a waiter that keeps its place after a retry).
    void push_front(wait_record* rec, void* owner, void (*unlink)(wait_record*)) {
        rec->prev = nullptr;
        rec->next = static_cast<wait_record*>(head_);
        if (head_ != nullptr) static_cast<wait_record*>(head_)->prev = rec;
        else tail_ = rec;
        head_ = rec;
        rec->linked = true;
        rec->queue = owner;
        rec->unlink = unlink;
    }
    wait_record* pop_front() {
        auto* rec = static_cast<wait_record*>(head_);
        if (rec != nullptr) remove(rec);
        return rec;
    }
    void remove(wait_record* rec) {
        if (rec->prev != nullptr) rec->prev->next = rec->next;
        else head_ = rec->next;
        if (rec->next != nullptr) rec->next->prev = rec->prev;
        else tail_ = rec->prev;
        rec->next = rec->prev = nullptr;
        rec->linked = false;
    }

private:
    void*& head_;
    void*& tail_;
};

// The identity of the caller as a lock owner: its ult, or for a kernel thread
// outside weft its tagged tid (outside_owner_id, core/outside.hpp).
void* owner_self();

}  // namespace weft::detail
