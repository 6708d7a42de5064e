#include "io_placement.hpp"

#include <cerrno>
#include <cstring>

#include "harness.hpp"

namespace weft::bench::io {

namespace {
int g_client_cpu = -1;
}  // namespace

int client_cpu() { return g_client_cpu; }

placement::placement(int workers) {
    cpu_set_t mine;
    CPU_ZERO(&mine);
    if (workers < 0 || sched_getaffinity(0, sizeof mine, &mine) != 0 || CPU_COUNT(&mine) < workers + 1) return;
    CPU_ZERO(&server_);
    int given = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (!CPU_ISSET(cpu, &mine)) continue;
        if (given < workers) {
            CPU_SET(cpu, &server_);
            ++given;
        } else {
            client_cpu_ = cpu;  // the last allowed CPU
        }
    }
    pinned_ = true;
}

placement::scope::scope(const placement& p) : active_(p.pinned_) {
    if (!active_) return;
    if (sched_getaffinity(0, sizeof saved_, &saved_) != 0 || sched_setaffinity(0, sizeof p.server_, &p.server_) != 0)
        die("io: cannot pin the server to its CPUs: %s", std::strerror(errno));
    g_client_cpu = p.client_cpu_;
}

placement::scope::~scope() {
    if (!active_) return;
    g_client_cpu = -1;
    (void)sched_setaffinity(0, sizeof saved_, &saved_);
}

}  // namespace weft::bench::io
