// weft-bench harness — CPU affinity: the allowed CPUs, pinning, confining.
#pragma once

#include <vector>

#include <pthread.h>
#include <sched.h>

namespace weft::bench {

// CPUs this thread may run on (its affinity mask), ascending.
std::vector<int> allowed_cpus();
// Restricts the calling kernel thread to one CPU. Returns 0 or an errno.
int pin_current_thread(int cpu) noexcept;
// A pthread attribute setting: the thread created with it runs on `cpu` only.
int pin_attr(pthread_attr_t* attr, int cpu) noexcept;

// Confines the calling kernel thread, and every thread and child process it
// starts afterwards (they inherit its mask), to the first `want` CPUs it may
// use; returns how many it now has (fewer than `want` when fewer are allowed).
// Call it before the experiment starts any thread. Dies if the kernel refuses.
int confine_to_cpus(int want);

// Saves the calling thread's affinity mask and restores it on destruction.
class affinity_guard {
public:
    affinity_guard() noexcept;
    ~affinity_guard();
    affinity_guard(affinity_guard const&) = delete;
    affinity_guard& operator=(affinity_guard const&) = delete;

private:
    cpu_set_t saved_{};
    bool ok_ = false;
};

}  // namespace weft::bench
