// Kernel threads the shim created with glibc's pthread_create: those asked for
// before weft's runtime was up (a library's constructor that runs before the
// shim's starts a thread). Their pthread_t is glibc's, so join and detach must
// go to glibc for them; this small set remembers which they are.
#pragma once

#include <pthread.h>

namespace weft::shim {

inline constexpr int kernel_threads_max = 64;

// A slot for a thread about to be created, or -1 if all kernel_threads_max
// are taken. Then either fill_kernel_thread (created) or free_kernel_thread.
int reserve_kernel_thread();
void fill_kernel_thread(int slot, pthread_t t);
void free_kernel_thread(int slot);
// Forgets t and returns true if it was recorded.
bool forget_kernel_thread(pthread_t t);
// Forgets every one (the child of fork(): they do not exist there).
void forget_all_kernel_threads();

}  // namespace weft::shim
