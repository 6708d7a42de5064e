#include "base/asymmetric_fence.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace weft::detail {

bool g_membarrier = false;

namespace {
long membarrier(int cmd) { return syscall(SYS_membarrier, cmd, 0, 0); }
}  // namespace

void init_asymmetric_fence() {
    if (g_membarrier) return;
    long cmds = membarrier(MEMBARRIER_CMD_QUERY);
    if (cmds < 0 || (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
    if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0) return;
    g_membarrier = true;
}

void heavy_fence() {
    if (g_membarrier && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
    fence_seq_cst();
}

}  // namespace weft::detail
