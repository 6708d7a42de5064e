// The calling side of RPC: a caller record per thread (its reply port, the
// next call ID, its buffers), and weft_rpc_call / weft_rpc_call_typed.
//
// A call: (1) take the thread's caller record, creating its reply port on
// the thread's first call of this job; (2) build the request frame (header
// and arguments, one buffer) with a fresh call ID and send it to the server's
// port; (3) receive on the reply port until the reply with that call ID
// comes, dropping older replies (those of calls that timed out); (4) check
// the reply's frame and signature and hand back its status and payload.
// The reply port is the caller's alone, so a receive there never competes
// with another thread; it is destroyed by the thread-key destructor when the
// thread exits, or with every port when the job ends.
#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>

#include "base/primitives.hpp"
#include "core/tunables.hpp"
#include "core/wait.hpp"
#include "net/peer_wait.hpp"
#include "net/port.hpp"
#include "net/rpc.hpp"

namespace weft::detail::net {
namespace {

constexpr std::size_t kReplyPortBytes = tun::rpc_reply_port_msgs * (kFrameHeader + WEFT_RPC_MAX_PAYLOAD);

struct caller {
    std::uint64_t serial = 0;  // the job the reply port belongs to (job_serial)
    weft_port_id_t reply{};
    std::uint64_t next_call = 0;
    byte_buffer out;           // the request frame
    byte_buffer in;            // the reply frame
};

weft_key_t g_key;
std::once_flag g_key_once;
int g_key_rc = 0;
atomic<bool> g_key_made{false};  // g_key is valid (release_caller may run before any call)

void caller_exit(void* v) {
    auto* c = static_cast<caller*>(v);
    if (c->serial != 0 && c->serial == job_serial()) (void)weft_net_port_destroy(c->reply);
    delete c;
}

// The calling thread's record, with a reply port of the running job.
int get_caller(caller** out) {
    std::call_once(g_key_once, [] {
        g_key_rc = weft_key_create(&g_key, &caller_exit);
        g_key_made.store(g_key_rc == 0, memory_order_release);
    });
    if (g_key_rc != 0) return g_key_rc;
    auto* c = static_cast<caller*>(weft_getspecific(g_key));
    if (c == nullptr) {
        c = new (std::nothrow) caller;
        if (c == nullptr) return ENOMEM;
        if (int rc = weft_setspecific(g_key, c); rc != 0) {
            delete c;
            return rc;
        }
    }
    std::uint64_t serial = job_serial();
    if (c->serial != serial) {
        // First call of this thread in this job (the ports of an earlier job
        // went with it).
        if (int rc = weft_net_port_create(&c->reply, tun::rpc_reply_port_msgs, kReplyPortBytes); rc != 0) return rc;
        c->serial = serial;
    }
    *out = c;
    return 0;
}

}  // namespace

void release_caller() {
    if (!g_key_made.load(memory_order_acquire)) return;
    auto* c = static_cast<caller*>(weft_getspecific(g_key));
    if (c == nullptr) return;
    delete c;
    (void)weft_setspecific(g_key, nullptr);
}

}  // namespace weft::detail::net

using namespace weft::detail;
using namespace weft::detail::net;

extern "C" {

WEFT_API int weft_rpc_call_typed(weft_port_id_t port, int fn_id, uint64_t sig, const void* in, size_t in_len,
                                 int64_t timeout_ns, weft_rpc_result_t* res) {
    if (current_job() == nullptr) return ENOTCONN;
    if (res == nullptr || fn_id < 0 || (in == nullptr && in_len != 0) || in_len > WEFT_RPC_MAX_PAYLOAD ||
        bad_timeout(timeout_ns))
        return EINVAL;
    *res = weft_rpc_result_t{nullptr, 0};
    caller* c = nullptr;
    if (int rc = get_caller(&c); rc != 0) return rc;

    // 1. The request.
    if (!c->out.reserve(kFrameHeader + in_len)) return ENOMEM;
    frame rq;
    rq.kind = frame_kind::request;
    rq.fn_id = std::uint32_t(fn_id);
    rq.sig = sig;
    rq.call_id = ++c->next_call;
    rq.reply_to = c->reply;
    rq.payload_len = std::uint32_t(in_len);
    encode_header(rq, c->out.data());
    if (in_len != 0) std::memcpy(c->out.data() + kFrameHeader, in, in_len);
    if (int rc = weft_net_send(port, fn_id, c->out.data(), kFrameHeader + in_len); rc != 0) return rc;

    // 2. Its reply.
    std::int64_t deadline = timeout_ns > 0 ? monotonic_ns() + timeout_ns : 0;
    if (!c->in.reserve(kFrameHeader + 256)) return ENOMEM;
    for (;;) {
        std::int64_t wait_ns = timeout_ns;
        if (deadline != 0) {
            wait_ns = deadline - monotonic_ns();
            if (wait_ns <= 0) return ETIMEDOUT;
        }
        weft_net_status_t st{};
        // The reply comes from the server's node: a dead one ends the wait.
        int rc = recv_from(std::span(&port.node, 1), c->reply, c->in.data(), c->in.capacity(), &st, wait_ns);
        if (rc == EMSGSIZE) {
            if (!c->in.reserve(st.len)) return ENOMEM;
            continue;
        }
        if (rc != 0) return rc;  // ETIMEDOUT; EHOSTDOWN; ENOENT/EPIPE if someone destroyed our reply port
        decoded_frame d = decode_frame(c->in.data(), st.len);
        if (d.header_read && d.f.kind == frame_kind::reply && d.f.call_id != rq.call_id) continue;  // stale
        if (d.error != frame_error::none || d.f.kind != frame_kind::reply || d.f.fn_id != rq.fn_id) return EBADMSG;
        if (sig != 0 && d.f.sig != 0 && d.f.sig != sig) return EPROTO;
        *res = weft_rpc_result_t{d.f.payload, d.f.payload_len};
        return d.f.status;
    }
}

WEFT_API int weft_rpc_call(weft_port_id_t port, int fn_id, const void* in, size_t in_len, void* out, size_t out_cap,
                           size_t* out_len, int64_t timeout_ns) {
    if (out_len == nullptr || (out == nullptr && out_cap != 0)) return EINVAL;
    *out_len = 0;
    weft_rpc_result_t r{};
    int rc = weft_rpc_call_typed(port, fn_id, 0, in, in_len, timeout_ns, &r);
    if (r.data == nullptr) return rc;
    if (r.len > out_cap) {
        if (rc != 0) {
            // An error's text: as much of it as fits.
            if (out_cap != 0) std::memcpy(out, r.data, out_cap);
            *out_len = out_cap;
            return rc;
        }
        *out_len = r.len;
        return EMSGSIZE;
    }
    if (r.len != 0) std::memcpy(out, r.data, r.len);
    *out_len = r.len;
    return rc;
}

}  // extern "C"
