// Spinlocks: the int itself, taken with an atomic exchange. A waiter spins
// briefly, then yields (weft_thread_yield: other weft threads of its worker,
// the holder perhaps, run; on a kernel thread that is not a weft thread it is
// sched_yield). A spinlock works across processes as it is, so
// PTHREAD_PROCESS_SHARED is accepted.
#include <atomic>
#include <cerrno>

#include "shim/shim.hpp"

using namespace weft::shim;

namespace {

std::atomic_ref<int> word(pthread_spinlock_t* s) { return std::atomic_ref<int>(*const_cast<int*>(s)); }

constexpr int spins_before_yield = 64;

}  // namespace

extern "C" {

int pthread_spin_init(pthread_spinlock_t* s, int pshared) {
    if (s == nullptr || (pshared != PTHREAD_PROCESS_PRIVATE && pshared != PTHREAD_PROCESS_SHARED)) return EINVAL;
    word(s).store(0, std::memory_order_release);
    return 0;
}

int pthread_spin_destroy(pthread_spinlock_t* s) { return s == nullptr ? EINVAL : 0; }

int pthread_spin_lock(pthread_spinlock_t* s) {
    if (s == nullptr) return EINVAL;
    auto w = word(s);
    for (;;) {
        if (w.exchange(1, std::memory_order_acquire) == 0) return 0;
        for (int i = 0; i < spins_before_yield && w.load(std::memory_order_relaxed) != 0; ++i) {
#if defined(__x86_64__)
            __builtin_ia32_pause();
#elif defined(__aarch64__)
            asm volatile("yield");
#endif
        }
        if (w.load(std::memory_order_relaxed) != 0) {
            errno_keeper keep;
            weft_thread_yield();
        }
    }
}

int pthread_spin_trylock(pthread_spinlock_t* s) {
    if (s == nullptr) return EINVAL;
    return word(s).exchange(1, std::memory_order_acquire) == 0 ? 0 : EBUSY;
}

int pthread_spin_unlock(pthread_spinlock_t* s) {
    if (s == nullptr) return EINVAL;
    word(s).store(0, std::memory_order_release);
    return 0;
}

}  // extern "C"
