// Class: requirement, negative. RPC (include/weft/rpc.hpp, weft/rpc.h): typed
// stubs across nodes and on one node, strings, vectors and spans, remote
// exceptions, unknown function IDs, type mismatches, malformed requests and
// replies, a server stopped with callers waiting, timeouts, the C form.
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "net/rpc_frame.hpp"
#include "support/net_test.hpp"
#include "support/weft_test.hpp"
#include "weft/rpc.hpp"

namespace {

struct calc {
    int sum(int a, int b) { return a + b; }
    std::string greet(const std::string& who) const { return "hello, " + who; }
    double total(std::span<const double> xs) { return std::accumulate(xs.begin(), xs.end(), 0.0); }
    std::vector<int> iota(int n) {
        std::vector<int> v(static_cast<std::size_t>(n));
        std::iota(v.begin(), v.end(), 0);
        return v;
    }
    void fail(int code) { throw std::runtime_error("fail " + std::to_string(code)); }
    int where() { return weft_net_self_node(); }
    void wait_for_gate() {
        ++entered;
        weft_sem_wait(&gate);
    }
    int not_listed() { return 0; }
    bool negate(bool b) { return !b; }
    int entered = 0;
    weft_sem_t gate;
};

// The same functions seen by a caller of another version, where sum takes
// and returns longs: its signature differs.
struct calc_v2 {
    long sum(long a, long b) { return a + b; }
};

}  // namespace

template <>
struct weft::rpc::interface<calc>
    : weft::rpc::functions<&calc::sum, &calc::greet, &calc::total, &calc::iota, &calc::fail, &calc::where,
                           &calc::wait_for_gate, &calc::negate> {};
template <>
struct weft::rpc::interface<calc_v2> : weft::rpc::functions<&calc_v2::sum> {};

namespace {

using weft::detail::net::decode_frame;
using weft::detail::net::encode_header;
using weft::detail::net::frame;
using weft::detail::net::frame_error;
using weft::detail::net::frame_kind;
using weft::detail::net::kFrameHeader;

class Rpc : public wt::net_fixture {
protected:
    void start(int nodes) {
        wt::net_fixture::start(nodes);
        ASSERT_EQ(weft_sem_init(&svc_.gate, 0), 0);
    }
    void TearDown() override {
        if (started_) {
            EXPECT_EQ(weft_net_finalize(), 0);
            started_ = false;
            (void)weft_sem_destroy(&svc_.gate);
        }
        wt::net_fixture::TearDown();
    }
    calc svc_;
};

using wt::run_on;
using wt::spawn_on;

template <class F>
int rpc_code(F f) {
    try {
        f();
    } catch (const weft::rpc::error& e) {
        return e.code().value();
    }
    return 0;
}

TEST_F(Rpc, typed_calls_on_the_same_node) {
    start(1);
    weft::rpc::server srv(svc_);
    EXPECT_EQ(weft::rpc::call(srv.port(), &calc::sum, 2, 3), 5);
    EXPECT_EQ(weft::rpc::call(srv.port(), &calc::greet, "weft"), "hello, weft");
    std::vector<double> xs{1.5, 2.5, 3.0};
    EXPECT_EQ(weft::rpc::call(srv.port(), &calc::total, xs), 7.0);
    EXPECT_EQ(weft::rpc::call(srv.port(), &calc::total, std::vector<double>{}), 0.0);
    std::vector<int> v = weft::rpc::call(srv.port(), &calc::iota, 1000);
    ASSERT_EQ(v.size(), 1000u);
    EXPECT_EQ(v[999], 999);
    EXPECT_EQ(weft::rpc::call(srv.port(), &calc::where), 0);
}

TEST_F(Rpc, calls_across_nodes_run_on_the_server_node) {
    start(3);
    weft_port_id_t port{};
    bool stop = false;
    weft_sem_t ready, done;
    ASSERT_EQ(weft_sem_init(&ready, 0), 0);
    ASSERT_EQ(weft_sem_init(&done, 0), 0);
    // The server lives on node 2, owned by a thread there.
    auto host = [&] {
        weft::rpc::server srv(svc_, 2);
        port = srv.port();
        weft_sem_post(&ready);
        weft_sem_wait(&done);
        stop = true;
    };
    weft_thread_t h = spawn_on(2, &host);
    weft_sem_wait(&ready);
    EXPECT_EQ(port.node, 2u);
    for (int node = 0; node < 3; ++node) {
        run_on(node, [&] {
            EXPECT_EQ(weft::rpc::call(port, &calc::where), 2) << "the call runs on a server thread of node 2";
            EXPECT_EQ(weft::rpc::call(port, &calc::sum, node, 40), node + 40);
            EXPECT_EQ(weft::rpc::call(port, &calc::greet, std::string(300, 'x')).size(), 307u);
        });
    }
    weft_sem_post(&done);
    ASSERT_EQ(weft_thread_join(h, nullptr), 0);
    EXPECT_TRUE(stop);
    weft_sem_destroy(&ready);
    weft_sem_destroy(&done);
}

TEST_F(Rpc, remote_exception_is_rethrown_with_its_text_and_the_function) {
    start(2);
    weft::rpc::server srv(svc_);
    run_on(1, [&] {
        try {
            weft::rpc::call(srv.port(), &calc::fail, 42);
            ADD_FAILURE() << "no exception";
        } catch (const weft::rpc::remote_error& e) {
            EXPECT_EQ(e.code().value(), EREMOTEIO);
            EXPECT_EQ(e.remote_what(), "fail 42");
            EXPECT_EQ(e.function_id(), 4);
            EXPECT_TRUE(wt::contains(e.function(), "fail"));
            EXPECT_TRUE(wt::contains(e.what(), "fail 42"));
        }
    });
    EXPECT_EQ(weft::rpc::call(srv.port(), &calc::sum, 1, 1), 2) << "the server keeps serving";
}

TEST_F(Rpc, unknown_function_id_is_enosys_with_the_server_functions) {
    start(1);
    weft::rpc::server srv(svc_);
    char out[256];
    size_t len = 0;
    EXPECT_EQ(weft_rpc_call(srv.port(), 99, nullptr, 0, out, sizeof out, &len, WEFT_NET_FOREVER), ENOSYS);
    EXPECT_TRUE(wt::contains(std::string(out, len), "no function 99"));
    EXPECT_TRUE(wt::contains(std::string(out, len), "0, 1, 2, 3, 4, 5, 6"));
    EXPECT_EQ(weft::rpc::call(srv.port(), &calc::sum, 1, 2), 3);
}

TEST_F(Rpc, signature_mismatch_is_eproto) {
    start(1);
    weft::rpc::server srv(svc_);
    try {
        weft::rpc::call(srv.port(), &calc_v2::sum, 1L, 2L);
        ADD_FAILURE() << "no exception";
    } catch (const weft::rpc::error& e) {
        EXPECT_EQ(e.code().value(), EPROTO);
        EXPECT_TRUE(wt::contains(e.what(), "type signature mismatch"));
        EXPECT_TRUE(wt::contains(e.what(), "calc::sum"));
    }
    EXPECT_EQ(weft::rpc::call(srv.port(), &calc::sum, 1, 2), 3);
}

// A C server whose handler answers function 0 with 8 bytes: the C++ stub of
// sum expects 4 and refuses the reply.
int eight_bytes(void*, const void*, size_t, void* out, size_t, size_t* out_len) {
    std::int64_t v = 7;
    std::memcpy(out, &v, sizeof v);
    *out_len = sizeof v;
    return 0;
}

TEST_F(Rpc, reply_that_does_not_decode_as_the_result_is_eproto) {
    start(1);
    weft_rpc_server_t s = nullptr;
    ASSERT_EQ(weft_rpc_server_create(&s), 0);
    ASSERT_EQ(weft_rpc_server_register(s, 0, &eight_bytes, nullptr), 0);
    weft_port_id_t port{};
    ASSERT_EQ(weft_rpc_server_start(s, 1, &port), 0);
    EXPECT_EQ(rpc_code([&] { weft::rpc::call(port, &calc::sum, 1, 2); }), EPROTO);
    EXPECT_EQ(weft_rpc_server_destroy(s), 0);
}

// A hand-made server on a plain port: answers each request with the frame
// `make` builds from it, so the caller meets malformed replies.
template <class Make>
void fake_server(weft_port_id_t port, int requests, Make make) {
    for (int i = 0; i < requests; ++i) {
        unsigned char in[512];
        weft_net_status_t st{};
        ASSERT_EQ(weft_net_recv(port, in, sizeof in, &st, WEFT_NET_FOREVER), 0);
        auto d = decode_frame(in, st.len);
        ASSERT_EQ(d.error, frame_error::none);
        std::vector<unsigned char> reply = make(d.f);
        ASSERT_EQ(weft_net_send(d.f.reply_to, 0, reply.data(), reply.size()), 0);
    }
}

std::vector<unsigned char> reply_frame(const frame& rq, std::uint64_t sig, std::uint32_t payload_len,
                                       std::size_t actual_payload) {
    frame rp;
    rp.kind = frame_kind::reply;
    rp.fn_id = rq.fn_id;
    rp.sig = sig;
    rp.call_id = rq.call_id;
    rp.payload_len = payload_len;
    std::vector<unsigned char> b(kFrameHeader + actual_payload, 0);
    encode_header(rp, b.data());
    return b;
}

TEST_F(Rpc, malformed_replies_are_clear_errors) {
    start(2);
    weft_port_id_t port{};
    ASSERT_EQ(weft_net_port_create(&port, 8, 4096), 0);
    int step = 0;
    auto srv = [&] {
        fake_server(port, 4, [&](const frame& rq) {
            switch (step++) {
                case 0: return reply_frame(rq, rq.sig ^ 1, 4, 4);  // another signature
                case 1: return reply_frame(rq, rq.sig, 4, 2);      // truncated
                case 2: return reply_frame(rq, rq.sig, 4, 9);      // trailing bytes
                default: return std::vector<unsigned char>(10, 0xab);  // garbage
            }
        });
    };
    weft_thread_t t = spawn_on(0, &srv);
    run_on(1, [&] {
        EXPECT_EQ(rpc_code([&] { weft::rpc::call(port, &calc::sum, 1, 2); }), EPROTO);
        EXPECT_EQ(rpc_code([&] { weft::rpc::call(port, &calc::sum, 1, 2); }), EBADMSG);
        EXPECT_EQ(rpc_code([&] { weft::rpc::call(port, &calc::sum, 1, 2); }), EBADMSG);
        EXPECT_EQ(rpc_code([&] { weft::rpc::call(port, &calc::sum, 1, 2); }), EBADMSG);
    });
    ASSERT_EQ(weft_thread_join(t, nullptr), 0);
    EXPECT_EQ(weft_net_port_destroy(port), 0);
}

// Sends a request frame rq with `bytes` bytes of `fill` after its header
// straight to the server's port, and returns the server's answer on `reply`
// with its payload as text.
void raw_request(weft_port_id_t server, weft_port_id_t reply, frame rq, std::size_t bytes, unsigned char fill,
                 frame* answer, std::string* text) {
    rq.reply_to = reply;
    std::vector<unsigned char> b(kFrameHeader + bytes, fill);
    encode_header(rq, b.data());
    ASSERT_EQ(weft_net_send(server, 0, b.data(), b.size()), 0);
    unsigned char in[512];
    weft_net_status_t st{};
    ASSERT_EQ(weft_net_recv(reply, in, sizeof in, &st, WEFT_NET_FOREVER), 0);
    auto d = decode_frame(in, st.len);
    ASSERT_EQ(d.error, frame_error::none);
    *answer = d.f;
    text->assign(reinterpret_cast<const char*>(d.f.payload), d.f.payload_len);
    answer->payload = nullptr;  // it pointed into `in`
}

TEST_F(Rpc, malformed_requests_are_answered_ebadmsg_and_the_server_goes_on) {
    start(1);
    weft::rpc::server srv(svc_);
    weft_port_id_t reply{};
    ASSERT_EQ(weft_net_port_create(&reply, 8, 4096), 0);
    frame rq;
    rq.kind = frame_kind::request;
    rq.fn_id = 0;
    rq.call_id = 7;
    rq.payload_len = 100;  // but only 8 bytes follow
    frame answer;
    std::string text;
    raw_request(srv.port(), reply, rq, 8, 0, &answer, &text);
    EXPECT_EQ(answer.status, EBADMSG);
    EXPECT_EQ(answer.call_id, 7u);
    EXPECT_TRUE(wt::contains(text, "shorter")) << text;

    // Arguments that do not decode as sum's (one int instead of two).
    rq.payload_len = 4;
    rq.sig = 0;
    raw_request(srv.port(), reply, rq, 4, 0, &answer, &text);
    EXPECT_EQ(answer.status, EBADMSG);

    unsigned char in[512];
    weft_net_status_t st{};

    // Garbage with no readable header names no reply port: dropped.
    ASSERT_EQ(weft_net_send(srv.port(), 0, "garbage", 7), 0);
    EXPECT_EQ(weft::rpc::call(srv.port(), &calc::sum, 20, 22), 42) << "the server is still serving";
    EXPECT_EQ(weft_net_try_recv(reply, in, sizeof in, &st), EAGAIN) << "nothing was answered for the garbage";
    EXPECT_EQ(weft_net_port_destroy(reply), 0);
}

// A bool argument is one byte, 0 or 1: any other byte is no bool (reading it
// as one is undefined), so the request does not decode.
TEST_F(Rpc, bool_argument_other_than_0_or_1_is_answered_ebadmsg) {
    start(1);
    weft::rpc::server srv(svc_);
    weft_port_id_t reply{};
    ASSERT_EQ(weft_net_port_create(&reply, 8, 4096), 0);
    auto ask = [&](unsigned char arg, frame* out, std::string* text) {
        frame rq;
        rq.kind = frame_kind::request;
        rq.fn_id = 7;  // negate
        rq.call_id = arg;
        rq.payload_len = 1;
        raw_request(srv.port(), reply, rq, 1, arg, out, text);
    };
    frame f;
    std::string text;
    ask(1, &f, &text);
    EXPECT_EQ(f.status, 0);
    EXPECT_EQ(text, std::string(1, '\0')) << "negate(true) is false";
    ask(2, &f, &text);
    EXPECT_EQ(f.status, EBADMSG);
    EXPECT_TRUE(wt::contains(text, "do not decode")) << text;
    ask(0xff, &f, &text);
    EXPECT_EQ(f.status, EBADMSG);
    EXPECT_EQ(weft::rpc::call(srv.port(), &calc::negate, false), true) << "the server is still serving";
    EXPECT_EQ(weft_net_port_destroy(reply), 0);
}

TEST_F(Rpc, call_to_a_port_that_does_not_exist_is_enoent) {
    start(2);
    weft_port_id_t gone{};
    ASSERT_EQ(weft_net_port_create(&gone, 1, 64), 0);
    ASSERT_EQ(weft_net_port_destroy(gone), 0);
    EXPECT_EQ(rpc_code([&] { weft::rpc::call(gone, &calc::sum, 1, 2); }), ENOENT);
    weft_port_id_t nowhere{1, 5000, 0, 0};
    EXPECT_EQ(rpc_code([&] { weft::rpc::call(nowhere, &calc::sum, 1, 2); }), ENOENT);
}

TEST_F(Rpc, server_stopped_with_callers_waiting_fails_them_with_epipe) {
    start(2);
    auto* srv = new weft::rpc::server<calc>(svc_, 1);
    weft_port_id_t port = srv->port();
    // The one server thread is held in wait_for_gate; the other callers' requests queue behind it.
    int codes[3] = {-1, -1, -1};
    auto holder = [&] { codes[0] = rpc_code([&] { weft::rpc::call(port, &calc::wait_for_gate); }); };
    auto waiter1 = [&] { codes[1] = rpc_code([&] { weft::rpc::call(port, &calc::sum, 1, 2); }); };
    auto waiter2 = [&] { codes[2] = rpc_code([&] { weft::rpc::call(port, &calc::sum, 3, 4); }); };
    weft_thread_t t0 = spawn_on(1, &holder);
    while (svc_.entered == 0) weft_thread_yield();
    weft_thread_t t1 = spawn_on(1, &waiter1);
    weft_thread_t t2 = spawn_on(0, &waiter2);
    let_others_run();  // one worker, fifo: both have sent and wait for their replies
    auto stopper = [&] { delete srv; };
    weft_thread_t ts = spawn_on(0, &stopper);
    let_others_run();  // the port is closed; the queued requests are answered EPIPE
    weft_sem_post(&svc_.gate);
    ASSERT_EQ(weft_thread_join(ts, nullptr), 0);
    for (weft_thread_t t : {t0, t1, t2}) ASSERT_EQ(weft_thread_join(t, nullptr), 0);
    EXPECT_EQ(codes[0], 0) << "the call that was running finishes";
    EXPECT_EQ(codes[1], EPIPE);
    EXPECT_EQ(codes[2], EPIPE);
    EXPECT_EQ(rpc_code([&] { weft::rpc::call(port, &calc::sum, 1, 2); }), ENOENT) << "the port is gone";
}

TEST_F(Rpc, timeout_then_the_late_reply_is_dropped) {
    start(2);
    weft::rpc::server srv(svc_, 2);
    run_on(1, [&] {
        EXPECT_EQ(rpc_code([&] { weft::rpc::call_for(srv.port(), std::chrono::milliseconds(1), &calc::wait_for_gate); }),
                  ETIMEDOUT);
        weft_sem_post(&svc_.gate);  // the late reply comes to this thread's reply port
        EXPECT_EQ(weft::rpc::call(srv.port(), &calc::sum, 5, 6), 11) << "the stale reply is not taken for this one";
        EXPECT_EQ(weft::rpc::call(srv.port(), &calc::sum, 7, 8), 15);
    });
}

int c_sum(void* arg, const void* in, size_t in_len, void* out, size_t out_cap, size_t* out_len) {
    ++*static_cast<int*>(arg);
    if (in_len != 8 || out_cap < 4) return EINVAL;
    std::int32_t ab[2];
    std::memcpy(ab, in, 8);
    std::int32_t r = ab[0] + ab[1];
    std::memcpy(out, &r, 4);
    *out_len = 4;
    return 0;
}
int c_fail(void*, const void*, size_t, void* out, size_t, size_t* out_len) {
    std::memcpy(out, "bad input", 9);
    *out_len = 9;
    return EINVAL;
}
int c_fail_silently(void*, const void*, size_t, void*, size_t, size_t*) { return ERANGE; }

TEST_F(Rpc, c_form) {
    start(2);
    int calls = 0;
    weft_rpc_server_t s = nullptr;
    ASSERT_EQ(weft_rpc_server_create(&s), 0);
    ASSERT_EQ(weft_rpc_server_register(s, 1, &c_sum, &calls), 0);
    ASSERT_EQ(weft_rpc_server_register(s, 2, &c_fail, nullptr), 0);
    ASSERT_EQ(weft_rpc_server_register(s, 3, &c_fail_silently, nullptr), 0);
    EXPECT_EQ(weft_rpc_server_register(s, 1, &c_sum, &calls), EEXIST);
    EXPECT_EQ(weft_rpc_server_register(s, -1, &c_sum, &calls), EINVAL);
    weft_port_id_t port{};
    EXPECT_EQ(weft_rpc_server_start(s, 0, &port), EINVAL);
    ASSERT_EQ(weft_rpc_server_start(s, 2, &port), 0);
    EXPECT_EQ(weft_rpc_server_register(s, 4, &c_sum, &calls), EBUSY);
    run_on(1, [&] {
        std::int32_t ab[2] = {19, 23}, r = 0;
        size_t len = 0;
        EXPECT_EQ(weft_rpc_call(port, 1, ab, sizeof ab, &r, sizeof r, &len, WEFT_NET_FOREVER), 0);
        EXPECT_EQ(len, 4u);
        EXPECT_EQ(r, 42);
        char text[128];
        EXPECT_EQ(weft_rpc_call(port, 2, nullptr, 0, text, sizeof text, &len, WEFT_NET_FOREVER), EREMOTEIO);
        EXPECT_EQ(std::string(text, len), "bad input");
        EXPECT_EQ(weft_rpc_call(port, 3, nullptr, 0, text, sizeof text, &len, WEFT_NET_FOREVER), EREMOTEIO);
        EXPECT_EQ(std::string(text, len), "handler of function 3 returned 34 (" + std::string(std::strerror(34)) + ")")
            << "the text weft/rpc.h documents";
        EXPECT_EQ(weft_rpc_call(port, 1, ab, sizeof ab, &r, 2, &len, WEFT_NET_FOREVER), EMSGSIZE);
        EXPECT_EQ(len, 4u) << "the reply's length";
        EXPECT_EQ(weft_rpc_call(port, 1, ab, sizeof ab, &r, sizeof r, nullptr, 0), EINVAL);
        EXPECT_EQ(weft_rpc_call(port, -2, ab, sizeof ab, &r, sizeof r, &len, 0), EINVAL);
    });
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(weft_rpc_server_destroy(s), 0);
    size_t len = 0;
    std::int32_t r = 0;
    EXPECT_EQ(weft_rpc_call(port, 1, &r, sizeof r, &r, sizeof r, &len, WEFT_NET_FOREVER), ENOENT);
}

TEST_F(Rpc, reply_ports_are_reused_and_freed_with_their_thread) {
    start(1);
    weft::rpc::server srv(svc_);
    // Many calls from one thread use one reply port: the next port created
    // gets the index right after it.
    weft_port_id_t before{};
    ASSERT_EQ(weft_net_port_create(&before, 1, 8), 0);
    for (int i = 0; i < 100; ++i) ASSERT_EQ(weft::rpc::call(srv.port(), &calc::sum, i, 1), i + 1);
    weft_port_id_t after{};
    ASSERT_EQ(weft_net_port_create(&after, 1, 8), 0);
    EXPECT_EQ(after.index, before.index + 2) << "one reply port for 100 calls";
    // A thread's reply port is destroyed when it exits: its slot is reused.
    weft_port_id_t mine{};
    run_on(0, [&] { EXPECT_EQ(weft::rpc::call(srv.port(), &calc::sum, 1, 1), 2); });
    ASSERT_EQ(weft_net_port_create(&mine, 1, 8), 0);
    EXPECT_EQ(mine.index, after.index + 1) << "the exited thread's reply port slot came back";
    EXPECT_EQ(mine.gen, 1u);
    for (auto p : {before, after, mine}) EXPECT_EQ(weft_net_port_destroy(p), 0);
}

TEST(RpcFrame, decode_checks_every_field) {
    frame f;
    f.kind = frame_kind::request;
    f.fn_id = 3;
    f.call_id = 9;
    f.reply_to = weft_port_id_t{1, 2, 3, 0};
    f.payload_len = 4;
    std::vector<unsigned char> b(kFrameHeader + 4, 0);
    encode_header(f, b.data());
    auto d = decode_frame(b.data(), b.size());
    ASSERT_EQ(d.error, frame_error::none);
    EXPECT_EQ(d.f.fn_id, 3u);
    EXPECT_EQ(d.f.call_id, 9u);
    EXPECT_EQ(d.f.reply_to.index, 2u);
    EXPECT_EQ(d.f.payload, b.data() + kFrameHeader);
    EXPECT_EQ(decode_frame(b.data(), 47).error, frame_error::truncated_header);
    EXPECT_EQ(decode_frame(b.data(), b.size() - 1).error, frame_error::truncated_payload);
    b.push_back(0);
    EXPECT_EQ(decode_frame(b.data(), b.size()).error, frame_error::trailing_bytes);
    b.pop_back();
    auto bad = [&](std::size_t at, unsigned char v, frame_error e) {
        auto c = b;
        c[at] = v;
        EXPECT_EQ(decode_frame(c.data(), c.size()).error, e) << "byte " << at;
    };
    bad(0, 0, frame_error::bad_magic);
    bad(4, 2, frame_error::bad_version);
    bad(5, 3, frame_error::bad_kind);
    bad(6, 1, frame_error::bad_flags);
    bad(12, 1, frame_error::bad_status);  // a request with a status
    bad(47, 0x10, frame_error::payload_too_large);
    f.kind = frame_kind::reply;
    encode_header(f, b.data());
    EXPECT_EQ(decode_frame(b.data(), b.size()).error, frame_error::bad_reply_to);
    f.reply_to = {};
    f.status = 5000;
    encode_header(f, b.data());
    EXPECT_EQ(decode_frame(b.data(), b.size()).error, frame_error::bad_status);
}

}  // namespace
