#include "core/timer.hpp"

#include <cerrno>

#include "core/clock.hpp"
#include "core/wait.hpp"
#include "core/worker.hpp"

namespace weft::detail {

void timer_heap::sift_up(int i) {
    while (i > 0) {
        int parent = (i - 1) / 2;
        if (heap_[parent]->deadline <= heap_[i]->deadline) break;
        std::swap(heap_[parent], heap_[i]);
        heap_[parent]->heap_index = parent;
        heap_[i]->heap_index = i;
        i = parent;
    }
}

void timer_heap::sift_down(int i) {
    int n = static_cast<int>(heap_.size());
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && heap_[l]->deadline < heap_[m]->deadline) m = l;
        if (r < n && heap_[r]->deadline < heap_[m]->deadline) m = r;
        if (m == i) return;
        std::swap(heap_[m], heap_[i]);
        heap_[m]->heap_index = m;
        heap_[i]->heap_index = i;
        i = m;
    }
}

void timer_heap::remove_at(int i) {
    int last = static_cast<int>(heap_.size()) - 1;
    heap_[i]->heap_index = -1;
    if (i != last) {
        heap_[i] = heap_[last];
        heap_[i]->heap_index = i;
        heap_.pop_back();
        sift_up(i);
        sift_down(heap_[i]->heap_index);
    } else {
        heap_.pop_back();
    }
}

void timer_heap::publish_next() {
    count_.store(heap_.size(), memory_order_relaxed);
    next_.store(heap_.empty() ? INT64_MAX : heap_[0]->deadline, memory_order_release);
}

void timer_heap::arm(timer_entry* e) {
    e->state.store(0, memory_order_relaxed);
    bool earliest;
    {
        lock_guard<spinlock> g(lock_);
        heap_.push_back(e);
        e->heap_index = static_cast<int>(heap_.size()) - 1;
        sift_up(e->heap_index);
        earliest = heap_[0] == e;
        publish_next();
    }
    // A parked worker may be sleeping until a later deadline (or forever): wake
    // one so that someone parks with this deadline in mind. Whether a worker
    // spins does not matter here: the spinner may find work and run it
    // instead of parking with this deadline (core/sleep/README.md, "Timers").
    if (earliest) wake_one_parked();
}

void timer_heap::cancel(timer_entry* e) {
    {
        lock_guard<spinlock> g(lock_);
        if (e->heap_index >= 0) {
            remove_at(e->heap_index);
            publish_next();
            return;
        }
    }
    // Popped by fire_expired: wait until it no longer touches e.
    while (e->state.load(memory_order_acquire) == 1) cpu_relax();
}

int timer_heap::fire_expired(worker* w) {
    std::int64_t now = monotonic_ns();
    if (next_.load(memory_order_acquire) > now) return 0;
    timer_entry* batch[32];
    int n = 0;
    {
        lock_guard<spinlock> g(lock_);
        while (!heap_.empty() && heap_[0]->deadline <= now && n < 32) {
            timer_entry* e = heap_[0];
            remove_at(0);
            e->state.store(1, memory_order_relaxed);
            batch[n++] = e;
        }
        publish_next();
    }
    for (int i = 0; i < n; ++i) {
        timer_entry* e = batch[i];
        wait_record* rec = e->rec;
        bool won = false;
        spinlock_ref lk(*e->lock);
        lk.lock();
        if (rec->linked) {
            rec->unlink(rec);
            rec->linked = false;
            rec->result = ETIMEDOUT;
            won = true;
        }
        lk.unlock();
        if (won) wake_from(w, rec);
        e->state.store(2, memory_order_release);
    }
    fired_.fetch_add(static_cast<std::uint64_t>(n), memory_order_relaxed);
    return n;
}

}  // namespace weft::detail
