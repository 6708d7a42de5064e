// The serving side of RPC: servers (a port, a function table, n weft threads
// of the creator's node), the reply path every server shares, and the C API
// weft_rpc_server_*.
//
// A server thread receives a request, checks its frame, finds the function,
// checks the type signature, runs the handler and sends the reply to the
// request's reply port. Every failure short of a request with no readable
// header (which names no reply port: it is dropped) becomes a
// reply with an error status and a text that names what was wrong, and the
// thread goes on to the next request.
//
// Stopping (weft_rpc_server_destroy): close the port, so new requests fail
// at their senders (EPIPE); the threads drain what is buffered, answering
// each EPIPE ("stopping"), and leave when the closed port is empty; join
// them; destroy the port. No request that names a reply port goes unanswered.
#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "base/primitives.hpp"
#include "core/tunables.hpp"
#include "net/port.hpp"
#include "net/rpc.hpp"

struct weft_rpc_reply_s {
    weft::detail::net::byte_buffer* buf;
    std::size_t len = 0;
};

namespace weft::detail::net {
namespace {

// A server's port takes any one request (its buffered count: tun::rpc_server_port_msgs).
constexpr std::size_t kServerPortBytes = kFrameHeader + WEFT_RPC_MAX_PAYLOAD;

struct function {
    int id = 0;
    std::uint64_t sig = 0;
    std::string name;
    weft_rpc_handler_t c = nullptr;
    weft_rpc_typed_handler_t typed = nullptr;
    void* arg = nullptr;
};

}  // namespace

void send_reply(const frame& rq, int status, const void* payload, std::size_t len, byte_buffer& buf) {
    if (!buf.reserve(kFrameHeader + len)) {
        status = ENOMEM;
        len = 0;
    }
    unsigned char* p = buf.data() + kFrameHeader;
    if (len != 0 && payload != p) std::memmove(p, payload, len);
    frame rp;
    rp.kind = frame_kind::reply;
    rp.fn_id = rq.fn_id;
    rp.status = status;
    rp.sig = rq.sig;
    rp.call_id = rq.call_id;
    rp.payload_len = std::uint32_t(len);
    encode_header(rp, buf.data());
    int rc = weft_net_send(rq.reply_to, std::int32_t(rq.fn_id), buf.data(), kFrameHeader + len);
    if (rc == EMSGSIZE) {
        send_error(rq, EMSGSIZE, buf, "the reply (%zu bytes) is larger than the caller's reply port takes", len);
    }
    // Else 0, or the caller is gone (ENOENT, EPIPE): nobody to tell.
}

void send_error(const frame& rq, int status, byte_buffer& buf, const char* fmt, ...) {
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    int n = std::vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    std::size_t len = n < 0 ? 0 : std::min(std::size_t(n), sizeof text - 1);
    send_reply(rq, status, text, len, buf);
}

}  // namespace weft::detail::net

using namespace weft::detail;
using namespace weft::detail::net;

struct weft_rpc_server_s {
    std::vector<function> fns;  // sorted by id once started
    bool started = false;
    weft_port_id_t port{};
    int node = 0;  // the port's and the threads'
    std::vector<weft_thread_t> threads;
    atomic<bool> stopping{false};

    const function* find(std::uint32_t id) const {
        auto it = std::lower_bound(fns.begin(), fns.end(), id,
                                   [](const function& f, std::uint32_t v) { return std::uint32_t(f.id) < v; });
        return it != fns.end() && std::uint32_t(it->id) == id ? &*it : nullptr;
    }
    std::string ids() const {
        std::string s;
        for (const function& f : fns) s += (s.empty() ? "" : ", ") + std::to_string(f.id);
        return s.empty() ? "none" : s;
    }
};

namespace weft::detail::net {
namespace {

void run(const function& fn, const frame& rq, byte_buffer& out) {
    weft_rpc_reply_s r{&out};
    int rc = 0;
    if (fn.typed != nullptr) {
        rc = fn.typed(fn.arg, rq.payload, rq.payload_len, &r);
    } else {
        unsigned char* room = static_cast<unsigned char*>(weft_rpc_reply_alloc(&r, WEFT_RPC_C_REPLY_MAX));
        if (room == nullptr) return send_error(rq, ENOMEM, out, "no memory for the reply of function %d", fn.id);
        std::size_t n = 0;
        rc = fn.c(fn.arg, rq.payload, rq.payload_len, room, WEFT_RPC_C_REPLY_MAX, &n);
        if (n > WEFT_RPC_C_REPLY_MAX) {
            return send_error(rq, EREMOTEIO, out, "handler of function %d reported %zu reply bytes, above out_cap %zu",
                              fn.id, n, WEFT_RPC_C_REPLY_MAX);
        }
        r.len = n;
        if (rc != 0 && n == 0) {
            return send_error(rq, EREMOTEIO, out, "handler of function %d returned %d (%s)", fn.id, rc,
                              std::strerror(rc));
        }
        if (rc != 0) rc = EREMOTEIO;
    }
    if (rc < 0 || rc > kFrameMaxStatus) rc = EREMOTEIO;
    send_reply(rq, rc, out.data() + kFrameHeader, r.len, out);
}

void serve(weft_rpc_server_s& s, const unsigned char* bytes, std::size_t len, byte_buffer& out) {
    decoded_frame d = decode_frame(bytes, len);
    if (!d.header_read || d.f.kind != frame_kind::request) return;  // names no reply port: nobody to answer
    const frame& rq = d.f;
    if (d.error != frame_error::none) {
        return send_error(rq, EBADMSG, out, "malformed request for function %u: %s", rq.fn_id,
                          frame_error_text(d.error));
    }
    if (s.stopping.load(memory_order_relaxed)) {
        return send_error(rq, EPIPE, out, "the server is stopping: function %u was not run", rq.fn_id);
    }
    const function* fn = s.find(rq.fn_id);
    if (fn == nullptr) {
        return send_error(rq, ENOSYS, out, "no function %u on this server (its functions: %s)", rq.fn_id,
                          s.ids().c_str());
    }
    if (rq.sig != 0 && fn->sig != 0 && rq.sig != fn->sig) {
        return send_error(rq, EPROTO, out,
                          "type signature mismatch for %s (function %d): the caller's is %016llx, the server's %016llx",
                          fn->name.c_str(), fn->id, (unsigned long long)rq.sig, (unsigned long long)fn->sig);
    }
    run(*fn, rq, out);
}

void* server_main(void* arg) {
    auto& s = *static_cast<weft_rpc_server_s*>(arg);
    byte_buffer in;
    byte_buffer out;
    if (!in.reserve(4096)) return nullptr;
    for (;;) {
        weft_net_status_t st{};
        int rc = weft_net_recv(s.port, in.data(), in.capacity(), &st, WEFT_NET_FOREVER);
        if (rc == EMSGSIZE) {
            // The request stays queued until there is room for it.
            if (!in.reserve(st.len)) weft_thread_yield();
            continue;
        }
        if (rc == ECONNABORTED) continue;  // a reply it sent was dropped: its caller gave up and destroyed the port
        if (rc != 0) return nullptr;  // EPIPE: closed and drained
        serve(s, in.data(), st.len, out);
    }
}

int add(weft_rpc_server_t s, int fn_id, std::uint64_t sig, const char* name, weft_rpc_handler_t c,
        weft_rpc_typed_handler_t typed, void* arg) {
    if (s == nullptr || fn_id < 0 || (c == nullptr && typed == nullptr)) return EINVAL;
    if (s->started) return EBUSY;
    for (const function& f : s->fns)
        if (f.id == fn_id) return EEXIST;
    try {
        function f;
        f.id = fn_id;
        f.sig = sig;
        f.name = name != nullptr ? name : "function " + std::to_string(fn_id);
        f.c = c;
        f.typed = typed;
        f.arg = arg;
        s->fns.push_back(std::move(f));
    } catch (const std::bad_alloc&) {
        return ENOMEM;
    }
    return 0;
}

}  // namespace
}  // namespace weft::detail::net

extern "C" {

WEFT_API int weft_rpc_server_create(weft_rpc_server_t* s) {
    if (s == nullptr) return EINVAL;
    *s = new (std::nothrow) weft_rpc_server_s;
    return *s == nullptr ? ENOMEM : 0;
}

WEFT_API int weft_rpc_server_register(weft_rpc_server_t s, int fn_id, weft_rpc_handler_t fn, void* arg) {
    if (fn == nullptr) return EINVAL;
    return add(s, fn_id, 0, nullptr, fn, nullptr, arg);
}

WEFT_API int weft_rpc_server_register_typed(weft_rpc_server_t s, int fn_id, uint64_t sig, const char* name,
                                            weft_rpc_typed_handler_t fn, void* arg) {
    if (fn == nullptr) return EINVAL;
    return add(s, fn_id, sig, name, nullptr, fn, arg);
}

WEFT_API void* weft_rpc_reply_alloc(weft_rpc_reply_t* reply, size_t len) {
    if (reply == nullptr || len > WEFT_RPC_MAX_PAYLOAD || !reply->buf->reserve(kFrameHeader + len)) return nullptr;
    reply->len = len;
    return reply->buf->data() + kFrameHeader;
}

WEFT_API int weft_rpc_server_start(weft_rpc_server_t s, size_t threads, weft_port_id_t* port) {
    if (current_job() == nullptr) return ENOTCONN;
    if (s == nullptr || port == nullptr || threads == 0 || threads > tun::rpc_max_server_threads) return EINVAL;
    if (s->started) return EBUSY;
    std::sort(s->fns.begin(), s->fns.end(), [](const function& a, const function& b) { return a.id < b.id; });
    if (int rc = weft_net_port_create(&s->port, tun::rpc_server_port_msgs, kServerPortBytes); rc != 0) return rc;
    s->started = true;
    int node = s->node = weft_net_self_node();
    weft_attr_t attr;
    weft_attr_init(&attr);
    weft_attr_setname(&attr, "weft-rpc-server");  // how a deadlock report names them
    for (std::size_t i = 0; i < threads; ++i) {
        weft_thread_t t = WEFT_THREAD_NULL;
        int rc = weft_net_spawn(&t, node, &attr, &server_main, s);
        if (rc == 0) {
            try {
                s->threads.push_back(t);
                continue;
            } catch (const std::bad_alloc&) {
                rc = ENOMEM;
                (void)weft_thread_join(t, nullptr);  // it ends with the port below
            }
        }
        (void)weft_net_port_close(s->port);
        for (weft_thread_t u : s->threads) (void)weft_thread_join(u, nullptr);
        s->threads.clear();
        (void)weft_net_port_destroy(s->port);
        s->started = false;
        weft_attr_destroy(&attr);
        return rc;
    }
    weft_attr_destroy(&attr);
    *port = s->port;
    return 0;
}

WEFT_API int weft_rpc_server_destroy(weft_rpc_server_t s) {
    if (s == nullptr) return EINVAL;
    if (s->started) {
        if (weft_net_self_node() != s->node) return EPERM;
        s->stopping.store(true, memory_order_relaxed);
        (void)weft_net_port_close(s->port);
        for (weft_thread_t t : s->threads) (void)weft_thread_join(t, nullptr);
        (void)weft_net_port_destroy(s->port);
    }
    delete s;
    return 0;
}

}  // extern "C"
