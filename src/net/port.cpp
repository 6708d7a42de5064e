// Ports: create, destroy, put (the send side) and receive, with their waits.
//
// Every wait here is the core's blocking protocol (core/wait.hpp), the one
// src/sync's primitives use: link a record under a spinlock, call wait() with
// that lock (released once the caller is suspended), and a waker unlinks the
// record under the same lock, releases it, then calls wake(). A deadline is
// the core's timer (core/timer.hpp), which unlinks and wakes with ETIMEDOUT.
//
//   blocked sender    a wait_record in the port's tx wait_list, under the
//                     port's lock; woken by a receive that frees room (result
//                     0: it retries) or by destroy (EPIPE).
//   blocked receiver  an rx_waiter; one rx_link per port it waits on.
//                     One port: its record's `linked` is guarded by the port's
//                     lock, which is its wait lock, and a sender may copy a
//                     message straight into its buffer (the hand-off: one copy,
//                     no allocation), or a transport claim it and have its
//                     bytes land there (port_claim, port_hand_over). Several
//                     ports: `linked` is guarded by the
//                     waiter's own selector lock; a sender claims it under that
//                     lock (lock order: port, then selector), and the waiter
//                     takes its other links back after it wakes.
//
// Lock order: node table -> never held with a port's; port -> selector.
#include "net/port.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/progress.hpp"
#include "core/tunables.hpp"
#include "core/ult.hpp"
#include "core/wait.hpp"
#include "core/worker.hpp"
#include "sync/wait_list.hpp"

namespace weft::detail::net {

struct rx_waiter {
    wait_record rec;
    std::uint32_t sel_lock = 0;  // several ports: guards rec.linked
    bool any = false;
    // One port: the hand-off target, written by the sender that claims it.
    void* buf = nullptr;
    std::size_t cap = 0;
    bool handed = false;
    weft_net_status_t st{};
    // A one-port receiver that polls a transport instead of blocking
    // (recv_one): whoever claims it sets `roused` (release) instead of waking
    // it, after the hand-off or rec.result, and touches it no more.
    bool polling = false;
    atomic<bool> roused{false};
};

struct rx_link {
    rx_link* next = nullptr;
    rx_link* prev = nullptr;
    bool linked = false;  // guarded by the port's lock
    rx_waiter* w = nullptr;
    port* p = nullptr;
};

message* make_message(const msg_header& h, const void* buf, std::size_t len) {
    if (len > SIZE_MAX - sizeof(message)) return nullptr;  // the callers bound len first; never wrap
    void* mem = std::malloc(sizeof(message) + len);
    if (mem == nullptr) return nullptr;
    auto* m = new (mem) message;
    m->h = h;
    m->len = len;
    if (len != 0) std::memcpy(m->bytes(), buf, len);
    return m;
}

void free_message(message* m) { std::free(m); }

namespace {

port* find(job& j, const weft_port_id_t& id) {
    if (id.node >= j.nodes) return nullptr;
    std::uint32_t c = id.index >> kChunkBits;
    if (c >= kMaxChunks) return nullptr;
    port* chunk = j.tables[id.node].chunks[c].load(memory_order_acquire);
    return chunk == nullptr ? nullptr : &chunk[id.index & (kChunkSlots - 1)];
}

// Under p->lock.
bool live(const port* p, const weft_port_id_t& id) { return p->open && p->gen == id.gen && id.reserved_ == 0; }

bool ready(const msg_header& h, std::int64_t* now) {
    if (h.ready_ns == 0) return true;
    if (*now == 0) *now = monotonic_ns();
    return h.ready_ns <= *now;
}

// --- rx list (under the port's lock) -------------------------------------------------

void rx_push(port* p, rx_link* l) {
    l->next = nullptr;
    l->prev = p->rx_tail;
    if (p->rx_tail != nullptr) p->rx_tail->next = l;
    else p->rx_head = l;
    p->rx_tail = l;
    l->linked = true;
    p->rx_waiting.store(p->rx_waiting.load(memory_order_relaxed) + 1, memory_order_relaxed);
}

void rx_remove(port* p, rx_link* l) {
    if (l->prev != nullptr) l->prev->next = l->next;
    else p->rx_head = l->next;
    if (l->next != nullptr) l->next->prev = l->prev;
    else p->rx_tail = l->prev;
    l->next = l->prev = nullptr;
    l->linked = false;
    p->rx_waiting.store(p->rx_waiting.load(memory_order_relaxed) - 1, memory_order_relaxed);
}

// A one-port receiver's unlink, for the timer (port lock held).
void unlink_rx_one(wait_record* rec) {
    auto* l = static_cast<rx_link*>(rec->queue);
    rx_remove(l->p, l);
}
// A several-port receiver's unlink, for the timer (selector lock held): its
// links are taken back by the receiver itself, under each port's lock.
void unlink_rx_any(wait_record*) {}

void unlink_tx(wait_record* rec) {
    auto* p = static_cast<port*>(rec->queue);
    wait_list(p->tx_head, p->tx_tail).remove(rec);
}

// Claims the oldest receiver still waiting (port lock held), or null. The
// claimed receiver is the caller's to wake once the lock is released.
rx_waiter* claim_receiver(port* p) {
    while (rx_link* l = p->rx_head) {
        rx_remove(p, l);
        rx_waiter* w = l->w;
        if (!w->any) {
            w->rec.linked = false;  // guarded by this port's lock
            return w;
        }
        spinlock_ref sel(w->sel_lock);
        sel.lock();
        bool mine = w->rec.linked;
        w->rec.linked = false;
        sel.unlock();
        if (mine) return w;  // else it was claimed elsewhere, or timed out: try the next
    }
    return nullptr;
}

// The oldest blocked sender, unlinked to retry (result 0), or null (port lock
// held); the caller wakes it once the lock is released. Called wherever room
// appears that no sender will fill otherwise: a receive took a message, or a
// message passed through the empty port to a receiver (put's hand-off).
wait_record* next_sender(port* p) {
    wait_record* tx = wait_list(p->tx_head, p->tx_tail).pop_front();
    if (tx != nullptr) tx->result = 0;
    return tx;
}

// Whether a message of len bytes goes straight to p's oldest receiver (p's
// lock held): it waits on this port alone with room for it, nothing is queued
// before the message, and the message is ready.
bool hand_off_now(port* p, const msg_header& h, std::size_t len) {
    std::int64_t now = 0;
    rx_link* front = p->rx_head;
    return p->count == 0 && front != nullptr && !front->w->any && len <= front->w->cap && ready(h, &now);
}

// Tells a claimed receiver, outside the port's lock: a wake-up, or for a
// polling one its flag.
void rouse(rx_waiter* w) {
    if (w->polling) w->roused.store(true, memory_order_release);
    else wake(&w->rec);
}

void fill_status(weft_net_status_t* st, const weft_port_id_t& id, const msg_header& h, std::size_t len) {
    st->port = id;
    st->tag = h.tag;
    st->source = h.source;
    st->len = len;
    st->sent_ns = h.sent_ns;
    st->ready_ns = h.ready_ns;
}

// A loss reported to sender `me` (note_loss), taken: true and st->port the
// port its message was sent to. Called by a receive that would wait, under
// the port's lock (lock order: port -> loss_lock), so that a note_loss that
// scanned this port before the receiver linked itself there is seen here.
bool take_loss(job& j, weft_net_status_t* st) {
    if (j.losses.load(memory_order_relaxed) == 0) return false;
    std::uint64_t me = sender_token();
    if (me == 0) return false;
    j.loss_lock.lock();
    bool found = false;
    for (auto& e : j.lost) {
        if (e.first != me) continue;
        st->port = e.second;
        e = j.lost.back();
        j.lost.pop_back();
        j.losses.store(j.lost.size(), memory_order_relaxed);
        found = true;
        break;
    }
    j.loss_lock.unlock();
    return found;
}

// Takes p's oldest message if it is receivable (port lock held, released on
// every path). 0: received into buf; EMSGSIZE: too long for cap (left queued);
// EAGAIN: none receivable (lock still held; *next_ready lowered to the
// head's ready time if there is a head).
int take_locked(port* p, const weft_port_id_t& id, void* buf, std::size_t cap, weft_net_status_t* st,
                std::int64_t* now, std::int64_t* next_ready) {
    message* m = p->head;
    if (m == nullptr) return EAGAIN;
    if (!ready(m->h, now)) {
        if (m->h.ready_ns < *next_ready) *next_ready = m->h.ready_ns;
        return EAGAIN;
    }
    spinlock_ref lk(p->lock);
    if (m->len > cap) {
        fill_status(st, id, m->h, m->len);
        lk.unlock();
        return EMSGSIZE;
    }
    p->head = m->next;
    if (p->head == nullptr) p->tail = nullptr;
    --p->count;
    p->bytes -= m->len;
    wait_record* tx = next_sender(p);  // room for one more
    lk.unlock();
    if (m->len != 0) std::memcpy(buf, m->bytes(), m->len);
    fill_status(st, id, m->h, m->len);
    free_message(m);
    if (tx != nullptr) wake(tx);
    return 0;
}

// Takes back the links of a several-port receiver that is no longer waiting.
void unlink_all(rx_link* links, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        port* p = links[i].p;
        spinlock_ref lk(p->lock);
        lk.lock();
        if (links[i].linked) rx_remove(p, &links[i]);
        lk.unlock();
    }
}

// Links one-port receiver w, taking up to cap bytes into buf, into p's rx list
// through l (p's lock held).
void link_receiver(port* p, rx_waiter& w, rx_link& l, void* buf, std::size_t cap) {
    w.buf = buf;
    w.cap = cap;
    l.w = &w;
    l.p = p;
    rx_push(p, &l);
    w.rec.linked = true;
}

// poll_before_wait's test for a polling one-port receiver: claimed.
bool roused(void* ctx) { return static_cast<rx_waiter*>(ctx)->roused.load(memory_order_acquire); }

// A claimed polling receiver waits for its claimer to finish: a put's copy,
// or a transport's receive of the bytes (port_claim), which may need this
// worker's own progress polls: so it polls, and lets the worker's other
// threads run, instead of spinning.
void await_rouse(rx_waiter& w) {
    while (!w.roused.load(memory_order_acquire)) {
        if (!poll_before_wait(&roused, &w) && !w.roused.load(memory_order_acquire)) weft_thread_yield();
    }
}

// poll_before_wait's test for the ports a several-port receiver waits on: a
// message (or the port's close) in any of them.
struct stir_watch {
    port* const* ps;
    std::size_t n;
};

bool stirred(void* ctx) {
    auto* sw = static_cast<stir_watch*>(ctx);
    bool any = false;
    for (std::size_t i = 0; i < sw->n && !any; ++i) {
        spinlock_ref lk(sw->ps[i]->lock);
        lk.lock();
        any = sw->ps[i]->head != nullptr || sw->ps[i]->closed;
        lk.unlock();
    }
    return any;
}

// Before a several-port receiver waits with a transport's progress hook set:
// a message from another node may be a poll away, so poll for it from this
// thread while its worker has nothing else to run (core/progress.hpp,
// poll_before_wait); it lands in its port, and the receiver looks again.
// Once per receive, and only when a deadline leaves room for the poll.
bool poll_first(port* const* ps, std::size_t n, std::int64_t deadline, std::int64_t now, bool* polled) {
    if (*polled || !progress_hook_set()) return false;
    *polled = true;
    if (deadline != 0 && deadline - now < tun::progress_wait_spin_ns) return false;
    stir_watch sw{ps, n};
    (void)poll_before_wait(&stirred, &sw);
    return true;
}

int recv_one(job& j, port* p, const weft_port_id_t& id, void* buf, std::size_t cap, weft_net_status_t* st,
             std::int64_t timeout_ns, std::int64_t deadline, bool try_only) {
    bool destroyed_while_waiting = false;
    bool polled = false;
    for (;;) {
        std::int64_t now = 0;
        std::int64_t next_ready = INT64_MAX;
        spinlock_ref lk(p->lock);
        lk.lock();
        if (!live(p, id)) {
            lk.unlock();
            st->port = id;
            return destroyed_while_waiting ? EPIPE : ENOENT;
        }
        int rc = take_locked(p, id, buf, cap, st, &now, &next_ready);
        if (rc != EAGAIN) return rc;
        if (p->closed && p->head == nullptr) {
            lk.unlock();
            st->port = id;
            return EPIPE;
        }
        // About to wait (or to say nothing came): a message this thread sent
        // that was dropped is reported first. Under p's lock: see take_loss.
        if (take_loss(j, st)) {
            lk.unlock();
            return ECONNABORTED;
        }
        if (try_only || timeout_ns == 0) {
            lk.unlock();
            return try_only ? EAGAIN : ETIMEDOUT;
        }
        if (deadline != 0) {
            if (now == 0) now = monotonic_ns();
            if (now >= deadline) {
                lk.unlock();
                return ETIMEDOUT;
            }
        }
        if (!polled && progress_hook_set()) {
            // A message from another node may be a poll away: poll for it
            // from this thread, linked as a receiver (core/progress.hpp,
            // poll_before_wait), so that it is handed straight into buf.
            polled = true;
            if (deadline == 0 || deadline - now > tun::progress_wait_spin_ns) {
                rx_waiter w;
                w.polling = true;
                rx_link l;
                link_receiver(p, w, l, buf, cap);
                lk.unlock();
                (void)poll_before_wait(&roused, &w);
                lk.lock();
                bool claimed = !l.linked;
                if (!claimed) rx_remove(p, &l);
                lk.unlock();
                if (claimed) {
                    await_rouse(w);
                    if (w.handed) {
                        *st = w.st;
                        return 0;
                    }
                    if (w.rec.result == EPIPE) destroyed_while_waiting = true;
                }
                continue;
            }
        }
        std::int64_t wake_at = deadline == 0 ? next_ready : (next_ready < deadline ? next_ready : deadline);
        rx_waiter w;
        rx_link l;
        link_receiver(p, w, l, buf, cap);
        w.rec.queue = &l;
        w.rec.unlink = &unlink_rx_one;
        rc = wait(&w.rec, &p->lock, wake_at == INT64_MAX ? 0 : wake_at, "weft_net_recv", p);
        if (w.handed) {
            *st = w.st;
            return 0;
        }
        if (rc == EPIPE) destroyed_while_waiting = true;
        // Woken by a message that needs the queue (too long for a hand-off,
        // or not yet receivable), by its ready time, or by the deadline: look again.
    }
}

int recv_any(job& j, port* const* ps, const weft_port_id_t* ids, std::size_t n, void* buf, std::size_t cap,
             weft_net_status_t* st, std::int64_t timeout_ns, std::int64_t deadline, bool try_only) {
    bool destroyed_while_waiting = false;
    bool polled = false;
    for (;;) {
        std::int64_t now = 0;
        std::int64_t next_ready = INT64_MAX;
        // 1. Look at every port, in order.
        for (std::size_t i = 0; i < n; ++i) {
            spinlock_ref lk(ps[i]->lock);
            lk.lock();
            if (!live(ps[i], ids[i])) {
                lk.unlock();
                st->port = ids[i];
                return destroyed_while_waiting ? EPIPE : ENOENT;
            }
            int rc = take_locked(ps[i], ids[i], buf, cap, st, &now, &next_ready);
            if (rc != EAGAIN) return rc;
            if (ps[i]->closed && ps[i]->head == nullptr) {
                lk.unlock();
                st->port = ids[i];
                return EPIPE;
            }
            lk.unlock();
        }
        if (take_loss(j, st)) return ECONNABORTED;  // looked at again under a port's lock in step 2
        if (try_only || timeout_ns == 0) return try_only ? EAGAIN : ETIMEDOUT;
        if (deadline != 0) {
            if (now == 0) now = monotonic_ns();
            if (now >= deadline) return ETIMEDOUT;
        }
        if (poll_first(ps, n, deadline, now, &polled)) continue;
        // 2. Announce on every port, looking once more at each under its lock:
        //    a message that came after step 1 ends the announcement.
        rx_waiter w;
        w.any = true;
        w.rec.linked = true;  // nobody sees w before its first link
        w.rec.unlink = &unlink_rx_any;
        rx_link links[WEFT_NET_RECV_ANY_MAX];
        std::size_t linked = 0;
        bool look_again = false;
        bool lost = false;
        for (std::size_t i = 0; i < n && !look_again; ++i) {
            port* p = ps[i];
            spinlock_ref lk(p->lock);
            lk.lock();
            message* h = p->head;
            if (take_loss(j, st)) {
                lost = look_again = true;
            } else if (!live(p, ids[i]) || (p->closed && h == nullptr) || (h != nullptr && ready(h->h, &now))) {
                look_again = true;
            } else {
                if (h != nullptr && h->h.ready_ns < next_ready) next_ready = h->h.ready_ns;
                links[i].w = &w;
                links[i].p = p;
                rx_push(p, &links[i]);
                ++linked;
            }
            lk.unlock();
        }
        // 3. Block, unless a sender has claimed us already (its wake is on the
        //    way: wait for it without a lock, as join does) or step 2 found
        //    something (take the claim back ourselves).
        spinlock_ref sel(w.sel_lock);
        sel.lock();
        if (w.rec.linked && !look_again) {
            std::int64_t wake_at = deadline == 0 ? next_ready : (next_ready < deadline ? next_ready : deadline);
            (void)wait(&w.rec, &w.sel_lock, wake_at == INT64_MAX ? 0 : wake_at, "weft_net_recv_any", ps[0]);
        } else {
            bool claimed_by_other = !w.rec.linked;
            w.rec.linked = false;
            sel.unlock();
            if (claimed_by_other) (void)wait(&w.rec, nullptr, 0, "weft_net_recv_any", ps[0]);
        }
        unlink_all(links, linked);
        if (lost) return ECONNABORTED;
        if (w.rec.result == EPIPE) destroyed_while_waiting = true;
    }
}

}  // namespace

int port_create(job& j, std::uint32_t self, std::size_t max_msgs, std::size_t max_bytes, weft_port_id_t* out) {
    node_table& t = j.tables[self];
    t.lock.lock();
    port* p = t.free;
    if (p != nullptr) {
        t.free = p->next_free;
    } else {
        if (t.used == kMaxChunks * kChunkSlots) {
            t.lock.unlock();
            return ENOSPC;
        }
        std::uint32_t c = t.used >> kChunkBits;
        port* chunk = t.chunks[c].load(memory_order_relaxed);
        if (chunk == nullptr) {
            // Under the node's lock: a new chunk is needed once per 256 ports.
            chunk = new (std::nothrow) port[kChunkSlots];
            if (chunk == nullptr) {
                t.lock.unlock();
                return ENOMEM;
            }
            for (std::uint32_t i = 0; i < kChunkSlots; ++i) {
                chunk[i].node = self;
                chunk[i].index = (c << kChunkBits) | i;
            }
            t.chunks[c].store(chunk, memory_order_release);  // pairs with find()'s acquire
        }
        p = &chunk[t.used & (kChunkSlots - 1)];
        ++t.used;
    }
    t.lock.unlock();
    spinlock_ref lk(p->lock);
    lk.lock();
    p->open = true;
    p->closed = false;
    p->max_msgs = max_msgs;
    p->max_bytes = max_bytes;
    p->count = p->bytes = 0;
    *out = weft_port_id_t{p->node, p->index, p->gen, 0};
    lk.unlock();
    return 0;
}

namespace {
// Unlinks every thread waiting on p (its lock held): senders get EPIPE,
// receivers rx_result. Returns them chained through wait_record::next, to be
// woken once the lock is released (wake_all).
wait_record* unlink_waiters(port* p, int rx_result) {
    wait_record* woken = nullptr;
    wait_list tx(p->tx_head, p->tx_tail);
    while (wait_record* r = tx.pop_front()) {
        r->result = EPIPE;
        r->next = woken;
        woken = r;
    }
    while (rx_waiter* w = claim_receiver(p)) {
        w->rec.result = rx_result;
        if (w->polling) {
            w->roused.store(true, memory_order_release);  // under the lock: it waits for the flag, then the lock
            continue;
        }
        w->rec.next = woken;
        woken = &w->rec;
    }
    return woken;
}

// Wakes a chain from unlink_waiters; reads each next before the wake (the
// record dies with its waiter).
void wake_all(wait_record* woken) {
    while (woken != nullptr) {
        wait_record* next = woken->next;
        wake(woken);
        woken = next;
    }
}

// Port `id` of node `self` (the caller's), locked, in *out; ENOENT if there is
// no such port, EPERM if it is another node's (then nothing is locked).
int lock_own_port(job& j, std::uint32_t self, const weft_port_id_t& id, port** out) {
    port* p = find(j, id);
    if (p == nullptr) return ENOENT;
    spinlock_ref lk(p->lock);
    lk.lock();
    if (!live(p, id)) {
        lk.unlock();
        return ENOENT;
    }
    if (id.node != self) {
        lk.unlock();
        return EPERM;
    }
    *out = p;
    return 0;
}
}  // namespace

int port_destroy(job& j, std::uint32_t self, const weft_port_id_t& id) {
    port* p = nullptr;
    if (int rc = lock_own_port(j, self, id, &p); rc != 0) return rc;
    spinlock_ref lk(p->lock);  // held
    p->open = false;
    ++p->gen;
    message* msgs = p->head;
    p->head = p->tail = nullptr;
    p->count = p->bytes = 0;
    wait_record* woken = unlink_waiters(p, EPIPE);
    lk.unlock();
    wake_all(woken);
    while (msgs != nullptr) {
        message* next = msgs->next;
        if (msgs->h.sender != 0) note_loss(j, msgs->h.source, msgs->h.sender, id);
        free_message(msgs);
        msgs = next;
    }
    node_table& t = j.tables[id.node];
    t.lock.lock();
    p->next_free = t.free;
    t.free = p;
    t.lock.unlock();
    return 0;
}

void note_loss(job& j, std::uint32_t node, std::uint64_t sender, const weft_port_id_t& to) {
    if (j.home >= 0 && node != std::uint32_t(j.home)) {  // the sender is in another process
        j.tp->report_loss(node, sender, to);
        return;
    }
    j.loss_lock.lock();
    bool known = false;
    for (const auto& e : j.lost) known |= e.first == sender;
    if (!known) {
        // One entry per sender: its next waiting receive reports the first
        // port it lost a message to (memory: one entry per such thread).
        j.lost.emplace_back(sender, to);
        j.losses.store(j.lost.size(), memory_order_relaxed);
    }
    j.loss_lock.unlock();
    if (known || node >= j.nodes) return;
    // The sender may be blocked receiving already: find its link on one of
    // its node's ports and wake it (result 0: it looks again and finds the
    // loss). A receiver that links itself after this scan passed its port
    // sees `losses` under that port's lock (take_loss).
    node_table& t = j.tables[node];
    t.lock.lock();
    std::uint32_t used = t.used;
    t.lock.unlock();
    for (std::uint32_t i = 0; i < used; ++i) {
        port* p = &t.chunks[i >> kChunkBits].load(memory_order_acquire)[i & (kChunkSlots - 1)];
        spinlock_ref lk(p->lock);
        lk.lock();
        rx_waiter* claimed = nullptr;
        bool found = false;
        for (rx_link* l = p->rx_head; l != nullptr && !found; l = l->next) {
            rx_waiter* w = l->w;
            if (w->rec.waiter == nullptr || w->rec.waiter->id + 1 != sender) continue;  // see sender_token
            found = true;  // a thread waits in one receive at a time
            bool mine = true;
            if (w->any) {
                spinlock_ref sel(w->sel_lock);
                sel.lock();
                mine = w->rec.linked;
                w->rec.linked = false;
                sel.unlock();
            } else {
                w->rec.linked = false;  // guarded by this port's lock
            }
            rx_remove(p, l);
            if (!mine) break;  // claimed by a sender or its timer: it looks again anyway
            w->rec.result = 0;
            if (w->polling) w->roused.store(true, memory_order_release);  // under the lock, as unlink_waiters
            else claimed = w;
            break;  // l is unlinked: its next is gone
        }
        lk.unlock();
        if (claimed != nullptr) wake(&claimed->rec);
        if (found) return;
    }
}

int port_close(job& j, std::uint32_t self, const weft_port_id_t& id) {
    port* p = nullptr;
    if (int rc = lock_own_port(j, self, id, &p); rc != 0) return rc;
    spinlock_ref lk(p->lock);  // held
    p->closed = true;
    // Senders fail; receivers look again (result 0) and find the buffered
    // messages or, with none left, EPIPE.
    wait_record* woken = unlink_waiters(p, 0);
    lk.unlock();
    wake_all(woken);
    return 0;
}

namespace {

// port_put, or with try_only its form that returns EAGAIN instead of waiting.
// Whether port `to` takes a message of len bytes at all (0, ENOENT, EPIPE or
// EMSGSIZE), looked at before anything is allocated for it: len is then at
// most the port's max_bytes, itself at most WEFT_NET_PORT_MAX_BYTES.
int admissible(port* p, const weft_port_id_t& to, std::size_t len) {
    spinlock_ref lk(p->lock);
    lk.lock();
    int rc = !live(p, to) ? ENOENT : p->closed ? EPIPE : len > p->max_bytes ? EMSGSIZE : 0;
    lk.unlock();
    return rc;
}

int put(job& j, const weft_port_id_t& to, const msg_header& h, const void* buf, std::size_t len, bool try_only) {
    port* p = find(j, to);
    if (p == nullptr) return ENOENT;
    if (int rc = admissible(p, to, len); rc != 0) return rc;
    message* m = nullptr;
    bool waited = false;
    // A woken sender that leaves without its message in the port passes its
    // wake-up on: the room it was woken for may be all there is.
    auto out_of_memory = [&] {
        if (waited) {
            spinlock_ref lk(p->lock);
            lk.lock();
            wait_record* tx = next_sender(p);
            lk.unlock();
            if (tx != nullptr) wake(tx);
        }
        return ENOMEM;
    };
    for (;;) {
        // Copy first, outside the lock, unless a receiver seems to wait: then
        // the copy may go straight into its buffer.
        if (m == nullptr && p->rx_waiting.load(memory_order_relaxed) == 0) {
            m = make_message(h, buf, len);
            if (m == nullptr) return out_of_memory();
        }
        spinlock_ref lk(p->lock);
        lk.lock();
        if (!live(p, to)) {
            lk.unlock();
            free_message(m);
            return waited ? EPIPE : ENOENT;
        }
        if (p->closed) {
            lk.unlock();
            free_message(m);
            return EPIPE;
        }
        if (len > p->max_bytes) {
            lk.unlock();
            free_message(m);
            return EMSGSIZE;
        }
        if (hand_off_now(p, h, len)) {
            // The hand-off: the oldest receiver waits on this port alone and
            // nothing is queued before us. Claimed under the lock (so neither
            // its timer nor another sender can), filled after it. The port
            // stays empty, so no receive will wake a sender blocked on it:
            // this put wakes the oldest (docs/design/net.md, "Who wakes a
            // blocked sender").
            rx_waiter* w = claim_receiver(p);
            wait_record* tx = next_sender(p);
            lk.unlock();
            if (len != 0) std::memcpy(w->buf, m != nullptr ? m->bytes() : buf, len);
            free_message(m);
            port_hand_over(w, to, h, len);
            if (tx != nullptr) wake(tx);
            return 0;
        }
        if (p->count >= p->max_msgs || p->bytes + len > p->max_bytes) {
            if (try_only) {
                lk.unlock();
                free_message(m);
                return EAGAIN;
            }
            // Full: wait for a receive to make room. A sender that retries
            // keeps its place at the front.
            wait_record rec;
            wait_list q(p->tx_head, p->tx_tail);
            if (waited) q.push_front(&rec, p, &unlink_tx);
            else q.push_back(&rec, p, &unlink_tx);
            int rc = wait(&rec, &p->lock, 0, "weft_net_send", p);
            waited = true;
            if (rc == EPIPE) {
                free_message(m);
                return EPIPE;
            }
            continue;
        }
        if (m == nullptr) {
            lk.unlock();
            m = make_message(h, buf, len);
            if (m == nullptr) return out_of_memory();
            continue;
        }
        if (p->tail != nullptr) p->tail->next = m;
        else p->head = m;
        p->tail = m;
        ++p->count;
        p->bytes += len;
        rx_waiter* w = claim_receiver(p);
        lk.unlock();
        if (w != nullptr) rouse(w);
        return 0;
    }
}

}  // namespace

int port_put(job& j, const weft_port_id_t& to, const msg_header& h, const void* buf, std::size_t len) {
    return put(j, to, h, buf, len, false);
}

int port_try_put(job& j, const weft_port_id_t& to, const msg_header& h, const void* buf, std::size_t len) {
    return put(j, to, h, buf, len, true);
}

rx_waiter* port_claim(job& j, const weft_port_id_t& to, const msg_header& h, std::size_t len, void** buf,
                      bool* claimable) {
    port* p = find(j, to);
    if (claimable != nullptr) *claimable = false;
    if (p == nullptr || (claimable == nullptr && p->rx_waiting.load(memory_order_relaxed) == 0)) return nullptr;
    spinlock_ref lk(p->lock);
    lk.lock();
    rx_waiter* w = nullptr;
    bool takes = live(p, to) && !p->closed && len <= p->max_bytes;
    if (takes && hand_off_now(p, h, len)) w = claim_receiver(p);
    if (claimable != nullptr) *claimable = takes && w == nullptr && p->count == 0;
    lk.unlock();
    if (w != nullptr) *buf = w->buf;
    return w;
}

void port_hand_over(rx_waiter* w, const weft_port_id_t& to, const msg_header& h, std::size_t len) {
    fill_status(&w->st, to, h, len);
    w->handed = true;
    rouse(w);
}

void port_release(rx_waiter* w) {
    w->rec.result = 0;
    rouse(w);
}

int port_info(job& j, const weft_port_id_t& id, std::size_t* max_bytes) {
    port* p = find(j, id);
    if (p == nullptr) return ENOENT;
    spinlock_ref lk(p->lock);
    lk.lock();
    bool ok = live(p, id);
    if (ok) *max_bytes = p->max_bytes;
    lk.unlock();
    return ok ? 0 : ENOENT;
}

int port_recv(job& j, std::uint32_t self, const weft_port_id_t* ids, std::size_t n, void* buf, std::size_t cap,
              weft_net_status_t* st, std::int64_t timeout_ns, bool try_only) {
    port* ps[WEFT_NET_RECV_ANY_MAX];
    for (std::size_t i = 0; i < n; ++i) {
        ps[i] = find(j, ids[i]);
        if (ps[i] == nullptr || ids[i].node != self) {
            st->port = ids[i];
            return ps[i] == nullptr ? ENOENT : EPERM;
        }
    }
    std::int64_t deadline = timeout_ns > 0 ? monotonic_ns() + timeout_ns : 0;
    if (n == 1) return recv_one(j, ps[0], ids[0], buf, cap, st, timeout_ns, deadline, try_only);
    return recv_any(j, ps, ids, n, buf, cap, st, timeout_ns, deadline, try_only);
}

bool name_port_wait(const char* /*what*/, const void* object, char* out, std::size_t cap) {
    job* j = current_job();
    if (j == nullptr) return false;
    // Any wait's object may be given: a port is one inside a chunk of the
    // job's tables (the transports wait on objects of their own too).
    for (std::uint32_t n = 0; n < j->nodes; ++n) {
        for (std::uint32_t c = 0; c < kMaxChunks; ++c) {
            const port* chunk = j->tables[n].chunks[c].load(memory_order_acquire);
            if (chunk == nullptr) break;
            if (object < static_cast<const void*>(chunk) || object >= static_cast<const void*>(chunk + kChunkSlots))
                continue;
            const auto* p = static_cast<const port*>(object);
            // The generation the port's ID carries (destroy moves it on).
            std::snprintf(out, cap, "port {node %u, index %u, gen %u}", p->node, p->index, p->gen);
            return true;
        }
    }
    return false;
}

bool any_waiter(job& j, const weft_port_id_t* except, std::size_t n_except) {
    for (std::uint32_t n = 0; n < j.nodes; ++n) {
        node_table& t = j.tables[n];
        for (std::uint32_t i = 0; i < t.used; ++i) {
            port* p = &t.chunks[i >> kChunkBits].load(memory_order_acquire)[i & (kChunkSlots - 1)];
            bool exempt = false;
            for (std::size_t e = 0; e < n_except; ++e) exempt |= except[e].node == n && except[e].index == i;
            spinlock_ref lk(p->lock);
            lk.lock();
            bool busy = (p->rx_head != nullptr && !exempt) || p->tx_head != nullptr;
            lk.unlock();
            if (busy) return true;
        }
    }
    return false;
}

int close_all(job& j) {
    // Refuse while anyone waits: a woken waiter would look at freed tables.
    if (any_waiter(j, nullptr, 0)) return EBUSY;
    for (std::uint32_t n = 0; n < j.nodes; ++n) {
        node_table& t = j.tables[n];
        for (std::uint32_t c = 0; c < kMaxChunks; ++c) {
            port* chunk = t.chunks[c].load(memory_order_acquire);
            if (chunk == nullptr) break;
            for (std::uint32_t i = 0; i < kChunkSlots; ++i) {
                for (message* m = chunk[i].head; m != nullptr;) {
                    message* next = m->next;
                    free_message(m);
                    m = next;
                }
            }
            delete[] chunk;
            t.chunks[c].store(nullptr, memory_order_relaxed);
        }
    }
    return 0;
}

}  // namespace weft::detail::net
