// The set of kernel_threads.hpp: a fixed array with atomic slots (no lock, no
// allocation: it is used while the C library and the runtime start).
#include "shim/kernel_threads.hpp"

#include <atomic>

namespace weft::shim {
namespace {

constexpr pthread_t reserved = 1;  // never a glibc pthread_t (an address)
std::atomic<pthread_t> slots[kernel_threads_max];
// How many slots hold a created thread. Every pthread_join and pthread_detach
// asks forget_kernel_thread, and almost every program has no kernel thread
// recorded: this count answers them with one load instead of a locked
// compare-exchange per slot (64 of them cost more than weft's whole
// create+join). A thread is filled before its pthread_t reaches the program,
// so a join or detach of it finds the count raised.
std::atomic<int> filled{0};

}  // namespace

int reserve_kernel_thread() {
    for (int i = 0; i < kernel_threads_max; ++i) {
        pthread_t empty = 0;
        if (slots[i].compare_exchange_strong(empty, reserved, std::memory_order_acq_rel)) return i;
    }
    return -1;
}

void fill_kernel_thread(int slot, pthread_t t) {
    filled.fetch_add(1, std::memory_order_relaxed);
    slots[slot].store(t, std::memory_order_release);
}

void free_kernel_thread(int slot) { slots[slot].store(0, std::memory_order_release); }

bool forget_kernel_thread(pthread_t t) {
    if (t == 0 || t == reserved || filled.load(std::memory_order_acquire) == 0) return false;
    for (auto& s : slots) {
        pthread_t cur = t;
        if (s.load(std::memory_order_relaxed) == t && s.compare_exchange_strong(cur, 0, std::memory_order_acq_rel)) {
            filled.fetch_sub(1, std::memory_order_relaxed);
            return true;
        }
    }
    return false;
}

void forget_all_kernel_threads() {
    for (auto& s : slots) s.store(0, std::memory_order_relaxed);
}

}  // namespace weft::shim
