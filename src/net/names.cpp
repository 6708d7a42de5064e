// The naming service (Felten & McNamee, §6.3): names to port IDs for the
// whole job, built on RPC. One server thread on node 0 (started by
// weft_net_init, services.cpp) owns the table; any thread on any node calls
// it through weft_rpc_call_typed at the well-known port names_port().
//
// The server is a loop of its own rather than a weft_rpc_server, because a
// lookup may have to wait for its name: the server keeps it as a pending
// lookup (reply port, call ID, deadline) and answers it when the name is
// registered or at its deadline, so one server thread serves every caller
// and a waiting lookup holds no thread. Its receive waits until the earliest
// pending deadline.
//
// Requests (fn_id, payload -> reply):
//   1 register    port (node, index, gen: 3 x u32) + name  -> 0, EEXIST
//   2 lookup      timeout_ns (i64) + name                 -> 0 + port, ETIMEDOUT
//   3 unregister  name                                    -> 0, ENOENT
// Every request: EINVAL empty name, ENAMETOOLONG, EBADMSG malformed.
#include <cerrno>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/wait.hpp"
#include "net/port.hpp"
#include "net/rpc.hpp"

namespace weft::detail::net {
namespace {

enum : int { kRegister = 1, kLookup = 2, kUnregister = 3 };
// The requests' type signature: a client and a server of different builds of
// this protocol refuse each other (EPROTO) instead of misreading.
constexpr std::uint64_t kNamesSig = 0x6e616d6573763031ull;  // "namesv01"
constexpr std::size_t kPortBytes = 12;

struct pending {
    std::string name;
    frame rq;                 // its reply port and call ID (payload not kept)
    std::int64_t deadline;    // 0: none
};

struct names_server {
    std::map<std::string, weft_port_id_t, std::less<>> table;
    std::vector<pending> waiting;
    byte_buffer out;

    void answer(const frame& rq, const weft_port_id_t& p) {
        unsigned char b[kPortBytes];
        std::memcpy(b, &p.node, 4);
        std::memcpy(b + 4, &p.index, 4);
        std::memcpy(b + 8, &p.gen, 4);
        send_reply(rq, 0, b, sizeof b, out);
    }

    void expire(std::int64_t now) {
        for (std::size_t i = 0; i < waiting.size();) {
            if (waiting[i].deadline != 0 && waiting[i].deadline <= now) {
                send_error(waiting[i].rq, ETIMEDOUT, out, "\"%s\" was not registered in time", waiting[i].name.c_str());
                waiting[i] = std::move(waiting.back());
                waiting.pop_back();
            } else {
                ++i;
            }
        }
    }

    std::int64_t next_deadline() const {
        std::int64_t d = 0;
        for (const pending& p : waiting)
            if (p.deadline != 0 && (d == 0 || p.deadline < d)) d = p.deadline;
        return d;
    }

    void serve(const unsigned char* bytes, std::size_t len) {
        decoded_frame d = decode_frame(bytes, len);
        if (!d.header_read || d.f.kind != frame_kind::request) return;  // nobody to answer
        const frame& rq = d.f;
        if (d.error != frame_error::none)
            return send_error(rq, EBADMSG, out, "malformed naming request: %s", frame_error_text(d.error));
        if (rq.sig != kNamesSig) return send_error(rq, EPROTO, out, "not a naming request of this weft build");
        std::size_t head = rq.fn_id == kRegister ? kPortBytes : rq.fn_id == kLookup ? 8 : 0;
        if (rq.fn_id != kRegister && rq.fn_id != kLookup && rq.fn_id != kUnregister)
            return send_error(rq, ENOSYS, out, "no naming function %u (1 register, 2 lookup, 3 unregister)", rq.fn_id);
        if (rq.payload_len < head) return send_error(rq, EBADMSG, out, "naming request %u is truncated", rq.fn_id);
        std::string_view name(reinterpret_cast<const char*>(rq.payload) + head, rq.payload_len - head);
        if (name.empty()) return send_error(rq, EINVAL, out, "empty name");
        if (name.size() > WEFT_NET_NAME_MAX)
            return send_error(rq, ENAMETOOLONG, out, "name of %zu bytes, above %d", name.size(), WEFT_NET_NAME_MAX);
        switch (rq.fn_id) {
            case kRegister: {
                weft_port_id_t p{};
                std::memcpy(&p.node, rq.payload, 4);
                std::memcpy(&p.index, rq.payload + 4, 4);
                std::memcpy(&p.gen, rq.payload + 8, 4);
                if (!table.emplace(std::string(name), p).second)
                    return send_error(rq, EEXIST, out, "\"%.*s\" is registered", int(name.size()), name.data());
                send_reply(rq, 0, nullptr, 0, out);
                for (std::size_t i = 0; i < waiting.size();) {
                    if (waiting[i].name == name) {
                        answer(waiting[i].rq, p);
                        waiting[i] = std::move(waiting.back());
                        waiting.pop_back();
                    } else {
                        ++i;
                    }
                }
                return;
            }
            case kLookup: {
                if (auto it = table.find(name); it != table.end()) return answer(rq, it->second);
                std::int64_t timeout = 0;
                std::memcpy(&timeout, rq.payload, 8);
                if (timeout == 0)
                    return send_error(rq, ETIMEDOUT, out, "\"%.*s\" is not registered", int(name.size()), name.data());
                frame kept = rq;
                kept.payload = nullptr;
                kept.payload_len = 0;
                waiting.push_back(pending{std::string(name), kept, timeout < 0 ? 0 : monotonic_ns() + timeout});
                return;
            }
            default: {
                auto it = table.find(name);
                if (it == table.end())
                    return send_error(rq, ENOENT, out, "\"%.*s\" is not registered", int(name.size()), name.data());
                table.erase(it);
                send_reply(rq, 0, nullptr, 0, out);
                return;
            }
        }
    }
};

// Checks a name from the C API.
int check_name(const char* name, std::size_t* len) {
    if (name == nullptr) return EINVAL;
    *len = ::strnlen(name, WEFT_NET_NAME_MAX + 1);
    if (*len == 0) return EINVAL;
    return *len > WEFT_NET_NAME_MAX ? ENAMETOOLONG : 0;
}

// One naming call: head[0..head_len) + name, reply in *res.
int call(int fn, const void* head, std::size_t head_len, const char* name, std::size_t len, std::int64_t timeout_ns,
         weft_rpc_result_t* res) {
    unsigned char req[16 + WEFT_NET_NAME_MAX];
    if (head_len != 0) std::memcpy(req, head, head_len);
    std::memcpy(req + head_len, name, len);
    return weft_rpc_call_typed(names_port(), fn, kNamesSig, req, head_len + len, timeout_ns, res);
}

}  // namespace

void* names_server_main(void*) {
    names_server s;
    byte_buffer in;
    if (!in.reserve(4096)) return nullptr;
    for (;;) {
        std::int64_t deadline = s.next_deadline();
        std::int64_t wait_ns = WEFT_NET_FOREVER;
        if (deadline != 0) {
            std::int64_t now = monotonic_ns();
            wait_ns = deadline > now ? deadline - now : 0;
        }
        weft_net_status_t st{};
        int rc = weft_net_recv(names_port(), in.data(), in.capacity(), &st, wait_ns);
        if (rc == EMSGSIZE) {
            if (!in.reserve(st.len)) weft_thread_yield();
            continue;
        }
        if (rc == 0) s.serve(in.data(), st.len);
        else if (rc != ETIMEDOUT && rc != ECONNABORTED) break;  // ECONNABORTED: a reply it sent was dropped  // EPIPE: closed by weft_net_finalize
        if (!s.waiting.empty()) s.expire(monotonic_ns());
    }
    // The job ends: nobody waits in a lookup (finalize refuses while a thread waits).
    return nullptr;
}

}  // namespace weft::detail::net

using namespace weft::detail;
using namespace weft::detail::net;

extern "C" {

WEFT_API int weft_net_names_port(weft_port_id_t* id) {
    if (current_job() == nullptr) return ENOTCONN;
    if (id == nullptr) return EINVAL;
    *id = names_port();
    return 0;
}

WEFT_API int weft_net_name_register(const char* name, weft_port_id_t port) {
    if (current_job() == nullptr) return ENOTCONN;
    std::size_t len = 0;
    if (int rc = check_name(name, &len); rc != 0) return rc;
    std::uint32_t head[3] = {port.node, port.index, port.gen};
    weft_rpc_result_t r{};
    return call(kRegister, head, sizeof head, name, len, WEFT_NET_FOREVER, &r);
}

WEFT_API int weft_net_name_lookup(const char* name, weft_port_id_t* port, int64_t timeout_ns) {
    if (current_job() == nullptr) return ENOTCONN;
    std::size_t len = 0;
    if (int rc = check_name(name, &len); rc != 0) return rc;
    if (port == nullptr || bad_timeout(timeout_ns)) return EINVAL;
    std::int64_t t = timeout_ns;
    weft_rpc_result_t r{};
    // The server keeps the lookup until its deadline; the caller waits as
    // long (a reply after that is dropped by the thread's next call). A
    // lookup that only looks (0) waits for the server's answer.
    int rc = call(kLookup, &t, sizeof t, name, len, t == 0 ? WEFT_NET_FOREVER : t, &r);
    if (rc != 0) return rc;
    if (r.len != kPortBytes) return EBADMSG;
    const auto* b = static_cast<const unsigned char*>(r.data);
    weft_port_id_t p{};
    std::memcpy(&p.node, b, 4);
    std::memcpy(&p.index, b + 4, 4);
    std::memcpy(&p.gen, b + 8, 4);
    *port = p;
    return 0;
}

WEFT_API int weft_net_name_unregister(const char* name) {
    if (current_job() == nullptr) return ENOTCONN;
    std::size_t len = 0;
    if (int rc = check_name(name, &len); rc != 0) return rc;
    weft_rpc_result_t r{};
    return call(kUnregister, nullptr, 0, name, len, WEFT_NET_FOREVER, &r);
}

}  // extern "C"
