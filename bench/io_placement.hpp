// weft-bench io: where the client and the server run (io_echo.hpp).
//
// The client costs about as much CPU per request as a server does (an epoll
// loop's send, wait and receive per request). Left to float, it takes its
// CPU time from whatever the server could use, and a ratio of two servers'
// rates measures the client's share as well. Asked for (--pin-client), and
// when the process may use `workers` + 1 CPUs, the client gets the last of
// them to itself and every server thread (weft's workers, glibc's threads,
// Asio's loop threads, the Go process) the first `workers`, the same for
// every design; else both float, and the rows say which (client_pinned).
// Not the default: every reply then wakes a thread across CPUs, which on a
// virtual machine whose idle vCPU the hypervisor deschedules costs a design
// that wakes one thread per request (glibc's) far more than one that wakes a
// loop per batch (docs/bench.md).
#pragma once

#include <sched.h>

namespace weft::bench::io {

class placement {
public:
    // Decides from the calling thread's CPU mask; workers < 0: never pins.
    explicit placement(int workers);
    bool pinned() const { return pinned_; }

    // While alive, the calling thread (and every thread or process it starts)
    // runs on the server's CPUs, and a client started meanwhile pins itself
    // to the client's CPU; nothing when not pinned.
    class scope {
    public:
        explicit scope(const placement& p);
        ~scope();
        scope(const scope&) = delete;
        scope& operator=(const scope&) = delete;

    private:
        bool active_;
        cpu_set_t saved_{};
    };

private:
    bool pinned_ = false;
    int client_cpu_ = -1;
    cpu_set_t server_{};
};

// The CPU the client started now pins itself to (-1: none); set by a scope.
int client_cpu();

}  // namespace weft::bench::io
