// weft-bench micro: what weft/io.h adds to a system call that does not block
// (docs/design/syscalls.md). Figures:
//   syscall_ready_read_ns   weft_read of one byte from a pipe that holds data,
//                           on the main weft thread
//   plain_ready_read_ns     read(2) of one byte from such a pipe on a kernel
//                           thread outside weft
// Only the reads are timed: the pipe is filled (untimed) between batches.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <weft/io.h>

#include "micro.hpp"

namespace weft::bench::micro {
namespace {

constexpr std::uint64_t batch = 32 * 1024;  // bytes per fill: half a default pipe

// Reads `iters` single bytes with read_one, refilling the pipe between
// batches; returns the time of the reads alone.
template <class Read>
op_result ready_reads(std::uint64_t iters, Read read_one, const char* what) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) die("%s: pipe2 failed", what);
    std::vector<char> fill(batch, 'r');
    double ns = 0;
    std::uint64_t done = 0;
    std::string warning;
    while (done < iters) {
        std::uint64_t n = std::min(batch, iters - done);
        if (write(p[1], fill.data(), n) != static_cast<ssize_t>(n)) die("%s: filling the pipe failed", what);
        std::uint64_t t0 = now_ns();
        for (std::uint64_t i = 0; i < n; ++i) {
            char c;
            if (read_one(p[0], &c) != 1 || c != 'r') warning = std::string(what) + ": a read did not return its byte";
        }
        ns += double(now_ns() - t0);
        done += n;
    }
    close(p[0]);
    close(p[1]);
    return op_result{ns, iters, warning};
}

op_result syscall_ready_read(std::uint64_t iters, int) {
    return ready_reads(
        iters, [](int fd, char* c) { return weft_read(fd, c, 1); }, "syscall_ready_read");
}

// On a kernel thread outside weft: the plain call, as a program without weft makes it.
op_result plain_ready_read(std::uint64_t iters, int) {
    op_result r;
    std::thread t([&] {
        r = ready_reads(
            iters, [](int fd, char* c) { return read(fd, c, 1); }, "plain_ready_read");
    });
    t.join();
    return r;
}

struct register_syscall_ops {
    register_syscall_ops() {
        op_registrar{micro_op{.id = "syscall_ready_read",
                              .kind = "ready_read",
                              .family = "weft",
                              .unit = "1-byte read",
                              .order = 8,
                              .run = &syscall_ready_read}};
        op_registrar{micro_op{.id = "plain_ready_read",
                              .kind = "ready_read",
                              .family = "plain",
                              .unit = "1-byte read",
                              .order = 8,
                              .run = &plain_ready_read}};
    }
} const syscall_ops;

}  // namespace
}  // namespace weft::bench::micro
