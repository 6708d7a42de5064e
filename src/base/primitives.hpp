// weft::detail — the one indirection for atomics, fences and the internal spinlock.
//
// Every atomic in the runtime goes through these aliases (tokio's `loom::sync`,
// rayon's `crate::sync`) so that a model checker can swap them in one place.
#pragma once

#include <atomic>
#include <cstdint>

#include "base/asymmetric_fence.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace weft::detail {

template <class T> using atomic = std::atomic<T>;
template <class T> using atomic_ref = std::atomic_ref<T>;
using std::memory_order_relaxed;
using std::memory_order_acquire;
using std::memory_order_release;
using std::memory_order_acq_rel;
using std::memory_order_seq_cst;

// One iteration of a spin-wait: tells the core we are spinning.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#else
    asm volatile("" ::: "memory");
#endif
}

// The spinlock census: how many spinlocks each kernel thread holds, so that
// fork() can copy the process at a moment when none is held (base/fork_gate.hpp).
// A spinlock held by another kernel thread when the process is copied would
// stay held in the child, where that thread does not exist: the child's first
// use of the object (a pthread_atfork child handler unlocking a mutex) would
// spin forever.
//
// A worker's count lives in the worker, reached through t_spin_census, which
// the core sets on each worker's kernel thread and in every thread-local block
// a ult brings (core/thread_pointer.hpp): a spinlock taken on a worker is
// released on that worker, though perhaps by the next ult after a switch
// (worker::pending_lock). A kernel thread outside the workers counts in
// t_outside_held and, while it holds any, in g_outside_holding.
struct spin_census {
    atomic<std::uint32_t> held{0};  // written only by the worker's own kernel thread
};
[[gnu::tls_model("initial-exec")]] extern thread_local spin_census* t_spin_census;
[[gnu::tls_model("initial-exec")]] extern thread_local std::uint32_t t_outside_held;
extern atomic<std::uint32_t> g_outside_holding;
// Non-null while fork() is being prepared: the forking thread's identity
// (its census, or its t_outside_held), the one thread that may take spinlocks.
extern atomic<const void*> g_fork_gate;

// Called with the caller's first spinlock counted, when the gate is closed:
// uncounts it, waits for the gate to open (unless the caller is the forking
// thread), and counts it again.
void wait_at_fork_gate();

// Counts a spinlock the caller is about to take. Store-buffering handshake
// with close_fork_gate: the holder stores its count, then loads the gate; the
// forker stores the gate, then loads every count (light_fence here against
// heavy_fence there).
inline void spin_census_enter() {
    if (spin_census* c = t_spin_census; c != nullptr) [[likely]] {
        std::uint32_t held = c->held.load(memory_order_relaxed);
        c->held.store(held + 1, memory_order_relaxed);
        if (held != 0) return;
        light_fence();
        if (g_fork_gate.load(memory_order_relaxed) != nullptr) [[unlikely]]
            wait_at_fork_gate();
    } else if (t_outside_held++ == 0) {
        g_outside_holding.fetch_add(1, memory_order_seq_cst);
        if (g_fork_gate.load(memory_order_seq_cst) != nullptr) [[unlikely]]
            wait_at_fork_gate();
    }
}

// Uncounts a spinlock the caller has released (release: a forker that sees
// the count drop sees the lock word free).
inline void spin_census_leave() {
    if (spin_census* c = t_spin_census; c != nullptr) [[likely]]
        c->held.store(c->held.load(memory_order_relaxed) - 1, memory_order_release);
    else if (--t_outside_held == 0)
        g_outside_holding.fetch_sub(1, memory_order_release);
}

// A test-and-test-and-set spinlock over a 32-bit word that may live inside a
// public C struct (weft_mutex_t::lock_ and friends), hence atomic_ref.
//
// It guards only short internal critical sections (a wait-queue splice, a state
// word); it never spans a context switch except as a post-switch release (see
// worker::pending_lock, released in core/dispatch.cpp), so holders never
// block. Every hold is counted in the spin census above, for fork().
//
// Memory ordering: acquire on lock, release on unlock: the usual critical-section
// contract; the relaxed load in the spin loop only decides when to retry the
// exchange, which carries the acquire.
class spinlock_ref {
public:
    explicit spinlock_ref(std::uint32_t& word) : word_(word) {}
    void lock() {
        spin_census_enter();
        atomic_ref<std::uint32_t> w(word_);
        while (w.exchange(1, memory_order_acquire) != 0) {
            do {
                cpu_relax();
            } while (w.load(memory_order_relaxed) != 0);
        }
    }
    bool try_lock() {
        atomic_ref<std::uint32_t> w(word_);
        if (w.load(memory_order_relaxed) != 0) return false;
        spin_census_enter();
        if (w.exchange(1, memory_order_acquire) == 0) return true;
        spin_census_leave();
        return false;
    }
    void unlock() {
        atomic_ref<std::uint32_t>(word_).store(0, memory_order_release);
        spin_census_leave();
    }
    std::uint32_t* word() const { return &word_; }

private:
    std::uint32_t& word_;
};

// A spinlock that owns its word.
class spinlock {
public:
    void lock() { spinlock_ref(word_).lock(); }
    bool try_lock() { return spinlock_ref(word_).try_lock(); }
    void unlock() { spinlock_ref(word_).unlock(); }
    std::uint32_t* word() { return &word_; }

private:
    alignas(4) std::uint32_t word_ = 0;
};

template <class L> class lock_guard {
public:
    explicit lock_guard(L& l) : l_(l) { l_.lock(); }
    ~lock_guard() { l_.unlock(); }
    lock_guard(const lock_guard&) = delete;
    lock_guard& operator=(const lock_guard&) = delete;

private:
    L& l_;
};

}  // namespace weft::detail
