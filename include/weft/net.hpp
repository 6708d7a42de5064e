// net.hpp — the C++ API of weft's message passing: thin RAII and typed helpers
// over weft.h's "Message passing" section (docs/design/net.md).
//
//   weft::net::job job(2);                              // two in-process nodes
//   weft::net::port inbox(16, 4096);                    // on the caller's node
//   weft::net::send(inbox.id(), /*tag=*/1, 42.0);       // any trivially copyable value
//   double x = weft::net::recv<double>(inbox.id());     // blocks only this thread
//
// Failures throw weft::error (code() is the errno value), except the outcomes
// a caller expects: try_recv and recv_for return an empty optional when no
// message is there (EAGAIN, ETIMEDOUT).
#pragma once

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "weft/weft.hpp"

// Port IDs compare as values (at global scope, the C struct's own, so that
// argument-dependent lookup finds it).
inline bool operator==(const weft_port_id_t& a, const weft_port_id_t& b) {
    return a.node == b.node && a.index == b.index && a.gen == b.gen;
}

namespace weft::net {
inline namespace v0 {

using port_id = weft_port_id_t;
using status = weft_net_status_t;

// A job of `nodes` in-process nodes for the object's lifetime.
class job {
public:
    explicit job(int nodes, const char* transport = nullptr) {
        weft_net_config_t cfg{};
        cfg.nodes = nodes;
        cfg.transport = transport;
        weft::detail::check(weft_net_init(&cfg), "weft_net_init");
    }
    ~job() { (void)weft_net_finalize(); }
    job(const job&) = delete;
    job& operator=(const job&) = delete;
};

inline int self_node() noexcept { return weft_net_self_node(); }
inline int num_nodes() noexcept { return weft_net_num_nodes(); }
// The running job's transport ("inproc", "faulty" or "mpi"); empty if no job runs.
inline std::string_view transport() noexcept {
    const char* t = weft_net_transport();
    return t != nullptr ? std::string_view(t) : std::string_view();
}

// A weft thread on a node of the job (weft_net_spawn), running a callable
// with no result. join() waits for it and rethrows what it threw; destroying
// a joinable one joins it (discarding what it threw), like std::jthread.
class node_thread {
public:
    node_thread() = default;
    node_thread(node_thread&& o) noexcept
        : handle_(std::exchange(o.handle_, WEFT_THREAD_NULL)), state_(std::exchange(o.state_, nullptr)) {}
    node_thread& operator=(node_thread&& o) noexcept {
        if (this != &o) {
            reset();
            handle_ = std::exchange(o.handle_, WEFT_THREAD_NULL);
            state_ = std::exchange(o.state_, nullptr);
        }
        return *this;
    }
    node_thread(const node_thread&) = delete;
    node_thread& operator=(const node_thread&) = delete;
    ~node_thread() { reset(); }

    bool joinable() const noexcept { return handle_ != WEFT_THREAD_NULL; }
    void join() {
        if (!joinable()) throw error(EINVAL, "weft::net::node_thread::join: not joinable");
        weft::detail::check(weft_thread_join(std::exchange(handle_, WEFT_THREAD_NULL), nullptr), "weft_thread_join");
        std::exception_ptr ex = std::exchange(state_->thrown, nullptr);
        delete std::exchange(state_, nullptr);
        if (ex) std::rethrow_exception(ex);
    }

private:
    struct state_base {
        virtual ~state_base() = default;
        virtual void run() = 0;
        std::exception_ptr thrown;
    };
    template <class F>
    struct state final : state_base {
        explicit state(F&& f) : fn(std::move(f)) {}
        void run() override { fn(); }
        F fn;
    };
    template <class F, class... Args>
    friend node_thread spawn(int node, F&& f, Args&&... args);

    static void* entry(void* a) {
        auto* s = static_cast<state_base*>(a);
        try {
            s->run();
        } catch (...) {
            s->thrown = std::current_exception();
        }
        return nullptr;
    }
    void reset() noexcept {
        if (!joinable()) return;
        (void)weft_thread_join(std::exchange(handle_, WEFT_THREAD_NULL), nullptr);
        delete std::exchange(state_, nullptr);
    }

    weft_thread_t handle_ = WEFT_THREAD_NULL;
    state_base* state_ = nullptr;
};

// Starts f(args...) on a new weft thread on `node` (weft_net_spawn: its
// messages are that node's). Throws weft::error: ENOTCONN no job, EINVAL
// node out of range (mpi: any node but the caller's rank), as
// weft_thread_create.
template <class F, class... Args>
node_thread spawn(int node, F&& f, Args&&... args) {
    auto call = [fn = std::forward<F>(f), ... a = std::forward<Args>(args)]() mutable { (void)std::invoke(fn, a...); };
    auto* s = new node_thread::state<decltype(call)>(std::move(call));
    node_thread t;
    if (int rc = weft_net_spawn(&t.handle_, node, nullptr, &node_thread::entry, s); rc != 0) {
        delete s;
        throw error(rc, "weft_net_spawn");
    }
    t.state_ = s;
    return t;
}

// A port on the caller's node, destroyed with the object.
class port {
public:
    port(std::size_t max_msgs, std::size_t max_bytes) {
        weft::detail::check(weft_net_port_create(&id_, max_msgs, max_bytes), "weft_net_port_create");
    }
    ~port() {
        if (owned_) (void)weft_net_port_destroy(id_);
    }
    port(port&& o) noexcept : id_(o.id_), owned_(std::exchange(o.owned_, false)) {}
    port& operator=(port&& o) noexcept {
        if (this != &o) {
            if (owned_) (void)weft_net_port_destroy(id_);
            id_ = o.id_;
            owned_ = std::exchange(o.owned_, false);
        }
        return *this;
    }
    port(const port&) = delete;
    port& operator=(const port&) = delete;
    const port_id& id() const noexcept { return id_; }

private:
    port_id id_{};
    bool owned_ = true;
};

template <class T>
concept message_value = std::is_trivially_copyable_v<T>;

// Sends the bytes of v (or of the span's elements).
template <message_value T>
void send(const port_id& to, std::int32_t tag, const T& v) {
    weft::detail::check(weft_net_send(to, tag, &v, sizeof v), "weft_net_send");
}
template <message_value T>
void send(const port_id& to, std::int32_t tag, std::span<const T> s) {
    weft::detail::check(weft_net_send(to, tag, s.data(), s.size_bytes()), "weft_net_send");
}

}  // namespace v0
}  // namespace weft::net

namespace weft::detail {
inline namespace d0 {
// A message of T must be exactly sizeof(T) bytes: a longer one stays queued
// (EMSGSIZE), a shorter one was received and is reported as EBADMSG.
template <class T>
T net_recv_result(int rc, const ::weft::net::status& st, const T& v, const char* what) {
    check(rc, what);
    if (st.len != sizeof(T)) throw ::weft::error(EBADMSG, what);
    return v;
}
}  // namespace d0
}  // namespace weft::detail

namespace weft::net {
inline namespace v0 {

// Receives one T; st (optional) gets the tag, source and times.
template <message_value T>
T recv(const port_id& p, status* st = nullptr) {
    T v;
    status s{};
    int rc = weft_net_recv(p, &v, sizeof v, &s, WEFT_NET_FOREVER);
    if (st != nullptr) *st = s;
    return detail::net_recv_result(rc, s, v, "weft_net_recv");
}

template <message_value T, class Rep, class Period>
std::optional<T> recv_for(const port_id& p, std::chrono::duration<Rep, Period> timeout, status* st = nullptr) {
    T v;
    status s{};
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
    int rc = weft_net_recv(p, &v, sizeof v, &s, ns < 0 ? 0 : ns);  // a negative duration: look once
    if (st != nullptr) *st = s;
    if (rc == ETIMEDOUT) return std::nullopt;
    return detail::net_recv_result(rc, s, v, "weft_net_recv");
}

template <message_value T>
std::optional<T> try_recv(const port_id& p, status* st = nullptr) {
    T v;
    status s{};
    int rc = weft_net_try_recv(p, &v, sizeof v, &s);
    if (st != nullptr) *st = s;
    if (rc == EAGAIN) return std::nullopt;
    return detail::net_recv_result(rc, s, v, "weft_net_try_recv");
}

// Receives into out; returns the number of elements received. A message
// whose length is not a whole number of T is reported as EBADMSG (received).
template <message_value T>
std::size_t recv(const port_id& p, std::span<T> out, status* st = nullptr) {
    status s{};
    int rc = weft_net_recv(p, out.data(), out.size_bytes(), &s, WEFT_NET_FOREVER);
    if (st != nullptr) *st = s;
    weft::detail::check(rc, "weft_net_recv");
    if (s.len % sizeof(T) != 0) throw error(EBADMSG, "weft_net_recv");
    return s.len / sizeof(T);
}

}  // namespace v0
}  // namespace weft::net
