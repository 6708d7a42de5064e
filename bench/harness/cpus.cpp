// weft-bench harness — CPU affinity: the allowed CPUs, pinning, confining (harness/cpus.hpp).
#include "harness/cpus.hpp"

#include <cerrno>
#include <cstring>

#include "harness/failure.hpp"

namespace weft::bench {

std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> out;
    if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) != 0) return out;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) out.push_back(c);
    return out;
}

int pin_current_thread(int cpu) noexcept {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

int pin_attr(pthread_attr_t* attr, int cpu) noexcept {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_attr_setaffinity_np(attr, sizeof set, &set);
}

int confine_to_cpus(int want) {
    std::vector<int> const cpus = allowed_cpus();
    cpu_set_t set;
    CPU_ZERO(&set);
    int n = 0;
    for (int c : cpus) {
        if (n == want) break;
        CPU_SET(c, &set);
        ++n;
    }
    if (n > 0 && sched_setaffinity(0, sizeof set, &set) != 0) die("sched_setaffinity: %s", std::strerror(errno));
    return n;
}

affinity_guard::affinity_guard() noexcept {
    CPU_ZERO(&saved_);
    ok_ = pthread_getaffinity_np(pthread_self(), sizeof saved_, &saved_) == 0;
}

affinity_guard::~affinity_guard() {
    if (ok_) pthread_setaffinity_np(pthread_self(), sizeof saved_, &saved_);
}

}  // namespace weft::bench
