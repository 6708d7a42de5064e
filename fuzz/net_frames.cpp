// libFuzzer target: weft's wire protocol (src/net/protocol*.cpp), the real
// code, as rank 0 of a two-rank job whose rank 1 this target plays. The job
// runs over a stand-in link (below) that the target owns (use_link_once,
// transport.hpp): what the protocol posts to rank 1 is captured here, and
// what "rank 1 sends" is whatever frames and bulks the input says.
//
// The input is a sequence of operations (FuzzedDataProvider):
//   - a data frame from the peer to one of three ports of node 0 (one with a
//     512-byte limit, so longer messages are refused) or to a port that does
//     not exist, of a length the input picks; a long one is a header frame
//     and a bulk payload sent at once, later, or with the wrong length;
//   - a control frame from the peer: credit (any amounts the decoder
//     accepts), credit_request, probe (a port of node 0, any id), probe_reply
//     and nack (any id, port and errno the decoder accepts), hold and resume
//     of the peer's port;
//   - a malformed frame: a valid one with one rule of wire.hpp broken, or
//     the input's own bytes with a broken magic;
//   - a receive on a port of node 0; an answer to node 0's pending probes; a
//     return of the credit node 0's sends used.
// Beside them node 0 runs a sender (a weft thread sending a script of
// messages to a port of the peer, waiting for probes and credit) and a
// receiver blocked on port 0 (long messages go straight into its buffer).
// At the end every bulk is sent, the ports drained, the peer asks for its
// credit, every hold is released, and the job finalizes.
//
// Invariants (each aborts with a message when broken):
//   - a malformed frame changes nothing: it is never delivered nor owed
//     credit, and the frames after it are acted on as if it had not come;
//   - credit: what node 0 returns to the peer never exceeds what the peer's
//     valid data frames took (so the peer's credit never exceeds the window),
//     and at the end, asked, it returns exactly that; node 0 sends no data
//     frame beyond the credit the peer gave it (the window, plus returns,
//     capped at the window);
//   - each port of node 0 receives the peer's valid messages to it in the
//     order sent, each once, whole (tag, length, bytes); a long message whose
//     bulk came with the wrong length arrives empty (its loss, said);
//     messages to a missing port or longer than the port's limit are nacked
//     to their sender token with ENOENT or EMSGSIZE, each once;
//   - node 0 answers each probe once, in order, with the port's state;
//     holds and resumes come in pairs for node 0's own ports, none left held;
//   - node 0's own messages reach the peer in order, whole, each bulk behind
//     its header; none gets lost, none is sent twice.
#include <fuzzer/FuzzedDataProvider.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "core/tunables.hpp"
#include "net/link.hpp"
#include "net/protocol.hpp"
#include "net/transport.hpp"
#include "net/wire.hpp"
#include "weft/weft.h"

using namespace weft::detail::net;

namespace {

[[noreturn]] __attribute__((format(printf, 1, 2))) void broken(const char* fmt, ...) {
    std::va_list ap;
    va_start(ap, fmt);
    std::fputs("net_frames: invariant broken: ", stderr);
    std::vfprintf(stderr, fmt, ap);
    std::fputc('\n', stderr);
    va_end(ap);
    std::abort();
}

using bytes = std::vector<unsigned char>;

constexpr std::uint32_t kSelf = 0;
constexpr std::uint32_t kPeer = 1;
constexpr std::size_t kFrameMax = 4032;  // as the mpi and faulty links: both paths of a message
constexpr std::size_t kInlineMax = kFrameMax - kWireHeaderBytes;
constexpr std::size_t kMaxLen = 3 * kInlineMax;  // the longest message either side sends
constexpr std::size_t kSmallPort = 512;          // port 2's max_bytes
constexpr std::size_t kPorts = 3;
// How long a wait for the protocol to act may take before it counts as never.
constexpr std::int64_t kPatienceNs = 5'000'000'000;

std::int64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The bytes of message `token`: a pattern no other message has at the same offset.
unsigned char pattern(std::uint64_t token, std::size_t i) {
    return static_cast<unsigned char>((token * 131) ^ (i * 7) ^ (i >> 8));
}
bytes payload_of(std::uint64_t token, std::size_t len) {
    bytes b(len);
    for (std::size_t i = 0; i < len; ++i) b[i] = pattern(token, i);
    return b;
}
bool intact(std::uint64_t token, const unsigned char* p, std::size_t len) {
    for (std::size_t i = 0; i < len; ++i)
        if (p[i] != pattern(token, i)) return false;
    return true;
}

// The link of rank 0 whose other end is this target: frames and bulks the
// peer sends wait in queues until the protocol's progress takes them; what
// the protocol posts to the peer is captured, and its sends finish at once.
class stand_in_link final : public link {
public:
    // --- The peer's side (the driver) ---
    void send_frame(bytes f) {
        std::lock_guard<std::mutex> g(m_);
        in_frames_.push_back(std::move(f));
    }
    void send_bulk(bytes b) {
        std::lock_guard<std::mutex> g(m_);
        in_bulks_.push_back(std::move(b));
    }
    // What rank 0 posted to the peer on lane l, oldest first: false if nothing.
    bool take_posted(lane l, bytes* out) {
        std::lock_guard<std::mutex> g(m_);
        auto& q = l == lane::frame ? out_frames_ : out_bulks_;
        if (q.empty()) return false;
        *out = std::move(q.front());
        q.pop_front();
        return true;
    }

    // --- link ---
    const char* name() const override { return "stand-in"; }
    int size() const override { return 2; }
    int rank() const override { return int(kSelf); }
    std::size_t max_frame() const override { return kFrameMax; }
    int open(link_sink* sink) override {
        sink_ = sink;
        return 0;
    }
    int post(int dest, lane l, const void* buf, std::size_t n, void* owned, void* done) override {
        if (dest != int(kPeer)) broken("rank 0 posted to rank %d, the job's other rank is %u", dest, kPeer);
        if (l == lane::frame && n > kFrameMax)
            broken("rank 0 posted a frame of %zu bytes, the link takes %zu", n, kFrameMax);
        auto* b = static_cast<const unsigned char*>(buf);
        std::lock_guard<std::mutex> g(m_);
        (l == lane::frame ? out_frames_ : out_bulks_).emplace_back(b, b + n);
        std::free(owned);
        if (done != nullptr) finished_.push_back(done);
        return 0;
    }
    bool complete_sends(bool, bool* woke) override {
        std::vector<void*> done;
        {
            std::lock_guard<std::mutex> g(m_);
            done.swap(finished_);
        }
        for (void* d : done) sink_->sent(d);
        if (woke != nullptr) *woke = !done.empty();
        return !done.empty();
    }
    bool sends_pending(bool (*)(void*, int), void*) override {
        std::lock_guard<std::mutex> g(m_);
        return !finished_.empty();
    }
    bool poll(int batch) override {
        bool did = false;
        for (int k = 0; k < batch; ++k) {
            bytes f;
            {
                std::lock_guard<std::mutex> g(m_);
                if (in_frames_.empty()) break;
                f = std::move(in_frames_.front());
                in_frames_.pop_front();
            }
            sink_->frame(f.data(), f.size(), int(kPeer));
            did = true;
        }
        return did;
    }
    int post_bulk_recv(int source, void* buf, std::size_t n, bulk_handle* h) override {
        if (source != int(kPeer)) broken("a bulk receive posted for rank %d", source);
        h->req = reinterpret_cast<std::uintptr_t>(new recv_req{buf, n});
        h->active = true;
        return 0;
    }
    bulk_start try_bulk_recv(int source, void* buf, std::size_t n, bulk_handle* h) override {
        if (source != int(kPeer)) broken("a bulk receive tried for rank %d", source);
        h->active = false;
        bool done = false;
        if (take_bulk(buf, n, &done) != 0) return bulk_start::failed;
        return done ? bulk_start::in : bulk_start::absent;
    }
    int test_bulk(bulk_handle* h, bool* done) override {
        auto* r = reinterpret_cast<recv_req*>(static_cast<std::uintptr_t>(h->req));
        int rc = take_bulk(r->buf, r->n, done);
        if (rc == 0 && !*done) return 0;
        delete r;
        h->active = false;
        return rc;
    }
    int barrier_begin() override { return 0; }
    int barrier_test(bool* done) override {
        *done = true;
        return 0;
    }
    void abandon(void*) override {}  // every post was copied
    void close() override {}

private:
    struct recv_req {
        void* buf;
        std::size_t n;
    };
    // The peer's next bulk into buf, if it sent one: EIO if its length is not
    // n (it is gone, as the faulty link's).
    int take_bulk(void* buf, std::size_t n, bool* done) {
        *done = false;
        bytes b;
        {
            std::lock_guard<std::mutex> g(m_);
            if (in_bulks_.empty()) return 0;
            b = std::move(in_bulks_.front());
            in_bulks_.pop_front();
        }
        if (b.size() != n) return EIO;
        if (n != 0) std::memcpy(buf, b.data(), n);
        *done = true;
        return 0;
    }

private:
    std::mutex m_;
    link_sink* sink_ = nullptr;
    std::deque<bytes> in_frames_, in_bulks_, out_frames_, out_bulks_;
    std::vector<void*> finished_;
};

// What a port of node 0 must receive next, or a nack the peer must get.
struct expect {
    std::int32_t tag;
    std::uint64_t token;
    std::size_t len;
    int err;  // for a nack
};

// Node 0's sender: a script of lengths sent to the peer's port in order.
struct sender_state {
    weft_port_id_t to{kPeer, 7, 1, 0};
    std::vector<std::size_t> lens;
    std::vector<int> results;
    std::atomic<bool> done{false};
};

void* sender_main(void* a) {
    auto* s = static_cast<sender_state*>(a);
    for (std::size_t i = 0; i < s->lens.size(); ++i) {
        bytes b = payload_of(i + 1, s->lens[i]);
        s->results[i] = weft_net_send(s->to, std::int32_t(i + 1), b.data(), b.size());
    }
    s->done.store(true, std::memory_order_release);
    return nullptr;
}

// Checks a message a port of node 0 received against the next one expected.
void check_received(std::deque<expect>& q, std::size_t port, int rc, const weft_net_status_t& st,
                    const unsigned char* buf) {
    if (rc != 0) broken("a receive on port %zu returned %d", port, rc);
    if (q.empty())
        broken("port %zu received tag %d (%zu bytes) that the peer never sent it validly", port, st.tag, st.len);
    expect e = q.front();
    q.pop_front();
    if (st.tag != e.tag)
        broken("port %zu received tag %d, the next the peer sent it is %d (order, loss or duplicate)", port, st.tag,
               e.tag);
    if (st.len != e.len) broken("port %zu: tag %d has %zu bytes, sent %zu", port, st.tag, st.len, e.len);
    if (st.source != kPeer) broken("port %zu: tag %d from node %u", port, st.tag, st.source);
    if (!intact(e.token, buf, st.len)) broken("port %zu: tag %d's bytes are not the ones sent", port, st.tag);
}

// Node 0's receiver on port 0: until the end marker (tag -1).
struct receiver_state {
    weft_port_id_t port{};
    std::mutex m;
    std::deque<expect> q;
};

void* receiver_main(void* a) {
    auto* r = static_cast<receiver_state*>(a);
    bytes buf(kMaxLen + 1);
    for (;;) {
        weft_net_status_t st{};
        int rc = weft_net_recv(r->port, buf.data(), buf.size(), &st, WEFT_NET_FOREVER);
        std::lock_guard<std::mutex> g(r->m);
        check_received(r->q, 0, rc, st, buf.data());
        if (st.tag == -1) {
            if (!r->q.empty()) broken("port 0 received the end marker before %zu messages", r->q.size());
            return nullptr;
        }
    }
}

class driver {
public:
    explicit driver(FuzzedDataProvider& in) : in_(in) {}

    void run() {
        auto owned = std::make_unique<stand_in_link>();
        link_ = owned.get();
        use_link_once(std::move(owned), "stand-in");
        if (int rc = weft_net_init(nullptr); rc != 0) broken("weft_net_init over the stand-in link: %d", rc);
        const std::size_t limits[kPorts] = {kMaxLen + 1, kMaxLen + 1, kSmallPort};
        for (std::size_t i = 0; i < kPorts; ++i) {
            std::size_t msgs = in_.ConsumeIntegralInRange<std::size_t>(1, 4);  // small: full ports, holds
            if (weft_net_port_create(&ports_[i], msgs, limits[i]) != 0) broken("port_create");
            limit_[i] = limits[i];
        }
        rx_.port = ports_[0];
        // Up to past the window (weft::detail::tun::net_window_msgs), so that node 0 must wait for credit.
        std::size_t sends = in_.ConsumeIntegralInRange<std::size_t>(0, weft::detail::tun::net_window_msgs + 8);
        std::vector<std::size_t> lens;
        for (std::size_t i = 0; i < std::min<std::size_t>(sends, 8); ++i) lens.push_back(pick_len());
        for (std::size_t i = 0; i < sends; ++i) tx_.lens.push_back(lens[i % lens.size()]);
        tx_.results.assign(sends, -1);
        if (weft_net_spawn(&rx_thread_, int(kSelf), nullptr, &receiver_main, &rx_) != 0) broken("spawn receiver");
        if (weft_net_spawn(&tx_thread_, int(kSelf), nullptr, &sender_main, &tx_) != 0) broken("spawn sender");

        for (int ops = 0; ops < 256 && in_.remaining_bytes() > 0; ++ops) {
            step();
            service(false);
        }
        finish();
    }

private:
    std::size_t pick_len() {
        switch (in_.ConsumeIntegralInRange<int>(0, 3)) {
        case 0: return 0;
        case 1: return in_.ConsumeIntegralInRange<std::size_t>(1, 64);
        case 2: return in_.ConsumeIntegralInRange<std::size_t>(kInlineMax - 2, kInlineMax + 2);
        default: return in_.ConsumeIntegralInRange<std::size_t>(1, kMaxLen);
        }
    }

    static bytes frame_of(const wire_header& h, const bytes& payload = {}) {
        bytes f(kWireHeaderBytes + payload.size());
        encode_header(h, f.data());
        if (!payload.empty()) std::memcpy(f.data() + kWireHeaderBytes, payload.data(), payload.size());
        return f;
    }
    static wire_header header(frame_kind k) {
        wire_header h;
        h.kind = std::uint8_t(k);
        h.src_node = kPeer;
        h.dst_node = kSelf;
        return h;
    }

    void step() {
        switch (in_.ConsumeIntegralInRange<int>(0, 9)) {
        case 0:
        case 1: send_data(); break;
        case 2: send_control(); break;
        case 3: send_malformed(); break;
        case 4: try_receive(); break;
        case 5: answer_probes(in_.ConsumeBool() ? 0 : ENOENT); break;
        case 6: return_credit(in_.ConsumeIntegralInRange<std::uint64_t>(0, weft::detail::tun::net_window_msgs)); break;
        case 7: send_deferred_bulks(in_.ConsumeIntegralInRange<std::size_t>(0, 2)); break;
        case 8: weft_thread_yield(); break;  // the workers' progress catches up
        default: send_control(); break;
        }
    }

    // A valid data frame (and its bulk) to a port of node 0, or to a missing one.
    void send_data() {
        std::size_t which = in_.ConsumeIntegralInRange<std::size_t>(0, kPorts);  // kPorts: missing
        std::size_t len = pick_len();
        int bulk_mode = in_.ConsumeIntegralInRange<int>(0, 2);  // now, later, wrong length
        send_message(which, len, bulk_mode);
    }

    void send_message(std::size_t which, std::size_t len, int bulk_mode, std::int32_t tag = 0) {
        std::uint64_t token = ++tokens_;
        if (tag == 0) tag = std::int32_t(token);
        weft_port_id_t to = which < kPorts ? ports_[which] : weft_port_id_t{kSelf, 4000, 1, 0};
        wire_header h = header(frame_kind::data);
        h.tag = tag;
        h.dst_index = to.index;
        h.dst_gen = to.gen;
        h.len = len;
        h.arg0 = token;
        h.sent_ns = 1;
        bytes body = payload_of(token, len);
        bool bulk = len > kInlineMax;
        std::size_t arrives = bulk && bulk_mode == 2 ? 0 : len;  // a wrong-length bulk: delivered empty
        owed_msgs_ += 1;
        owed_bytes_ += charge_of(len);
        // Queued before the frame goes: the receiver may take it at once.
        if (which == kPorts || arrives > limit_[which]) {
            nacks_.push_back(expect{tag, token, 0, which == kPorts ? ENOENT : EMSGSIZE});
        } else if (which == 0) {
            std::lock_guard<std::mutex> g(rx_.m);
            rx_.q.push_back(expect{tag, token, arrives, 0});
        } else {
            q_[which].push_back(expect{tag, token, arrives, 0});
        }
        if (!bulk) {
            link_->send_frame(frame_of(h, body));
            return;
        }
        h.flags = kFlagBulk;
        link_->send_frame(frame_of(h));
        if (bulk_mode == 2) body.push_back(0);
        if (bulk_mode == 1 || !deferred_.empty()) {  // a peer's bulks keep their order
            deferred_.push_back(std::move(body));
            return;
        }
        link_->send_bulk(std::move(body));
    }

    void send_deferred_bulks(std::size_t n) {
        for (; n != 0 && !deferred_.empty(); --n) {
            link_->send_bulk(std::move(deferred_.front()));
            deferred_.pop_front();
        }
    }

    void send_control() {
        auto kind = frame_kind(in_.ConsumeIntegralInRange<int>(2, 9));
        wire_header h = header(kind);
        switch (kind) {
        case frame_kind::credit:  // more than node 0 used, maybe: it keeps at most its window
            h.arg0 = in_.ConsumeIntegralInRange<std::uint64_t>(0, kWireMaxCreditMsgs);
            h.arg1 = in_.ConsumeIntegralInRange<std::uint64_t>(0, kWireMaxPayload);
            cred_msgs_ += std::min(h.arg0, weft::detail::tun::net_window_msgs);
            cred_bytes_ += std::min(h.arg1, weft::detail::tun::net_window_bytes);
            break;
        case frame_kind::credit_request: break;
        case frame_kind::probe: {
            std::size_t which = in_.ConsumeIntegralInRange<std::size_t>(0, kPorts);
            weft_port_id_t to = which < kPorts ? ports_[which] : weft_port_id_t{kSelf, 4000, 1, 0};
            h.dst_index = to.index;
            h.dst_gen = to.gen;
            h.arg0 = in_.ConsumeIntegral<std::uint64_t>();
            replies_.push_back(expect{0, h.arg0, which < kPorts ? limit_[which] : 0, which < kPorts ? 0 : ENOENT});
            break;
        }
        case frame_kind::probe_reply:
        case frame_kind::nack:
            h.dst_node = kPeer;
            h.dst_index = in_.ConsumeIntegralInRange<std::uint32_t>(0, 9);
            h.dst_gen = in_.ConsumeIntegralInRange<std::uint32_t>(0, 2);
            h.tag = in_.ConsumeIntegralInRange<std::int32_t>(kind == frame_kind::nack ? 1 : 0, 4095);
            // A probe id node 0 may have used; a sender token no thread has
            // (a nack's would end that thread's receive with ECONNABORTED).
            h.arg0 = in_.ConsumeIntegralInRange<std::uint64_t>(0, 8) | (kind == frame_kind::nack ? 1ull << 63 : 0);
            h.arg1 = in_.ConsumeIntegralInRange<std::uint64_t>(0, 1 << 20);
            break;
        case frame_kind::hold:
        case frame_kind::resume:
            h.dst_node = kPeer;
            h.dst_index = in_.ConsumeBool() ? tx_.to.index : 3;
            h.dst_gen = tx_.to.gen;
            break;
        case frame_kind::bye:  // only at the end
        case frame_kind::data: h.kind = std::uint8_t(frame_kind::credit_request); break;
        }
        link_->send_frame(frame_of(h));
    }

    // A frame that breaks one rule of wire.hpp: nothing may come of it.
    void send_malformed() {
        auto kind = frame_kind(in_.ConsumeIntegralInRange<int>(1, 9));
        wire_header h = header(kind);
        h.dst_index = ports_[1].index;
        h.dst_gen = ports_[1].gen;
        h.tag = 5;
        h.arg0 = ++tokens_;
        if (kind == frame_kind::hold || kind == frame_kind::resume) h.dst_node = kPeer;
        if (kind == frame_kind::nack) h.dst_node = kPeer;
        std::size_t follows = 0;
        if (kind == frame_kind::data) {
            follows = in_.ConsumeIntegralInRange<std::size_t>(0, 16);
            h.len = follows;
        }
        bytes f;
        switch (in_.ConsumeIntegralInRange<int>(0, 15)) {
        case 0: {  // truncated
            bytes whole = frame_of(h, bytes(follows, 1));
            whole.resize(in_.ConsumeIntegralInRange<std::size_t>(0, kWireHeaderBytes - 1));
            link_->send_frame(std::move(whole));
            return;
        }
        case 1: h.magic ^= in_.ConsumeIntegralInRange<std::uint32_t>(1, UINT32_MAX); break;
        case 2: h.version = std::uint8_t(kWireVersion + in_.ConsumeIntegralInRange<int>(1, 255)); break;
        case 3: h.kind = in_.ConsumeBool() ? 0 : in_.ConsumeIntegralInRange<std::uint8_t>(10, 255); break;
        case 4: h.flags |= std::uint16_t(1u << in_.ConsumeIntegralInRange<int>(1, 15)); break;
        case 5: h.reserved = in_.ConsumeIntegralInRange<std::uint32_t>(1, UINT32_MAX); break;
        case 6:  // the bulk flag on a control frame, or a bulk frame with bytes after it or no len
            h.flags = kFlagBulk;
            if (kind == frame_kind::data) {
                h.len = follows == 0 ? 0 : h.len;
                if (follows == 0 && in_.ConsumeBool()) follows = 1, h.len = 1 + kInlineMax;
            }
            break;
        case 7: h.len = kWireMaxPayload + in_.ConsumeIntegralInRange<std::uint64_t>(1, 1 << 20); break;
        case 8: h.len = follows + in_.ConsumeIntegralInRange<std::uint64_t>(1, 64); break;
        case 9:
            h.src_node = in_.ConsumeBool() ? kSelf : in_.ConsumeIntegralInRange<std::uint32_t>(2, UINT32_MAX);
            break;
        case 10: h.dst_node = in_.ConsumeIntegralInRange<std::uint32_t>(2, UINT32_MAX); break;
        case 11:  // data or probe for a port of another node; hold or resume of a port not the sender's
            if (kind == frame_kind::data || kind == frame_kind::probe)
                h.dst_node = kPeer;
            else if (kind == frame_kind::hold || kind == frame_kind::resume)
                h.dst_node = kSelf;
            else
                h.magic = 0;
            break;
        case 12:  // a control frame with a payload
            if (kind == frame_kind::data) h.version = 0;
            follows = in_.ConsumeIntegralInRange<std::size_t>(1, 16);
            h.len = follows;
            break;
        case 13:  // a credit too large
            h.kind = std::uint8_t(frame_kind::credit);
            h.len = 0, follows = 0, h.dst_node = kSelf;
            if (in_.ConsumeBool())
                h.arg0 = kWireMaxCreditMsgs + in_.ConsumeIntegralInRange<std::uint64_t>(1, 1 << 20);
            else
                h.arg1 = kWireMaxPayload + in_.ConsumeIntegralInRange<std::uint64_t>(1, 1 << 20);
            break;
        case 14:  // an errno out of range, or a nack of none
            h.kind = std::uint8_t(in_.ConsumeBool() ? frame_kind::nack : frame_kind::probe_reply);
            h.len = 0, follows = 0;
            h.tag = in_.ConsumeBool() ? -in_.ConsumeIntegralInRange<std::int32_t>(1, 1000)
                                      : in_.ConsumeIntegralInRange<std::int32_t>(4096, 1 << 20);
            if (h.kind == std::uint8_t(frame_kind::nack) && in_.ConsumeBool()) h.tag = 0;
            break;
        default: {  // the input's own bytes, never a weft frame
            f = in_.ConsumeBytes<unsigned char>(in_.ConsumeIntegralInRange<std::size_t>(0, 200));
            if (f.size() >= 4) f[0] = static_cast<unsigned char>(~kWireMagic & 0xff);
            link_->send_frame(std::move(f));
            return;
        }
        }
        link_->send_frame(frame_of(h, bytes(follows, 1)));
    }

    void try_receive() {
        std::size_t which = in_.ConsumeIntegralInRange<std::size_t>(1, kPorts - 1);
        weft_net_status_t st{};
        int rc = weft_net_try_recv(ports_[which], buf_.data(), buf_.size(), &st);
        if (rc == EAGAIN) return;
        check_received(q_[which], which, rc, st, buf_.data());
    }

    // Node 0's probes of the peer's port, answered: it exists (max_bytes
    // kMaxLen) or not.
    void answer_probes(int err) {
        for (const wire_header& p : probes_) {
            wire_header h = header(frame_kind::probe_reply);
            h.dst_node = p.dst_node;
            h.dst_index = p.dst_index;
            h.dst_gen = p.dst_gen;
            h.tag = err;
            h.arg0 = p.arg0;
            h.arg1 = err == 0 ? kMaxLen : 0;
            link_->send_frame(frame_of(h));
        }
        probes_.clear();
    }

    // Credit for up to n of node 0's data frames the peer has taken.
    void return_credit(std::uint64_t n) {
        n = std::min(n, used_msgs_);
        if (n == 0) return;
        std::uint64_t b = n == used_msgs_ ? used_bytes_ : 0;
        wire_header h = header(frame_kind::credit);
        h.arg0 = n;
        h.arg1 = b;
        used_msgs_ -= n;
        used_bytes_ -= b;
        cred_msgs_ += n;
        cred_bytes_ += b;
        link_->send_frame(frame_of(h));
    }

    // What node 0 posted to the peer, checked (and probes kept for an answer).
    void service(bool at_end) {
        bytes f;
        while (link_->take_posted(lane::frame, &f)) {
            decoded_frame d;
            wire_context ctx{2, kPeer, kSelf};
            if (wire_error e = decode_frame(f.data(), f.size(), ctx, &d); e != wire_error::none)
                broken("node 0 sent a frame the peer cannot decode: %s (%s)", wire_error_name(e), d.why);
            const wire_header& h = d.h;
            switch (frame_kind(h.kind)) {
            case frame_kind::data: on_data(d); break;
            case frame_kind::credit:
                returned_msgs_ += h.arg0;
                returned_bytes_ += h.arg1;
                if (returned_msgs_ > owed_msgs_ || returned_bytes_ > owed_bytes_)
                    broken(
                        "node 0 returned credit for %llu messages and %llu bytes; the peer's valid data frames "
                        "took %llu and %llu (its credit would exceed the window)",
                        (unsigned long long)returned_msgs_, (unsigned long long)returned_bytes_,
                        (unsigned long long)owed_msgs_, (unsigned long long)owed_bytes_);
                break;
            case frame_kind::credit_request: break;
            case frame_kind::probe: probes_.push_back(h); break;
            case frame_kind::probe_reply: {
                if (replies_.empty())
                    broken("node 0 answered probe %llu the peer never sent", (unsigned long long)h.arg0);
                expect e = replies_.front();
                replies_.pop_front();
                if (h.arg0 != e.token || h.tag != e.err || (e.err == 0 && h.arg1 != e.len))
                    broken(
                        "node 0 answered probe %llu with (id %llu, errno %d, max_bytes %llu); expected errno %d, "
                        "max_bytes %zu",
                        (unsigned long long)e.token, (unsigned long long)h.arg0, h.tag, (unsigned long long)h.arg1,
                        e.err, e.len);
                break;
            }
            case frame_kind::nack: {
                auto it = nacks_.begin();
                while (it != nacks_.end() && it->token != h.arg0) ++it;
                if (it == nacks_.end())
                    broken("node 0 nacked sender token %llu (errno %d), which no refused message carried",
                           (unsigned long long)h.arg0, h.tag);
                if (h.tag != it->err)
                    broken("node 0 nacked tag %d with errno %d, expected %d", it->tag, h.tag, it->err);
                nacks_.erase(it);
                break;
            }
            case frame_kind::bye:
                if (!at_end) broken("node 0 said bye before its finalize");
                break;
            case frame_kind::hold:
            case frame_kind::resume: {
                bool ours = false;
                for (const auto& p : ports_) ours |= p.index == h.dst_index && p.gen == h.dst_gen;
                if (!ours)
                    broken("node 0 sent a hold or resume of port %u.%u, not one of its ports", h.dst_index, h.dst_gen);
                std::uint64_t key = slot_key(h.dst_index, h.dst_gen);
                auto it = std::find(held_.begin(), held_.end(), key);
                if (frame_kind(h.kind) == frame_kind::hold) {
                    if (it != held_.end()) broken("node 0 held port %u twice without a resume", h.dst_index);
                    held_.push_back(key);
                } else {
                    if (it == held_.end()) broken("node 0 resumed port %u, which it did not hold", h.dst_index);
                    held_.erase(it);
                }
                break;
            }
            }
        }
        // Only the bulks of headers taken: a header posted since is taken next time.
        bytes b;
        while (!bulks_.empty() && link_->take_posted(lane::bulk, &b)) {
            auto [tag, len] = bulks_.front();
            bulks_.pop_front();
            if (b.size() != len || !intact(std::uint64_t(tag), b.data(), len))
                broken("node 0's bulk of tag %d: %zu bytes, not the %zu sent", tag, b.size(), len);
        }
    }

    void on_data(const decoded_frame& d) {
        const wire_header& h = d.h;
        if (cred_msgs_ == 0 || cred_bytes_ < charge_of(h.len))
            broken("node 0 sent tag %d with %llu messages' and %llu bytes' credit left (its window is %llu, %llu)",
                   h.tag, (unsigned long long)cred_msgs_, (unsigned long long)cred_bytes_,
                   (unsigned long long)weft::detail::tun::net_window_msgs, (unsigned long long)weft::detail::tun::net_window_bytes);
        cred_msgs_ -= 1;
        cred_bytes_ -= charge_of(h.len);
        used_msgs_ += 1;
        used_bytes_ += charge_of(h.len);
        if (h.dst_node != tx_.to.node || h.dst_index != tx_.to.index || h.dst_gen != tx_.to.gen)
            broken("node 0 sent tag %d to port %u.%u.%u, its sender sends to %u.%u.%u only", h.tag, h.dst_node,
                   h.dst_index, h.dst_gen, tx_.to.node, tx_.to.index, tx_.to.gen);
        if (h.tag <= last_tx_tag_ || std::size_t(h.tag) > tx_.lens.size())
            broken("node 0 sent tag %d after tag %d (its sender's tags are 1 to %zu, in order, once)", h.tag,
                   last_tx_tag_, tx_.lens.size());
        last_tx_tag_ = h.tag;
        sent_tags_.push_back(h.tag);
        std::size_t len = tx_.lens[std::size_t(h.tag) - 1];
        if (h.len != len) broken("node 0 sent tag %d with len %llu, not %zu", h.tag, (unsigned long long)h.len, len);
        if (d.bulk) {
            bulks_.emplace_back(h.tag, len);
        } else if (!intact(std::uint64_t(h.tag), d.payload, d.payload_len)) {
            broken("node 0's frame of tag %d carries other bytes than sent", h.tag);
        }
    }

    // Runs service until done() or kPatienceNs passed (then `what` is broken).
    template <class F>
    void until(F done, const char* what) {
        until(done, [what] { broken("%s", what); });
    }
    template <class F, class G>
    void until(F done, G fail) {
        std::int64_t deadline = now_ns() + kPatienceNs;
        while (!done()) {
            service(false);
            if (now_ns() > deadline) fail();
            weft_thread_yield();  // this is weft's main thread: the workers' progress and the other threads run
        }
    }

    void finish() {
        send_deferred_bulks(deferred_.size());
        send_message(0, 0, 0, -1);  // the receiver's end marker
        // Node 0's sender gets every answer it waits for: probes, credit, resumes.
        for (std::uint32_t index : {tx_.to.index, 3u}) {
            wire_header h = header(frame_kind::resume);
            h.dst_node = kPeer;
            h.dst_index = index;
            h.dst_gen = tx_.to.gen;
            link_->send_frame(frame_of(h));
        }
        until(
            [&] {
                answer_probes(0);
                return_credit(used_msgs_);
                return tx_.done.load(std::memory_order_acquire);
            },
            [&] {
                std::size_t at = 0;
                while (at < tx_.results.size() && tx_.results[at] != -1) ++at;
                broken(
                    "node 0's sender never finished its send %zu of %zu (a probe, credit or resume lost; "
                    "the peer took %zu of its data frames)",
                    at + 1, tx_.results.size(), sent_tags_.size());
            });
        (void)weft_thread_join(tx_thread_, nullptr);
        service(false);  // what it posted last
        (void)weft_thread_join(rx_thread_, nullptr);
        for (std::size_t which = 1; which < kPorts; ++which) {
            while (!q_[which].empty()) {
                weft_net_status_t st{};
                int rc = weft_net_recv(ports_[which], buf_.data(), buf_.size(), &st, kPatienceNs);
                if (rc == ETIMEDOUT)
                    broken("port %zu never received tag %d (%zu more)", which, q_[which].front().tag, q_[which].size());
                check_received(q_[which], which, rc, st, buf_.data());
            }
            weft_net_status_t st{};
            if (int rc = weft_net_try_recv(ports_[which], buf_.data(), buf_.size(), &st); rc != EAGAIN)
                broken("port %zu holds more than the peer sent it (try_recv: %d, tag %d)", which, rc, st.tag);
        }
        link_->send_frame(frame_of(header(frame_kind::credit_request)));
        until([&] { return returned_msgs_ == owed_msgs_ && returned_bytes_ == owed_bytes_; },
              [&] {
                  broken(
                      "node 0 returned credit for %llu of the %llu messages and %llu of the %llu bytes the peer's "
                      "data frames took, and no more",
                      (unsigned long long)returned_msgs_, (unsigned long long)owed_msgs_,
                      (unsigned long long)returned_bytes_, (unsigned long long)owed_bytes_);
              });
        until([&] { return replies_.empty(); }, "node 0 never answered a probe");
        until([&] { return nacks_.empty(); }, "a message node 0 refused was never nacked");
        until([&] { return held_.empty(); }, "node 0 left a port held after its backlog drained");
        // Every send that returned 0 reached the peer, whole; no other did.
        for (std::size_t i = 0; i < tx_.results.size(); ++i) {
            bool sent = std::find(sent_tags_.begin(), sent_tags_.end(), std::int32_t(i + 1)) != sent_tags_.end();
            if (sent != (tx_.results[i] == 0))
                broken("node 0's send of tag %zu returned %d but was %s", i + 1, tx_.results[i],
                       sent ? "sent" : "never sent");
        }
        until([&] { return bulks_.empty(); }, "node 0 never posted the bulk of a long message");
        if (bytes b; link_->take_posted(lane::bulk, &b))
            broken("node 0 posted a bulk of %zu bytes behind no bulk header", b.size());
        link_->send_frame(frame_of(header(frame_kind::bye)));
        if (int rc = weft_net_finalize(); rc != 0) broken("weft_net_finalize: %d", rc);  // frees link_
    }

    FuzzedDataProvider& in_;
    stand_in_link* link_ = nullptr;
    weft_port_id_t ports_[kPorts]{};
    std::size_t limit_[kPorts]{};
    std::deque<expect> q_[kPorts];  // ports 1 and 2 (port 0: the receiver's)
    std::deque<expect> nacks_, replies_;
    std::deque<bytes> deferred_;
    std::deque<wire_header> probes_;
    std::deque<std::pair<std::int32_t, std::size_t>> bulks_;
    std::vector<std::uint64_t> held_;
    std::vector<std::int32_t> sent_tags_;
    std::int32_t last_tx_tag_ = 0;
    std::uint64_t tokens_ = 0;
    // The peer's account of node 0's credit: at most the window plus what
    // each credit frame gave (at most a window each: node 0 keeps no more),
    // less its data frames; and of its own frames (owed, returned).
    std::uint64_t cred_msgs_ = weft::detail::tun::net_window_msgs, cred_bytes_ = weft::detail::tun::net_window_bytes;
    std::uint64_t used_msgs_ = 0, used_bytes_ = 0;
    std::uint64_t owed_msgs_ = 0, owed_bytes_ = 0, returned_msgs_ = 0, returned_bytes_ = 0;
    receiver_state rx_;
    sender_state tx_;
    weft_thread_t rx_thread_ = nullptr, tx_thread_ = nullptr;
    bytes buf_ = bytes(kMaxLen + 1);
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    FuzzedDataProvider in(data, size);
    driver(in).run();
    return 0;
}
