// weft::detail::net — the protocol's receiving side (protocol.hpp, steps 4
// and 5): frames taken from the link, the order of a peer's frames behind its
// bulks, the frames acted on, and the control frames the step posts.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/wait.hpp"
#include "net/port.hpp"
#include "net/protocol.hpp"

namespace weft::detail::net {

void protocol::garbled(int source) { peers_[source].heard_ns.store(coarse_monotonic_ns(), memory_order_relaxed); }

void protocol::sent(void* done) { static_cast<completion*>(done)->complete(0, 0); }

// A frame from the link (its bytes are the link's after the call): decoded,
// then acted on now, or after its peer's earlier bulk.
void protocol::frame(const unsigned char* bytes, std::size_t n, int source) {
    // Any frame, even a malformed one, shows the peer alive.
    peers_[source].heard_ns.store(coarse_monotonic_ns(), memory_order_relaxed);
    decoded_frame f;
    wire_context ctx{std::uint32_t(size_), std::uint32_t(rank_), std::uint32_t(source)};
    if (wire_error e = decode_frame(bytes, n, ctx, &f); e != wire_error::none) {
        std::fprintf(stderr, "weft: %s transport: node %d sent a malformed frame of %zu bytes (%s: %s); dropped\n",
                     link_->name(), source, n, wire_error_name(e), f.why);
        return;
    }
    peer& p = peers_[source];
    if (!f.bulk && p.in_head == nullptr) {
        handle(p, source, f);
        return;
    }
    if (f.bulk) settle_head(p, source);
    if (f.bulk && p.in_head == nullptr && receive_direct(p, source, f)) return;
    incoming* in = new_incoming(f.bulk ? 0 : n, link_->name(), source);
    in->f = f;
    if (f.bulk) {
        post_staging(in, source);
    } else {
        std::memcpy(in->bytes, bytes, n);
        if (f.payload != nullptr) in->f.payload = in->bytes + kWireHeaderBytes;
    }
    if (p.in_tail != nullptr)
        p.in_tail->next = in;
    else
        p.in_head = in;
    p.in_tail = in;
    ++incoming_;
}

namespace {
// A bulk must be received (the peer's next ones would take its place), and a
// frame behind one must wait: nothing else can.
[[noreturn]] void out_of_memory(const char* link_name, std::size_t n, int source) {
    std::fprintf(stderr, "weft: %s transport: out of memory for a %zu-byte message from node %d\n", link_name, n,
                 source);
    std::abort();
}
}  // namespace

// An incoming with room for a frame of n bytes (none when n is 0).
incoming* protocol::new_incoming(std::size_t n, const char* link_name, int source) {
    auto* in = new (std::nothrow) incoming;
    if (in != nullptr && n != 0) in->bytes = static_cast<unsigned char*>(std::malloc(n));
    if (in == nullptr || (n != 0 && in->bytes == nullptr)) out_of_memory(link_name, n, source);
    return in;
}

// A staging buffer whose payload was put: kept as the spare if it is the
// largest yet and at most tun::net_window_bytes, else freed. A long payload's malloc
// gets fresh pages from the kernel (glibc maps, or gives back and takes
// again, a block that large), so a buffer freed after every message costs a
// page fault per 4 KiB at the next one's receive (docs/design/mpi.md, "Long
// messages").
void protocol::keep_or_free(unsigned char* body, std::size_t cap) {
    if (body == nullptr) return;
    if (cap > spare_cap_ && cap <= tun::net_window_bytes) {
        std::free(spare_body_);
        spare_body_ = body;
        spare_cap_ = cap;
    } else {
        std::free(body);
    }
}

// Posts the receive of in's bulk payload into a staging buffer (the spare
// when it is large enough).
void protocol::post_staging(incoming* in, int source) {
    std::size_t len = in->f.payload_len;
    if (spare_body_ != nullptr && spare_cap_ >= len) {
        in->body = spare_body_;
        in->body_cap = spare_cap_;
        spare_body_ = nullptr;
        spare_cap_ = 0;
    } else {
        in->body = static_cast<unsigned char*>(std::malloc(len));
        if (in->body == nullptr) out_of_memory(link_->name(), len, source);
        in->body_cap = len;
    }
    in->f.payload = in->body;
    if (link_->post_bulk_recv(source, in->body, len, &in->bulk) != 0) {
        in->bulk.active = false;
        in->f.payload_len = 0;  // delivered empty rather than never: the peer's frames after it go on
        in->f.payload = nullptr;
    }
}

// A bulk frame of a peer with nothing in its in list: its payload is received
// straight into the buffer of the receiver waiting on its port (no staging
// copy), now or, if none waits yet but the port could hand the message to
// one, once one comes within receiver_wait_ns_ (the header is held: nothing
// is received meanwhile, and the payload stays in the sender's buffer, as an
// unmatched rendezvous message stays in MPI; docs/design/mpi.md, "Long
// messages"). The receiver is claimed (port_claim), and the payload's receive
// started once the link holds the payload (start_direct): then the receive
// needs nothing more from the sender, so the claimed receiver, whose deadline
// no longer ends its wait, waits for a transfer only. True if it went so:
// handed over now, or as the peer's first incoming, which complete_bulks
// finishes (or, once its give_up_ns passed, stages).
bool protocol::receive_direct(peer& p, int source, const decoded_frame& f) {
    weft_port_id_t to{f.h.dst_node, f.h.dst_index, f.h.dst_gen, 0};
    spinlock_ref l(p.lock);
    l.lock();
    bool queued = backlog_has(p, slot_key(to.index, to.gen));  // its frames before it go first
    l.unlock();
    if (queued) return false;
    void* dst = nullptr;
    bool claimable = false;
    rx_waiter* w = port_claim(*j_, to, header_of(f), f.payload_len, &dst, &claimable);
    if (w == nullptr && !claimable) return false;
    incoming* in = new_incoming(0, link_->name(), source);
    in->f = f;
    in->claimed = w;
    in->into = dst;
    if (w == nullptr) {
        in->give_up_ns = monotonic_ns() + receiver_wait_ns_;
    } else if (start_claimed(in, source) && !in->bulk.active) {  // in (or failed) already
        hand_over(p, in);
        return true;
    }
    p.in_head = p.in_tail = in;
    ++incoming_;
    return true;
}

// Starts the receive of a claimed receiver's payload: true if it started
// (posted, or over: in, or failed); false if the link does not hold the
// payload yet (it is looked for again until tun::net_claim_wait_ns from now).
bool protocol::start_claimed(incoming* in, int source) {
    if (start_direct(in, source) != bulk_start::absent) return true;
    in->give_up_ns = monotonic_ns() + tun::net_claim_wait_ns;
    return false;
}

// The receive of a claimed receiver's payload, if the link holds it. A
// payload that could not be received is handed over empty, as a failed
// staging receive delivers its message empty.
bulk_start protocol::start_direct(incoming* in, int source) {
    bulk_start s = link_->try_bulk_recv(source, in->into, in->f.payload_len, &in->bulk);
    if (s != bulk_start::absent) in->give_up_ns = 0;
    if (s == bulk_start::failed) in->f.payload_len = 0;
    return s;
}

// A peer's first incoming whose receive has not started (held for a
// receiver, or claimed with its payload not yet in the link), looked at
// again: its receive is started if it can be (claiming the receiver that
// waits by now, for a held one), or staged when `stage` or once its
// give_up_ns passed. False while it still waits.
bool protocol::advance_unstarted(incoming* in, int source, bool stage) {
    if (in->claimed == nullptr) {
        const wire_header& h = in->f.h;
        in->claimed = port_claim(*j_, weft_port_id_t{h.dst_node, h.dst_index, h.dst_gen, 0}, header_of(in->f),
                                 in->f.payload_len, &in->into);
        if (in->claimed != nullptr && start_claimed(in, source)) return true;
    } else if (start_direct(in, source) != bulk_start::absent) {
        return true;
    }
    if (!stage && monotonic_ns() < in->give_up_ns) return false;
    stage_unstarted(in, source);
    return true;
}

// Before a peer's next bulk posts its receive: the link takes a sender's
// bulks in the order their receives are posted, so a bulk at the head of its
// in list whose receive has not started must start it first: into its
// receiver's buffer if one is claimed (or claimable now) and the link holds
// the payload, else into a staging buffer.
void protocol::settle_head(peer& p, int source) {
    incoming* in = p.in_head;
    if (in != nullptr && in->give_up_ns != 0) (void)advance_unstarted(in, source, /*stage=*/true);
}

// A bulk whose receive never started (held, or claimed with its payload not
// in the link) given up: the receiver, if claimed, looks at its port again,
// and the payload is staged.
void protocol::stage_unstarted(incoming* in, int source) {
    in->give_up_ns = 0;
    if (in->claimed != nullptr) port_release(in->claimed);
    in->claimed = nullptr;
    post_staging(in, source);
}

// A claimed receiver's payload is in its buffer: its credit is owed back, and
// the receiver gets the message (in is freed).
void protocol::hand_over(peer& p, incoming* in) {
    const wire_header& h = in->f.h;
    spinlock_ref l(p.lock);
    l.lock();
    owe_back_locked(p, in->f.h.len);
    l.unlock();
    port_hand_over(in->claimed, weft_port_id_t{h.dst_node, h.dst_index, h.dst_gen, 0}, header_of(in->f),
                   in->f.payload_len);
    delete in;
}

// Acts on the frames that waited for a bulk, each peer's in order, up to
// the first whose bulk is still on its way.
bool protocol::complete_bulks() {
    if (incoming_ == 0) return false;
    bool did = false;
    for (int r = 0; r < size_; ++r) {
        peer& p = peers_[r];
        while (incoming* in = p.in_head) {
            if (in->give_up_ns != 0 && !advance_unstarted(in, r, /*stage=*/false)) break;
            if (in->bulk.active) {
                bool flag = false;
                int rc = link_->test_bulk(&in->bulk, &flag);
                if (rc != 0) {
                    if (in->bulk.active) break;
                    in->f.payload_len = 0;
                    in->f.payload = nullptr;
                } else if (!flag) {
                    break;
                }
            }
            p.in_head = in->next;
            if (p.in_head == nullptr) p.in_tail = nullptr;
            --incoming_;
            did = true;
            if (in->claimed != nullptr) {
                hand_over(p, in);
                continue;
            }
            handle(p, r, in->f);
            std::free(in->bytes);
            keep_or_free(in->body, in->body_cap);
            delete in;
        }
    }
    return did;
}

bool protocol::flush_control() {
    ctl_lock_.lock();
    ctl_out_.swap(ctl_);
    ctl_lock_.unlock();
    std::vector<ctl_frame>& out = ctl_out_;
    for (int r = 0; r < size_; ++r) {
        if (r == rank_) continue;
        peer& p = peers_[r];
        spinlock_ref l(p.lock);
        l.lock();
        bool due = p.ret_msgs != 0 &&
                   (p.peer_asked || p.ret_msgs >= tun::net_window_msgs / 2 || p.ret_bytes >= tun::net_window_bytes / 2);
        wire_header h;
        if (due) {
            h.kind = std::uint8_t(frame_kind::credit);
            h.src_node = std::uint32_t(rank_);
            h.dst_node = std::uint32_t(r);
            h.arg0 = p.ret_msgs;
            h.arg1 = p.ret_bytes;
            p.ret_msgs = p.ret_bytes = 0;
            p.peer_asked = false;
        }
        l.unlock();
        if (due) out.push_back(ctl_frame{r, h});
    }
    for (const ctl_frame& f : out) {
        peer& p = peers_[f.dest];
        spinlock_ref l(p.lock);
        l.lock();
        bool gone = p.bye_out || p.dead.load(memory_order_relaxed) != 0;
        l.unlock();
        if (!gone) post_ctl(f.dest, f.h);
    }
    bool did = !out.empty();
    out.clear();  // keeps its capacity for the next step
    return did;
}

// A decoded frame of peer p (rank source), acted on.
void protocol::handle(peer& p, int source, const decoded_frame& f) {
    const wire_header& h = f.h;
    weft_port_id_t port{h.dst_node, h.dst_index, h.dst_gen, 0};
    switch (frame_kind(h.kind)) {
    case frame_kind::data: deliver(p, source, f); break;
    case frame_kind::credit: {
        spinlock_ref l(p.lock);
        l.lock();
        p.cred_msgs = std::min(tun::net_window_msgs, p.cred_msgs + h.arg0);
        p.cred_bytes = std::min(tun::net_window_bytes, p.cred_bytes + h.arg1);
        p.asked = false;
        wait_record* woken = take_credit_waiters(p);
        l.unlock();
        wake_chain(woken);
        break;
    }
    case frame_kind::credit_request: {
        spinlock_ref l(p.lock);
        l.lock();
        p.peer_asked = true;
        l.unlock();
        break;
    }
    case frame_kind::probe: {
        std::size_t max_bytes = 0;
        wire_header r;
        r.kind = std::uint8_t(frame_kind::probe_reply);
        r.tag = port_info(*j_, port, &max_bytes);
        r.src_node = std::uint32_t(rank_);
        r.dst_node = h.dst_node;
        r.dst_index = h.dst_index;
        r.dst_gen = h.dst_gen;
        r.arg0 = h.arg0;
        r.arg1 = max_bytes;
        queue_ctl(source, r);
        break;
    }
    case frame_kind::probe_reply: {
        if (h.arg0 == kPingId) break;  // a liveness ping's answer: the stamp above is all it is for
        probe_lock_.lock();
        auto it = probes_.find(h.arg0);
        completion* c = it != probes_.end() ? it->second.c : nullptr;
        if (c != nullptr) probes_.erase(it);
        probe_lock_.unlock();
        if (c != nullptr)
            c->complete(h.tag, h.arg1);
        else
            std::fprintf(stderr, "weft: %s transport: node %d answered a probe %llu nobody asked; dropped\n",
                         link_->name(), source, static_cast<unsigned long long>(h.arg0));
        break;
    }
    case frame_kind::nack: {
        cache_lock_.lock();
        port_entry& e = cache_[port_key(h.dst_node, h.dst_index)];
        if (e.gen < h.dst_gen) e.told.clear();
        if (e.gen <= h.dst_gen) {
            e.gen = h.dst_gen;
            e.err = h.tag;
        }
        bool tell = h.arg0 != 0 && e.gen == h.dst_gen && !contains(e.told, h.arg0);
        if (tell) e.told.push_back(h.arg0);
        cache_lock_.unlock();
        // The sending thread learns of it in its waiting receive (now or next).
        if (tell) note_loss(*j_, std::uint32_t(rank_), h.arg0, port);
        break;
    }
    case frame_kind::bye: {
        spinlock_ref l(p.lock);
        l.lock();
        p.bye_in = true;
        l.unlock();
        break;
    }
    case frame_kind::hold: {
        spinlock_ref l(p.lock);
        l.lock();
        std::uint64_t key = slot_key(h.dst_index, h.dst_gen);
        if (!contains(p.held_out, key)) p.held_out.push_back(key);
        l.unlock();
        break;
    }
    case frame_kind::resume: {
        spinlock_ref l(p.lock);
        l.lock();
        auto it = std::find(p.held_out.begin(), p.held_out.end(), slot_key(h.dst_index, h.dst_gen));
        if (it != p.held_out.end()) p.held_out.erase(it);
        wait_record* woken = take_credit_waiters(p);  // they look again: credit and holds
        l.unlock();
        wake_chain(woken);
        break;
    }
    }
}

// Step 4 of protocol.hpp: the message goes into its port now, or a copy to
// the back of its peer's backlog (its port held). Either way its credit is
// owed back from here on.
void protocol::deliver(peer& p, int source, const decoded_frame& f) {
    weft_port_id_t to{f.h.dst_node, f.h.dst_index, f.h.dst_gen, 0};
    msg_header mh = header_of(f);
    std::uint64_t key = slot_key(to.index, to.gen);
    spinlock_ref l(p.lock);
    l.lock();
    bool queued = backlog_has(p, key);  // its frames before it go first
    owe_back_locked(p, f.h.len);
    l.unlock();
    if (!queued) {
        int rc = port_try_put(*j_, to, mh, f.payload, f.payload_len);
        if (rc != EAGAIN) {
            if (rc != 0) nack(source, to, rc, mh.sender);
            return;
        }
    }
    auto* s = new (std::nothrow) staged;
    unsigned char* copy = f.payload_len != 0 ? static_cast<unsigned char*>(std::malloc(f.payload_len)) : nullptr;
    if (s == nullptr || (f.payload_len != 0 && copy == nullptr)) {
        std::fprintf(stderr, "weft: %s transport: out of memory for a %zu-byte message from node %d; dropped\n",
                     link_->name(), f.payload_len, source);
        delete s;
        return;
    }
    if (copy != nullptr) std::memcpy(copy, f.payload, f.payload_len);
    s->buf = copy;
    s->len = f.payload_len;
    s->to = to;
    s->h = mh;
    l.lock();
    if (p.bl_tail != nullptr)
        p.bl_tail->next = s;
    else
        p.bl_head = s;
    p.bl_tail = s;
    bool hold = !contains(p.held_in, key);
    if (hold) p.held_in.push_back(key);
    wait_record* w = wait_list(p.dw_head, p.dw_tail).pop_front();
    l.unlock();
    // Queued now, so this step posts it before the credit just freed
    // (flush_control): the peer holds the port before it may send more.
    if (hold) queue_port_ctl(source, frame_kind::hold, to);
    if (w != nullptr) wake(w);
}

msg_header protocol::header_of(const decoded_frame& f) {
    msg_header mh;
    mh.tag = f.h.tag;
    mh.source = f.h.src_node;
    mh.sent_ns = f.h.sent_ns;
    mh.sender = f.h.arg0;
    return mh;
}

// A data frame taken from the link: its credit is owed back to its sender (p.lock held).
// len is the length its header announced, which the sender charged: a bulk
// that could not be received (delivered empty) returns its whole charge too,
// or the sender's window would shrink by it for good.
void protocol::owe_back_locked(peer& p, std::uint64_t len) {
    p.ret_msgs += 1;
    p.ret_bytes += charge_of(len);
}

// p.lock held.
bool protocol::backlog_has(const peer& p, std::uint64_t key) {
    for (const staged* s = p.bl_head; s != nullptr; s = s->next)
        if (slot_key(s->to.index, s->to.gen) == key) return true;
    return false;
}

}  // namespace weft::detail::net
