// weft::detail::net — the protocol's backlogs (protocol.hpp, "backlog" and
// "hold"): each peer's delivery thread puts the frames that found their port
// full, each port's in order, and resumes a port once it has put them all.
#include <cerrno>
#include <cstdlib>
#include <vector>

#include "core/wait.hpp"
#include "net/port.hpp"
#include "net/protocol.hpp"

namespace weft::detail::net {
namespace {

void unlink_delivery(wait_record* rec) {
    auto* p = static_cast<peer*>(rec->queue);
    wait_list(p->dw_head, p->dw_tail).remove(rec);
}

struct delivery_arg {
    protocol* t;
    int peer;
};

}  // namespace

// One pass of a peer's delivery thread over its backlog, oldest first: each
// frame is put unless a frame of its port was found full in this pass (a
// port's frames keep their order). True if a frame left the backlog.
bool protocol::deliver_pass(peer& p, int source) {
    spinlock_ref l(p.lock);
    std::vector<std::uint64_t> full;
    bool did = false;
    staged* prev = nullptr;  // only this thread unlinks, so prev stays valid across unlocks
    l.lock();
    staged* s = p.bl_head;
    while (s != nullptr && !p.stopping) {
        std::uint64_t key = slot_key(s->to.index, s->to.gen);
        if (contains(full, key)) {
            prev = s;
            s = s->next;
            continue;
        }
        l.unlock();
        int rc = port_try_put(*j_, s->to, s->h, s->buf, s->len);
        l.lock();
        if (rc == EAGAIN) {
            full.push_back(key);
            prev = s;
            s = s->next;
            continue;
        }
        staged* next = s->next;
        if (prev != nullptr) prev->next = next;
        else p.bl_head = next;
        if (p.bl_tail == s) p.bl_tail = prev;
        bool resume = !backlog_has(p, key);
        if (resume) p.held_in.erase(std::find(p.held_in.begin(), p.held_in.end(), key));
        l.unlock();
        if (resume) queue_port_ctl(source, frame_kind::resume, s->to);
        if (rc != 0) nack(source, s->to, rc, s->h.sender);
        std::free(s->buf);
        delete s;
        did = true;
        l.lock();
        s = next;
    }
    l.unlock();
    return did;
}

// A peer's delivery thread: puts its backlog into the ports, retrying full
// ones after a growing sleep (only this thread waits).
void protocol::deliver_loop(peer& p, int source) {
    spinlock_ref l(p.lock);
    std::int64_t retry_ns = 0;
    for (;;) {
        l.lock();
        staged* s = p.bl_head;
        if (p.stopping) {
            p.bl_head = p.bl_tail = nullptr;
            l.unlock();
            while (s != nullptr) {  // finalize drops what no port took, as it drops buffered messages
                staged* next = s->next;
                std::free(s->buf);
                delete s;
                s = next;
            }
            return;
        }
        if (s == nullptr || retry_ns != 0) {
            // Nothing to put, or every port in the backlog was full: sleep
            // until a frame comes (or the retry).
            wait_record rec;
            wait_list(p.dw_head, p.dw_tail).push_back(&rec, &p, &unlink_delivery);
            std::int64_t deadline = s != nullptr ? monotonic_ns() + retry_ns : 0;
            (void)wait(&rec, &p.lock, deadline, "weft-net-delivery", &p);
            if (s == nullptr) continue;
        } else {
            l.unlock();
        }
        if (deliver_pass(p, source)) retry_ns = 0;
        else retry_ns = retry_ns == 0 ? tun::net_retry_first_ns : std::min(retry_ns * 2, tun::net_retry_max_ns);
    }
}

void* protocol::delivery_main(void* a) {
    auto* arg = static_cast<delivery_arg*>(a);
    protocol* t = arg->t;
    int r = arg->peer;
    delete arg;
    t->deliver_loop(t->peers_[r], r);
    return nullptr;
}

int protocol::start_deliverers() {
    for (int r = 0; r < size_; ++r) {
        if (r == rank_) continue;
        weft_attr_t attr;
        weft_attr_init(&attr);
        weft_attr_setname(&attr, "weft-net-delivery");
        int rc = weft_net_spawn(&peers_[r].deliverer, rank_, &attr, &delivery_main, new delivery_arg{this, r});
        weft_attr_destroy(&attr);
        if (rc != 0) {
            stop_deliverers();
            return rc;
        }
    }
    return 0;
}

void protocol::stop_deliverers() {
    for (int r = 0; r < size_; ++r) {
        peer& p = peers_[r];
        spinlock_ref l(p.lock);
        l.lock();
        p.stopping = true;
        wait_record* w = wait_list(p.dw_head, p.dw_tail).pop_front();
        l.unlock();
        if (w != nullptr) wake(w);
    }
    for (int r = 0; r < size_; ++r) {
        if (peers_[r].deliverer != nullptr) (void)weft_thread_join(peers_[r].deliverer, nullptr);
        peers_[r].deliverer = nullptr;
    }
}

}  // namespace weft::detail::net
