// weft::detail::net — the protocol's liveness (docs/design/mpi.md, "A rank
// that dies").
//
// Only a thread that waits for a peer's answer watches it: the wait has a
// deadline one look interval (timeout / tun::net_liveness_looks) ahead, and when it
// passes the thread looks (look_at()):
//   1. the peer is dead already: the wait ends with kPeerDead;
//   2. it has been silent for the whole timeout and a ping sent at least one
//      interval ago is unanswered: this rank's own progress runs first (the
//      answer may be waiting in the link while this rank was not scheduled),
//      and if nothing came, the peer is declared dead (declare_dead());
//   3. it has been silent for an interval, and not pinged in the last one:
//      a ping goes to it (posted at once, so that step 2 measures from when
//      it left), and any live peer's progress answers it;
//   4. the next look is one interval ahead.
// A live peer thus answers at least every interval while anyone waits on it,
// whatever it has to send, and a rank that was itself not running (all its
// workers computing, or the process stopped) never declares a peer dead
// before it has asked it and let its own progress look for the answer.
#include <cstdio>
#include <vector>

#include "core/wait.hpp"
#include "net/protocol.hpp"

namespace weft::detail::net {

// The deadline of a first wait on a peer: one look interval ahead, or 0 (no
// deadline) when the timeout is off.
std::int64_t protocol::first_deadline() const {
    return timeout_ns_ == 0 ? 0 : monotonic_ns() + timeout_ns_ / tun::net_liveness_looks;
}

std::int64_t protocol::first_look(std::uint32_t node) const {
    return int(node) == rank_ || node >= std::uint32_t(size_) ? 0 : first_deadline();
}

int protocol::look(std::uint32_t node, std::int64_t* next_ns) {
    if (timeout_ns_ == 0 || int(node) == rank_ || node >= std::uint32_t(size_)) {
        *next_ns = 0;
        return 0;
    }
    return look_at(int(node), next_ns);
}

// A waiter's look at peer r once its deadline passed (steps above): 0 and
// the next deadline in *next, or kPeerDead.
int protocol::look_at(int r, std::int64_t* next) {
    peer& p = peers_[r];
    const std::int64_t interval = timeout_ns_ / tun::net_liveness_looks;
    *next = monotonic_ns() + interval;
    std::int64_t now = coarse_monotonic_ns();  // the clock of heard_ns and pinged_ns
    spinlock_ref l(p.lock);
    l.lock();
    if (int d = p.dead.load(memory_order_relaxed); d != 0) {
        l.unlock();
        return d;
    }
    std::int64_t heard = p.heard_ns.load(memory_order_relaxed);
    std::int64_t pinged = p.pinged_ns;
    l.unlock();
    if (now - heard >= timeout_ns_ && pinged > heard && now - pinged >= interval) {
        // 2. Receive what has come: this rank may have been the one not running.
        for (int i = 0; i < tun::net_drain_steps && p.heard_ns.load(memory_order_relaxed) < pinged; ++i) {
            progress_lock_.lock();
            bool did = step();
            progress_lock_.unlock();
            if (!did) break;
        }
        heard = p.heard_ns.load(memory_order_relaxed);
        if (heard < pinged) return declare_dead(r, coarse_monotonic_ns() - heard);
    }
    if (now - heard >= interval && now - pinged >= interval) ping(r);  // 3.
    return 0;
}

// Step 3: a probe of id kPingId (of port {r, 0, 0}: any port will do, the
// answer is all it asks for), posted now.
void protocol::ping(int r) {
    wire_header q;
    q.kind = std::uint8_t(frame_kind::probe);
    q.src_node = std::uint32_t(rank_);
    q.dst_node = std::uint32_t(r);
    q.arg0 = kPingId;
    post_ctl(r, q);
    peer& p = peers_[r];
    spinlock_ref l(p.lock);
    l.lock();
    p.pinged_ns = coarse_monotonic_ns();
    l.unlock();
}

// Declares peer r dead (once): its credit waiters and probe waiters wake
// with kPeerDead; a large send waiting on it sees it at its next look.
int protocol::declare_dead(int r, std::int64_t silent_ns) {
    peer& p = peers_[r];
    spinlock_ref l(p.lock);
    l.lock();
    if (p.dead.load(memory_order_relaxed) != 0) {  // another waiter was first
        l.unlock();
        return kPeerDead;
    }
    p.dead.store(kPeerDead, memory_order_relaxed);
    wait_record* woken = take_credit_waiters(p);  // they look again and find it dead
    l.unlock();
    link_->peer_dead(r);
    std::fprintf(stderr, "weft: %s transport: node %d answered nothing for %.1f s; declared dead\n", link_->name(), r,
                 double(silent_ns) / 1e9);
    wake_chain(woken);
    std::vector<completion*> probes;
    probe_lock_.lock();
    for (auto it = probes_.begin(); it != probes_.end();) {
        if (it->second.node == r) {
            probes.push_back(it->second.c);
            it = probes_.erase(it);
        } else {
            ++it;
        }
    }
    probe_lock_.unlock();
    for (completion* c : probes) c->complete(kPeerDead, 0);
    return kPeerDead;
}

bool protocol::any_dead() const {
    for (int r = 0; r < size_; ++r)
        if (peers_[r].dead.load(memory_order_relaxed) != 0) return true;
    return false;
}

// Waits for c, an answer of peer r, watching r's liveness: 0 once c is
// done, or kPeerDead.
int protocol::await_peer(completion& c, int r) {
    std::int64_t next = first_deadline();
    for (;;) {
        if (c.await_until(next, "weft_net_send", &peers_[r])) return 0;
        if (int d = look_at(r, &next); d != 0) return d;
    }
}

// A probe whose waiter gives up: out of the map, or, if a reply or a
// declaration took it out first, completed by it (at once) before c goes.
void protocol::forget_probe(std::uint64_t id, completion& c) {
    probe_lock_.lock();
    bool mine = probes_.erase(id) != 0;
    probe_lock_.unlock();
    if (!mine) c.await("weft_net_send", &c);
}

}  // namespace weft::detail::net
