// weft::detail — the timer facility behind timed waits and weft_sleep.
//
// One min-heap of deadlines for the whole runtime, under a spinlock. Workers
// service it: a worker that picks its next ult fires expired timers first (a
// relaxed load when none are armed, a clock read when some are), and an idle
// worker parks no longer than the earliest deadline. So a timer is late by at
// most the time a busy worker runs without a scheduling point, as in any
// cooperative scheduler.
//
// Cancel/fire race: fire pops the entry under the heap lock and marks it
// `firing`; cancel removes it if it is still in the heap, otherwise waits until
// the fire is `done`, so the waiter may reuse the entry's memory (its frame)
// as soon as cancel returns.
#pragma once

#include <cstdint>
#include <vector>

#include "base/primitives.hpp"

namespace weft::detail {

struct wait_record;
struct worker;

struct timer_entry {
    std::int64_t deadline = 0;            // CLOCK_MONOTONIC ns
    wait_record* rec = nullptr;
    std::uint32_t* lock = nullptr;        // the lock guarding rec's queue
    int heap_index = -1;                  // guarded by the heap lock
    atomic<int> state{0};                 // 0 armed/idle, 1 firing, 2 done
};

class timer_heap {
public:
    bool pending() const { return count_.load(memory_order_relaxed) != 0; }
    // Earliest deadline, or INT64_MAX when none is armed.
    std::int64_t next_deadline() const { return next_.load(memory_order_acquire); }
    void arm(timer_entry* e);
    void cancel(timer_entry* e);
    // Fires every entry whose deadline has passed; returns how many.
    int fire_expired(worker* w);
    std::uint64_t fired() const { return fired_.load(memory_order_relaxed); }
    void reset_stats() { fired_.store(0, memory_order_relaxed); }

private:
    void sift_up(int i);
    void sift_down(int i);
    void remove_at(int i);
    void publish_next();

    spinlock lock_;
    std::vector<timer_entry*> heap_;
    atomic<std::size_t> count_{0};
    atomic<std::int64_t> next_{INT64_MAX};
    atomic<std::uint64_t> fired_{0};
};

}  // namespace weft::detail
