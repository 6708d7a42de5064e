// weft-bench io: where the client and the server run (io_echo.hpp).
//
// The client costs about as much CPU per request as a server does (an epoll
// loop's send, wait and receive per request). Left to float, it takes its
// CPU time from whatever the server could use, and a ratio of two servers'
// rates measures the client's share as well. When the process may use
// `workers` + 1 CPUs, the client gets the last of them to itself and every
// server thread (weft's workers, glibc's threads, Asio's loop threads, the Go
// process) the first `workers`, the same for every design; with fewer CPUs
// both float, and the rows say so (client_pinned).
#pragma once

#include <sched.h>

namespace weft::bench::io {

class placement {
public:
    // Decides from the calling thread's CPU mask.
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
