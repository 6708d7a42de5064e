// The C API of message passing (include/weft/weft.h, "Message passing"): checks
// its arguments, finds the job and the caller's node, and calls port.cpp or
// the transport.
#include <cerrno>
#include <cstdlib>
#include <new>

#include "core/ult.hpp"
#include "core/wait.hpp"
#include "net/port.hpp"

namespace weft::detail::net {
namespace {

std::uint32_t self_node(const job& j) {
    if (j.home >= 0) return std::uint32_t(j.home);  // mpi: every thread of this process is on its rank
    ult* u = current_ult();
    return u != nullptr ? u->node : 0;
}

}  // namespace

std::uint64_t sender_token() {
    ult* u = current_ult();
    return u != nullptr ? u->id + 1 : 0;
}

namespace {

struct spawn_args {
    void* (*fn)(void*);
    void* arg;
    std::uint32_t node;
};

void* spawn_entry(void* a) {
    spawn_args args = *static_cast<spawn_args*>(a);
    std::free(a);
    current_ult()->node = args.node;
    return args.fn(args.arg);
}

}  // namespace

bool bad_timeout(std::int64_t timeout_ns) { return timeout_ns < 0 && timeout_ns != WEFT_NET_FOREVER; }

}  // namespace weft::detail::net

using namespace weft::detail;
using namespace weft::detail::net;

extern "C" {

WEFT_API int weft_net_num_nodes(void) {
    job* j = current_job();
    return j != nullptr ? int(j->nodes) : 0;
}

WEFT_API const char* weft_net_transport(void) {
    job* j = current_job();
    return j != nullptr ? j->tp->name() : nullptr;
}

WEFT_API int weft_net_self_node(void) {
    job* j = current_job();
    return j != nullptr ? int(self_node(*j)) : -1;
}

WEFT_API int weft_net_spawn(weft_thread_t* t, int node, const weft_attr_t* attr, void* (*fn)(void*), void* arg) {
    job* j = current_job();
    if (j == nullptr) return ENOTCONN;
    if (t == nullptr || fn == nullptr || node < 0 || std::uint32_t(node) >= j->nodes) return EINVAL;
    if (j->home >= 0 && node != j->home) return EINVAL;  // mpi: a process runs only its own rank's node
    auto* a = static_cast<spawn_args*>(std::malloc(sizeof(spawn_args)));
    if (a == nullptr) return ENOMEM;
    *a = spawn_args{fn, arg, std::uint32_t(node)};
    int rc = weft_thread_create(t, attr, &spawn_entry, a);
    if (rc != 0) std::free(a);
    return rc;
}

WEFT_API int weft_net_port_create(weft_port_id_t* id, size_t max_msgs, size_t max_bytes) {
    job* j = current_job();
    if (j == nullptr) return ENOTCONN;
    if (id == nullptr || max_msgs == 0 || max_bytes == 0 || max_bytes > WEFT_NET_PORT_MAX_BYTES) return EINVAL;
    return port_create(*j, self_node(*j), max_msgs, max_bytes, id);
}

WEFT_API int weft_net_port_destroy(weft_port_id_t id) {
    job* j = current_job();
    if (j == nullptr) return ENOTCONN;
    return port_destroy(*j, self_node(*j), id);
}

WEFT_API int weft_net_port_close(weft_port_id_t id) {
    job* j = current_job();
    if (j == nullptr) return ENOTCONN;
    return port_close(*j, self_node(*j), id);
}

WEFT_API int weft_net_send(weft_port_id_t to, int32_t tag, const void* buf, size_t len) {
    job* j = current_job();
    if (j == nullptr) return ENOTCONN;
    if (buf == nullptr && len != 0) return EINVAL;
    msg_header h;
    h.tag = tag;
    ult* u = current_ult();
    h.source = j->home >= 0 ? std::uint32_t(j->home) : u != nullptr ? u->node : 0;  // self_node, with u
    h.sender = u != nullptr ? u->id + 1 : 0;                                         // sender_token, with u
    if (to.node == h.source) return port_put(*j, to, h, buf, len);
    if (to.node >= j->nodes) return ENOENT;
    return j->tp->send(to, h, buf, len);
}

WEFT_API int weft_net_recv(weft_port_id_t port, void* buf, size_t cap, weft_net_status_t* st, int64_t timeout_ns) {
    job* j = current_job();
    if (j == nullptr) return ENOTCONN;
    if ((buf == nullptr && cap != 0) || bad_timeout(timeout_ns)) return EINVAL;
    weft_net_status_t local;
    return port_recv(*j, self_node(*j), &port, 1, buf, cap, st != nullptr ? st : &local, timeout_ns, false);
}

WEFT_API int weft_net_try_recv(weft_port_id_t port, void* buf, size_t cap, weft_net_status_t* st) {
    job* j = current_job();
    if (j == nullptr) return ENOTCONN;
    if (buf == nullptr && cap != 0) return EINVAL;
    weft_net_status_t local;
    return port_recv(*j, self_node(*j), &port, 1, buf, cap, st != nullptr ? st : &local, 0, true);
}

WEFT_API int weft_net_recv_any(const weft_port_id_t* ports, size_t n, void* buf, size_t cap, weft_net_status_t* st,
                               int64_t timeout_ns) {
    job* j = current_job();
    if (j == nullptr) return ENOTCONN;
    if (ports == nullptr || st == nullptr || n == 0 || n > WEFT_NET_RECV_ANY_MAX || (buf == nullptr && cap != 0) ||
        bad_timeout(timeout_ns))
        return EINVAL;
    return port_recv(*j, self_node(*j), ports, n, buf, cap, st, timeout_ns, false);
}

}  // extern "C"
