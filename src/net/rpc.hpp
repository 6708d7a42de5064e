// weft::detail::net — what RPC's parts share: the byte buffer that frames are
// built and received in, sending a reply, and the job's well-known services.
//
// Glossary (docs/design/rpc.md):
//   caller      a thread in weft_rpc_call; its reply port and buffers live in
//               a caller record, one per thread (rpc_call.cpp).
//   server      a port and the weft threads that serve it (rpc_server.cpp).
//   service     a server the job starts itself: the naming service on node 0
//               (names.cpp); and each node's barrier port (barrier.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "net/rpc_frame.hpp"
#include "weft/rpc.h"

namespace weft::detail::net {

struct job;

// A growable byte buffer that never zero-fills (a C handler's 64 KiB reply
// room is handed out for every call).
class byte_buffer {
public:
    unsigned char* data() { return p_.get(); }
    std::size_t capacity() const { return cap_; }
    // At least n bytes; false when memory is short (the contents are kept
    // only if no growth was needed).
    bool reserve(std::size_t n) {
        if (n <= cap_) return true;
        std::size_t c = cap_ < 256 ? 256 : cap_;
        while (c < n) c *= 2;
        unsigned char* q = new (std::nothrow) unsigned char[c];
        if (q == nullptr) return false;
        p_.reset(q);
        cap_ = c;
        return true;
    }

private:
    std::unique_ptr<unsigned char[]> p_;
    std::size_t cap_ = 0;
};

// Answers request rq with status and payload[0..len) (copied into buf's
// payload area unless it is there already). A reply that does not fit the
// caller's reply port is replaced by an EMSGSIZE reply; a caller that is gone
// (ENOENT, EPIPE) is ignored: the server keeps serving.
void send_reply(const frame& rq, int status, const void* payload, std::size_t len, byte_buffer& buf);
// send_reply with a formatted text payload.
void send_error(const frame& rq, int status, byte_buffer& buf, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

// The well-known ports of the running job.
weft_port_id_t barrier_port(std::uint32_t node);
weft_port_id_t names_port();
// Starts the job's services (weft_net_init, after the job is published):
// creates every node's barrier port and the naming service's port, in that
// order, and the naming server's thread. Stops them (weft_net_finalize,
// before the ports are freed): closes the naming port and joins its thread.
[[nodiscard]] int start_services(job& j);
void stop_services(job& j);
// Changes at every start_services: a caller's cached reply port belongs to
// the job whose serial it records.
std::uint64_t job_serial();

// Frees the calling thread's caller record (weft_net_finalize: the thread
// that ends a job, usually main, whose key destructors never run; other
// threads' records go at their exit). Its reply port goes with the job.
void release_caller();

// The naming server's loop (names.cpp) and the barrier's state (barrier.cpp).
void* names_server_main(void* arg);
[[nodiscard]] int barrier_setup(job& j);
void barrier_teardown();

}  // namespace weft::detail::net
