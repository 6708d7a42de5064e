// weft::detail::net — one rank's protocol endpoint (protocol.hpp): its life
// (start, the start-up barrier, the collective stop) and its progress step.
// The sending side, the receiving side, the backlogs and liveness have a file
// each (protocol_send.cpp, protocol_receive.cpp, protocol_backlog.cpp,
// protocol_liveness.cpp).
#include "net/protocol.hpp"

#include <cerrno>
#include <cstdlib>
#include <new>

#include "core/wait.hpp"
#include "net/port.hpp"

namespace weft::detail::net {

// --- completion ---------------------------------------------------------------------

namespace {
void unlink_nothing(wait_record*) {}
}  // namespace

void completion::await(const char* what, const void* object) {
    spinlock_ref l(lk);
    l.lock();
    if (done) {
        l.unlock();
        return;
    }
    rec.linked = true;
    (void)wait(&rec, &lk, 0, what, object);
}

bool completion::await_until(std::int64_t deadline_ns, const char* what, const void* object) {
    spinlock_ref l(lk);
    l.lock();
    if (done) {
        l.unlock();
        return true;
    }
    rec.result = 0;  // rec serves again after a timeout: clear what that left
    rec.futex.store(0, memory_order_relaxed);
    rec.linked = true;
    rec.unlink = &unlink_nothing;  // the timer's unlink: `linked` is the whole queue
    (void)wait(&rec, &lk, deadline_ns, what, object);
    l.lock();
    bool d = done;
    l.unlock();
    return d;
}

bool completion::abandon() {
    spinlock_ref l(lk);
    l.lock();
    bool d = done;
    abandoned = true;
    l.unlock();
    return d;
}

void completion::complete(int r, std::uint64_t v) {
    spinlock_ref l(lk);
    l.lock();
    if (abandoned) {
        l.unlock();
        delete this;
        return;
    }
    result = r;
    value = v;
    done = true;
    bool sleeping = rec.linked;
    rec.linked = false;
    l.unlock();
    if (sleeping) wake(&rec);
}

// --- the endpoint's life -------------------------------------------------------------

protocol::protocol(std::unique_ptr<link> l, std::int64_t timeout_ns, std::int64_t receiver_wait_ns)
    : link_(std::move(l)),
      rank_(link_->rank()),
      size_(link_->size()),
      inline_max_(link_->max_frame() - kWireHeaderBytes),
      timeout_ns_(timeout_ns),
      receiver_wait_ns_(receiver_wait_ns),
      peers_(new peer[std::size_t(size_)]) {}

protocol::~protocol() { std::free(spare_body_); }

int protocol::start(job& j) {
    j_ = &j;
    if (int rc = link_->open(this); rc != 0) return rc;
    for (int r = 0; r < size_; ++r) peers_[r].heard_ns.store(coarse_monotonic_ns(), memory_order_relaxed);
    return start_deliverers();
}

int protocol::barrier_begin() { return link_->barrier_begin(); }

int protocol::barrier_test(bool* done) {
    if (int rc = link_->barrier_test(done); rc != 0) return rc;
    // Every rank reached the barrier: each was alive just now.
    if (*done)
        for (int r = 0; r < size_; ++r) peers_[r].heard_ns.store(coarse_monotonic_ns(), memory_order_relaxed);
    return 0;
}

// 1. Everything queued goes out, then a bye to every peer: after it we send
//    that peer nothing (the link keeps one sender's frames in order, so the
//    bye is the last frame it receives from us).
void protocol::stop_begin() {
    progress_lock_.lock();
    step();
    for (int r = 0; r < size_; ++r) {
        if (r == rank_) continue;
        wire_header h;
        h.kind = std::uint8_t(frame_kind::bye);
        h.src_node = std::uint32_t(rank_);
        h.dst_node = std::uint32_t(r);
        if (peers_[r].dead.load(memory_order_relaxed) == 0) post_ctl(r, h);
        spinlock_ref l(peers_[r].lock);
        l.lock();
        peers_[r].bye_out = true;
        l.unlock();
    }
    progress_lock_.unlock();
    stop_next_look_.assign(std::size_t(size_), first_deadline());
}

// 2. Progress until every peer's bye is in and our sends are done, watching
//    the liveness of the peers whose bye is not: a dead one sends none, and
//    is no longer waited for.
bool protocol::stop_poll() {
    progress_lock_.lock();
    step();
    bool done = quiet();
    progress_lock_.unlock();
    if (done || timeout_ns_ == 0) return done;
    std::int64_t now = monotonic_ns();
    for (int r = 0; r < size_; ++r) {
        if (r == rank_ || now < stop_next_look_[std::size_t(r)]) continue;
        spinlock_ref l(peers_[r].lock);
        l.lock();
        bool waited = !peers_[r].bye_in;
        l.unlock();
        if (waited) (void)look_at(r, &stop_next_look_[std::size_t(r)]);
    }
    return false;
}

void protocol::stop_end() {
    stop_deliverers();
    link_->close();  // every peer said bye: no frame is left to come
}

// Finalize may end: every peer said bye (or is dead), our sends to live
// peers and their bulks to us are done (progress_lock_ held).
bool protocol::quiet() {
    for (int r = 0; r < size_; ++r) {
        if (r == rank_) continue;
        spinlock_ref l(peers_[r].lock);
        l.lock();
        bool dead = peers_[r].dead.load(memory_order_relaxed) != 0;
        bool in = peers_[r].bye_in || dead;
        l.unlock();
        if (!in) return false;
        if (!dead && peers_[r].in_head != nullptr) return false;  // a bulk of a live peer still coming
    }
    auto live = [](void* self, int r) {
        return static_cast<protocol*>(self)->peers_[r].dead.load(memory_order_relaxed) == 0;
    };
    return !link_->sends_pending(live, this);
}

// --- progress ---------------------------------------------------------------------------

bool protocol::progress(bool waiting) {
    if (!progress_lock_.try_lock()) return false;
    bool did = step(waiting);
    progress_lock_.unlock();
    return did;
}

// True if it did something: a send completed, a frame came in or went out.
// `waiting` (a ult polls for its message, core/progress.hpp): one frame,
// and the step ends after it; the sends and control frames only every
// tun::net_waiting_side_every-th such step (a ult polls in a tight loop).
// Otherwise the sends come first, and a step that wakes the thread of a long
// send takes no frame: that thread mostly receives next, and the reply it
// waits for, whose header often comes right behind the send's completion,
// then finds it waiting (and goes straight into its buffer: receive_direct)
// rather than held for it. The sends are tested again when the first test finds
// none (complete_sends' retry): the progress that test made may have taken
// both the send's completion and the reply's header.
bool protocol::step(bool waiting) {
    bool did = false;
    if (!waiting) {
        bool woke = false;
        did = link_->complete_sends(true, &woke);
        if (woke) return flush_control() || did;
    }
    did |= link_->poll(waiting ? 1 : tun::net_recv_batch);
    did |= complete_bulks();
    if (waiting && (did || ++waiting_steps_ % tun::net_waiting_side_every != 0)) return did;
    if (waiting) did |= link_->complete_sends(false, nullptr);
    did |= flush_control();
    return did;
}

}  // namespace weft::detail::net
