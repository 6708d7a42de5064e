// weft::detail — the one indirection for atomics, fences and the internal spinlock.
//
// Every atomic in the runtime goes through these aliases (tokio's `loom::sync`,
// rayon's `crate::sync`) so that a model checker can swap them in one place.
#pragma once

#include <atomic>
#include <cstdint>

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

inline void fence_seq_cst() { std::atomic_thread_fence(std::memory_order_seq_cst); }

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

// A test-and-test-and-set spinlock over a 32-bit word that may live inside a
// public C struct (weft_mutex_t::lock_ and friends), hence atomic_ref.
//
// It guards only short internal critical sections (a wait-queue splice, a state
// word); it never spans a context switch except as a post-switch release (see
// worker::after_switch), so holders never block.
//
// Memory ordering: acquire on lock, release on unlock: the usual critical-section
// contract; the relaxed load in the spin loop only decides when to retry the
// exchange, which carries the acquire.
class spinlock_ref {
public:
    explicit spinlock_ref(std::uint32_t& word) : word_(word) {}
    void lock() {
        atomic_ref<std::uint32_t> w(word_);
        while (w.exchange(1, memory_order_acquire) != 0) {
            do {
                cpu_relax();
            } while (w.load(memory_order_relaxed) != 0);
        }
    }
    bool try_lock() {
        atomic_ref<std::uint32_t> w(word_);
        return w.load(memory_order_relaxed) == 0 && w.exchange(1, memory_order_acquire) == 0;
    }
    void unlock() { atomic_ref<std::uint32_t>(word_).store(0, memory_order_release); }
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
