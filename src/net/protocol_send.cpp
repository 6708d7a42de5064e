// weft::detail::net — the protocol's sending side (protocol.hpp, steps 1-3 of
// a send): the port cache and its probes, credit, the frames, the control
// frames a thread or the progress step queues.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/wait.hpp"
#include "net/port.hpp"
#include "net/protocol.hpp"

namespace weft::detail::net {
namespace {

void unlink_credit(wait_record* rec) {
    auto* p = static_cast<peer*>(rec->queue);
    wait_list(p->cw_head, p->cw_tail).remove(rec);
}

}  // namespace

int protocol::send(const weft_port_id_t& to, const msg_header& h, const void* buf, std::size_t len) {
    peer& p = peers_[to.node];
    if (len > kWireMaxPayload) return EMSGSIZE;  // no frame carries it (wire.hpp)
    if (int d = p.dead.load(memory_order_relaxed); d != 0) return d;  // declared dead: at once
    // 1. The port: known, or probed.
    if (int rc = check_port(to, len); rc != 0) return rc;
    // 2. Credit.
    std::uint64_t charge = charge_of(len);
    std::int64_t next_look = -1;  // set when the first wait comes (no clock read on the fast path)
    spinlock_ref l(p.lock);
    l.lock();
    for (;;) {
        if (p.bye_out) {
            l.unlock();
            return ENOTCONN;
        }
        if (int d = p.dead.load(memory_order_relaxed); d != 0) {
            l.unlock();
            return d;
        }
        bool held = contains(p.held_out, slot_key(to.index, to.gen));
        bool fits = !held && p.cred_msgs != 0 && (p.cred_bytes >= charge);
        if (fits) break;
        if (!held && !p.asked) {
            p.asked = true;
            l.unlock();
            wire_header q;
            q.kind = std::uint8_t(frame_kind::credit_request);
            q.src_node = std::uint32_t(rank_);
            q.dst_node = to.node;
            queue_ctl(int(to.node), q);
            l.lock();
            continue;
        }
        // Credit or a resume comes from the peer: wait for it with an eye on
        // the peer's liveness (a dead one sends neither).
        wait_record rec;
        wait_list(p.cw_head, p.cw_tail).push_back(&rec, &p, &unlink_credit);
        if (next_look < 0) next_look = first_deadline();
        if (wait(&rec, &p.lock, next_look, "weft_net_send", &p) == ETIMEDOUT) {
            if (int d = look_at(int(to.node), &next_look); d != 0) return d;
        }
        l.lock();
    }
    p.cred_msgs -= 1;
    p.cred_bytes -= charge;
    l.unlock();
    // 3. The frame.
    wire_header wh;
    wh.kind = std::uint8_t(frame_kind::data);
    wh.tag = h.tag;
    wh.src_node = std::uint32_t(rank_);
    wh.dst_node = to.node;
    wh.dst_index = to.index;
    wh.dst_gen = to.gen;
    wh.sent_ns = monotonic_ns();
    wh.len = len;
    wh.arg0 = h.sender;  // told if the message is dropped (step 5)
    if (len <= inline_max_) {
        auto* fb = static_cast<unsigned char*>(std::malloc(kWireHeaderBytes + len));
        if (fb == nullptr) {
            give_back_credit(p, charge);
            return ENOMEM;
        }
        encode_header(wh, fb);
        if (len != 0) std::memcpy(fb + kWireHeaderBytes, buf, len);
        return link_->post(int(to.node), lane::frame, fb, kWireHeaderBytes + len, fb, nullptr);
    }
    // A long message: its header frame, then its payload as a bulk message.
    wh.flags = kFlagBulk;
    bool copy = len <= tun::net_copy_max_bytes;
    auto* fb = static_cast<unsigned char*>(std::malloc(kWireHeaderBytes));
    auto* body = copy ? static_cast<unsigned char*>(std::malloc(len)) : nullptr;
    // On the heap: a send from the caller's buffer to a peer that dies is
    // left posted when its sender gives up, and completing it later must
    // find its completion.
    auto* c = copy ? nullptr : new (std::nothrow) completion;
    if (fb == nullptr || (copy && body == nullptr) || (!copy && c == nullptr)) {
        std::free(fb);
        std::free(body);
        delete c;
        give_back_credit(p, charge);
        return ENOMEM;
    }
    encode_header(wh, fb);
    if (copy) std::memcpy(body, buf, len);
    int rc = 0;
    {
        // The peer posts its bulk receives in the order of the headers:
        // no other sender's pair comes between these two.
        lock_guard<spinlock> pair(pair_lock_);
        rc = link_->post(int(to.node), lane::frame, fb, kWireHeaderBytes, fb, nullptr);
        if (rc == 0) rc = link_->post(int(to.node), lane::bulk, copy ? body : buf, len, body, c);
        else std::free(body);
    }
    if (copy) return rc;
    if (rc != 0) {
        delete c;
        return rc;
    }
    if (int d = await_peer(*c, int(to.node)); d != 0) {
        // The caller may reuse or free buf once we return: the link lets go
        // of it first (docs/design/net.md, "A long send to a dead peer").
        link_->abandon(c);
        if (c->abandon()) delete c;  // completed meanwhile; else its completion frees it
        return d;
    }
    rc = c->result;
    delete c;
    return rc;
}

// The cache's verdict on port `to` for a message of len bytes, probing an
// unknown port: 0, ENOENT (or EPIPE: destroyed while messages were on the
// wire), EMSGSIZE.
int protocol::check_port(const weft_port_id_t& to, std::size_t len) {
    std::uint64_t key = port_key(to.node, to.index);
    for (;;) {
        cache_lock_.lock();
        auto it = cache_.find(key);
        bool known = it != cache_.end() && it->second.gen == to.gen;
        port_entry e = known ? it->second : port_entry{};
        bool stale = it != cache_.end() && it->second.gen > to.gen;  // the slot has a newer port
        cache_lock_.unlock();
        if (stale) return ENOENT;
        if (known) {
            if (e.err != 0) return e.err;
            return len > e.max_bytes ? EMSGSIZE : 0;
        }
        completion c;
        probe_lock_.lock();
        std::uint64_t id = ++probe_id_;
        probes_[id] = probe_wait{&c, int(to.node)};
        probe_lock_.unlock();
        wire_header q;
        q.kind = std::uint8_t(frame_kind::probe);
        q.src_node = std::uint32_t(rank_);
        q.dst_node = to.node;
        q.dst_index = to.index;
        q.dst_gen = to.gen;
        q.arg0 = id;
        queue_ctl(int(to.node), q);
        if (int d = await_peer(c, int(to.node)); d != 0) {
            forget_probe(id, c);
            return d;
        }
        // ENOENT is not kept: the slot may get this very ID when its node
        // creates a port there (IDs agreed on in advance, as {node, 0, 0}).
        if (c.result != 0) return c.result;
        cache_lock_.lock();
        port_entry& slot = cache_[key];
        // A newer generation's entry wins; a nack may have come meanwhile.
        if (slot.gen <= to.gen && !(slot.gen == to.gen && slot.err != 0)) {
            if (slot.gen < to.gen) slot.told.clear();
            slot.gen = to.gen;
            slot.err = c.result;
            slot.max_bytes = c.value;
        }
        cache_lock_.unlock();
    }
}

void protocol::give_back_credit(peer& p, std::uint64_t charge) {
    spinlock_ref l(p.lock);
    l.lock();
    p.cred_msgs += 1;
    p.cred_bytes += charge;
    wait_record* woken = take_credit_waiters(p);
    l.unlock();
    wake_chain(woken);
}

// Unlinks every credit waiter (p.lock held), chained through next.
wait_record* protocol::take_credit_waiters(peer& p) {
    wait_record* chain = nullptr;
    wait_list q(p.cw_head, p.cw_tail);
    while (wait_record* r = q.pop_front()) {
        r->next = chain;
        chain = r;
    }
    return chain;
}

void protocol::wake_chain(wait_record* r) {
    while (r != nullptr) {
        wait_record* next = r->next;  // read before the wake: the record dies with its waiter
        wake(r);
        r = next;
    }
}

// Posts a control frame now.
void protocol::post_ctl(int dest, const wire_header& h) {
    auto* fb = static_cast<unsigned char*>(std::malloc(kWireHeaderBytes));
    if (fb == nullptr) {
        std::fprintf(stderr, "weft: %s transport: out of memory for a control frame to node %d\n", link_->name(),
                     dest);
        return;
    }
    encode_header(h, fb);
    (void)link_->post(dest, lane::frame, fb, kWireHeaderBytes, fb, nullptr);
}

// A control frame from a thread: the next progress step posts it.
void protocol::queue_ctl(int dest, const wire_header& h) {
    ctl_lock_.lock();
    ctl_.push_back(ctl_frame{dest, h});
    ctl_lock_.unlock();
}

// A hold or resume of our port `port` to node dest.
void protocol::queue_port_ctl(int dest, frame_kind kind, const weft_port_id_t& port) {
    wire_header r;
    r.kind = std::uint8_t(kind);
    r.src_node = std::uint32_t(rank_);
    r.dst_node = port.node;
    r.dst_index = port.index;
    r.dst_gen = port.gen;
    queue_ctl(dest, r);
}

// A message of thread `sender` of node dest for port `to` failed here with
// rc: step 5 of protocol.hpp.
void protocol::nack(int dest, const weft_port_id_t& to, int rc, std::uint64_t sender) {
    wire_header r;
    r.kind = std::uint8_t(frame_kind::nack);
    r.tag = rc;
    r.src_node = std::uint32_t(rank_);
    r.dst_node = to.node;
    r.dst_index = to.index;
    r.dst_gen = to.gen;
    r.arg0 = sender;
    queue_ctl(dest, r);
}

void protocol::report_loss(std::uint32_t node, std::uint64_t sender, const weft_port_id_t& to) {
    if (int(node) == rank_ || node >= std::uint32_t(size_)) return;
    nack(int(node), to, ENOENT, sender);  // the port is gone: later sends to it fail as to any missing port
}

}  // namespace weft::detail::net
