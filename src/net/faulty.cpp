// The faulty link (WEFT_NET=faulty): every rank of the job in this process,
// each with weft's protocol over a link of its own (link.hpp), joined by an
// in-memory fabric that injects the faults a network has, so that the
// protocol's guarantees are tested without MPI, under every scheduler and
// sanitizer (tests/whitebox/net_transport_test.cpp; docs/design/net.md, "The
// fault-injecting link").
//
// Faults (faulty_plan, transport.hpp; the defaults when WEFT_NET=faulty names
// it without a plan):
//   delay      every frame and bulk is visible to its receiver only after a
//              delay drawn uniformly from [delay_min_ns, delay_max_ns] by a
//              generator seeded with `seed`. A sender's frames keep their order,
//              and so do its bulks (the link's guarantee: a packet is never
//              visible before the one its sender posted before it on that lane);
//              frames of different senders overtake each other freely, which is
//              all the reordering the protocol allows.
//   death      a rank that dies (faulty_kill, or after it has taken
//              `dies_after` frames): it takes nothing more, what is sent to it
//              and what it sends are dropped, and a bulk sent to it is never
//              finished (as an MPI send to a dead rank never completes).
//   stall      a rank that stops answering (faulty_stall) and may come back
//              (faulty_resume): nothing it sends is visible and nothing is
//              delivered to it meanwhile; afterwards everything is, in order.
//              A long send from the caller's buffer (a bulk with `done`) is read
//              only when its receiver takes it (a rendezvous, as MPI's for long
//              messages), so a stalled receiver that comes back reads the
//              sender's buffer then.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <new>
#include <random>
#include <vector>

#include "base/primitives.hpp"
#include "core/env.hpp"
#include "core/tunables.hpp"
#include "core/wait.hpp"
#include "net/protocol.hpp"
#include "net/transport.hpp"
#include "net/wire.hpp"

namespace weft::detail::net {
namespace {


struct fabric;

// The fabric of the running faulty job (for faulty_kill and its kin), or null.
atomic<fabric*> g_fabric{nullptr};
// The plan the next faulty job uses (set_faulty_plan).
spinlock g_plan_lock;
faulty_plan g_plan;

struct packet {
    int src = 0;
    std::int64_t visible_ns = 0;
    const void* data = nullptr;  // owned, copy, or the caller's buffer (a rendezvous bulk)
    void* owned = nullptr;       // freed once taken (or dropped)
    std::vector<unsigned char> copy;
    std::size_t n = 0;
    void* done = nullptr;  // the sender's waiter, told once taken
};

// A posted bulk receive.
struct bulk_recv {
    int source = 0;
    void* buf = nullptr;
    std::size_t n = 0;
};

// The ranks' shared state, under `lock`.
struct fabric {
    explicit fabric(int n, const faulty_plan& p) : size(n), plan(p), rng(p.seed), ranks(std::size_t(n)) {
        for (auto& r : ranks) r.last_visible.assign(std::size_t(n) * 2, 0);
        in_msgs.assign(std::size_t(n) * std::size_t(n), 0);
        in_bytes.assign(std::size_t(n) * std::size_t(n), 0);
    }
    ~fabric() {
        fabric* self = this;
        g_fabric.compare_exchange_strong(self, nullptr, memory_order_acq_rel);
    }
    struct rank_state {
        std::deque<packet> frames;               // to this rank, in posting order
        std::vector<std::deque<packet>> bulks;   // to this rank, per sender
        std::vector<std::int64_t> last_visible;  // per (dest, lane): the latest visible time posted by this rank
        std::vector<void*> finished;             // this rank's sends taken by their receiver: to tell
        std::uint64_t taken = 0;                 // frames it took
        bool dead = false;
        bool stalled = false;
        bool arrived = false;  // at the start-up barrier
    };
    spinlock lock;
    int size;
    faulty_plan plan;
    std::mt19937_64 rng;
    std::vector<rank_state> ranks;

    // What the link saw of the protocol's data frames (faulty_observed): in
    // flight = posted and not yet taken by the receiver's protocol, per
    // (sender, receiver); its credit must bound it.
    std::vector<std::uint64_t> in_msgs, in_bytes;  // [src * size + dst]
    faulty_counts seen;

    static bool is_data(const void* frame, std::size_t n, std::uint64_t* charge) {
        wire_header h;
        if (n < sizeof h) return false;
        std::memcpy(&h, frame, sizeof h);
        if (h.kind != std::uint8_t(frame_kind::data)) return false;
        *charge = std::min<std::uint64_t>(h.len, tun::net_window_bytes);
        return true;
    }
    void count_posted(int src, int dst, const void* frame, std::size_t n) {
        std::uint64_t charge = 0;
        if (!is_data(frame, n, &charge)) return;
        std::size_t k = std::size_t(src) * std::size_t(size) + std::size_t(dst);
        seen.data_frames += 1;
        seen.max_in_flight_msgs = std::max(seen.max_in_flight_msgs, ++in_msgs[k]);
        seen.max_in_flight_bytes = std::max(seen.max_in_flight_bytes, in_bytes[k] += charge);
    }
    void count_taken(int src, int dst, const void* frame, std::size_t n) {
        std::uint64_t charge = 0;
        if (!is_data(frame, n, &charge)) return;
        std::size_t k = std::size_t(src) * std::size_t(size) + std::size_t(dst);
        in_msgs[k] -= 1;
        in_bytes[k] -= charge;
        seen.data_taken += 1;
    }

    std::int64_t delay_locked() {
        if (plan.delay_max_ns <= plan.delay_min_ns) return plan.delay_min_ns;
        std::uniform_int_distribution<std::int64_t> d(plan.delay_min_ns, plan.delay_max_ns);
        return d(rng);
    }
    // A packet that goes unreceived (its rank died, or the link closes): its
    // sender is told the send is over, as when it is taken.
    void drop(packet& p) {
        std::free(p.owned);
        p.owned = nullptr;
        if (p.done != nullptr) ranks[std::size_t(p.src)].finished.push_back(p.done);
        p.done = nullptr;
    }
};

class faulty_link final : public link {
public:
    // `name`: the registered transport's (transport_def::name).
    faulty_link(std::shared_ptr<fabric> f, int rank, const char* name) : name_(name), f_(std::move(f)), rank_(rank) {
        f_->ranks[std::size_t(rank)].bulks.resize(std::size_t(f_->size));
    }
    ~faulty_link() override { close(); }

    const char* name() const override { return name_; }
    int size() const override { return f_->size; }
    int rank() const override { return rank_; }
    std::size_t max_frame() const override { return tun::net_frame_max_bytes; }

    int open(link_sink* sink) override {
        sink_ = sink;
        return 0;
    }

    int post(int dest, lane l, const void* buf, std::size_t n, void* owned, void* done) override {
        packet p;
        p.src = rank_;
        p.n = n;
        p.owned = owned;
        p.done = done;
        if (owned != nullptr) {
            p.data = owned;
        } else if (done == nullptr) {  // neither ours nor waited for: a copy (an eager send)
            p.copy.assign(static_cast<const unsigned char*>(buf), static_cast<const unsigned char*>(buf) + n);
        } else {
            p.data = buf;  // a rendezvous: read when the receiver takes it
        }
        lock_guard<spinlock> g(f_->lock);
        auto& me = f_->ranks[std::size_t(rank_)];
        auto& to = f_->ranks[std::size_t(dest)];
        if (me.dead || to.dead) {  // lost on the way; a waited-for send is never finished
            f_->drop(p);
            return 0;
        }
        std::int64_t& last = me.last_visible[std::size_t(dest) * 2 + (l == lane::bulk ? 1 : 0)];
        p.visible_ns = std::max(monotonic_ns() + f_->delay_locked(), last);
        last = p.visible_ns;
        if (l == lane::frame) f_->count_posted(rank_, dest, p.owned != nullptr ? p.owned : p.copy.data(), n);
        if (l == lane::frame)
            to.frames.push_back(std::move(p));
        else
            to.bulks[std::size_t(rank_)].push_back(std::move(p));
        return 0;
    }

    bool complete_sends(bool /*retry*/, bool* woke) override {
        f_->lock.lock();
        woken_.swap(f_->ranks[std::size_t(rank_)].finished);
        f_->lock.unlock();
        for (void* d : woken_) sink_->sent(d);
        bool did = !woken_.empty();
        if (woke != nullptr) *woke = did;
        woken_.clear();
        return did;
    }

    // A send is pending while its packet waits in a live receiver's queue.
    bool sends_pending(bool (*counts)(void*, int), void* ctx) override {
        lock_guard<spinlock> g(f_->lock);
        if (!f_->ranks[std::size_t(rank_)].finished.empty()) return true;
        for (int d = 0; d < f_->size; ++d) {
            if (d == rank_ || !counts(ctx, d)) continue;
            const auto& to = f_->ranks[std::size_t(d)];
            for (const packet& p : to.frames)
                if (p.src == rank_) return true;
            if (!to.bulks.empty() && !to.bulks[std::size_t(rank_)].empty()) return true;
        }
        return false;
    }

    // The frames visible now, oldest visible first: a sender's in order (its
    // visible times never decrease), different senders' as their delays fell.
    bool poll(int batch) override {
        bool did = false;
        for (int k = 0; k < batch; ++k) {
            packet p;
            {
                lock_guard<spinlock> g(f_->lock);
                auto& me = f_->ranks[std::size_t(rank_)];
                if (me.dead || me.stalled) return did;
                std::int64_t now = monotonic_ns();
                std::size_t best = me.frames.size();
                std::vector<bool> seen(std::size_t(f_->size), false);  // a sender's first frame only
                for (std::size_t i = 0; i < me.frames.size(); ++i) {
                    const packet& q = me.frames[i];
                    if (seen[std::size_t(q.src)]) continue;
                    seen[std::size_t(q.src)] = true;
                    if (q.visible_ns > now || f_->ranks[std::size_t(q.src)].stalled) continue;
                    if (best == me.frames.size() || q.visible_ns < me.frames[best].visible_ns) best = i;
                }
                if (best == me.frames.size()) return did;
                p = std::move(me.frames[best]);
                me.frames.erase(me.frames.begin() + long(best));
                f_->count_taken(p.src, rank_, p.owned != nullptr ? p.owned : p.copy.data(), p.n);
                if (++me.taken == f_->plan.dies_after && f_->plan.dies == rank_) kill_locked(*f_, rank_);
            }
            const void* bytes = p.owned != nullptr ? p.owned : p.copy.data();
            sink_->frame(static_cast<const unsigned char*>(bytes), p.n, p.src);
            f_->drop(p);
            did = true;
        }
        return did;
    }

    int post_bulk_recv(int source, void* buf, std::size_t n, bulk_handle* h) override {
        auto* r = new (std::nothrow) bulk_recv{source, buf, n};
        if (r == nullptr) return EIO;
        h->req = reinterpret_cast<std::uintptr_t>(r);
        h->active = true;
        return 0;
    }

    int test_bulk(bulk_handle* h, bool* done) override {
        auto* r = reinterpret_cast<bulk_recv*>(static_cast<std::uintptr_t>(h->req));
        int rc = take_bulk(r->source, r->buf, r->n, false, done);
        if (rc == 0 && !*done) return 0;
        delete r;
        h->active = false;
        return rc;
    }

    // The bulk is copied straight into buf when it is visible.
    bulk_start try_bulk_recv(int source, void* buf, std::size_t n, bulk_handle* h) override {
        h->active = false;
        bool done = false;
        if (take_bulk(source, buf, n, true, &done) != 0) return bulk_start::failed;
        return done ? bulk_start::in : bulk_start::absent;
    }

    // Takes `source`'s next bulk once visible: copies it into buf (reading a
    // rendezvous sender's buffer now) and tells its sender. 0 (*done: it was
    // visible; counted as received directly or staged), or EIO (said) when
    // its length is not n.
    int take_bulk(int source, void* buf, std::size_t n, bool direct, bool* done) {
        *done = false;
        lock_guard<spinlock> g(f_->lock);
        auto& me = f_->ranks[std::size_t(rank_)];
        if (me.dead || me.stalled || f_->ranks[std::size_t(source)].stalled) return 0;
        auto& q = me.bulks[std::size_t(source)];
        if (q.empty() || q.front().visible_ns > monotonic_ns()) return 0;
        packet p = std::move(q.front());
        q.pop_front();
        const void* bytes = p.data != nullptr ? p.data : p.copy.data();
        if (p.n != n) {
            std::fprintf(stderr, "weft: faulty transport: node %d's bulk of %zu bytes met a receive of %zu\n", source,
                         p.n, n);
            f_->drop(p);
            return EIO;
        }
        std::memcpy(buf, bytes, n);
        f_->drop(p);  // and its sender is told
        (direct ? f_->seen.bulks_direct : f_->seen.bulks_staged) += 1;
        *done = true;
        return 0;
    }

    // A rendezvous bulk still queued gets a copy of the caller's bytes: the
    // caller may reuse its buffer once its send returns.
    void abandon(void* done) override {
        lock_guard<spinlock> g(f_->lock);
        for (auto& r : f_->ranks)
            for (auto& q : r.bulks)
                for (packet& p : q)
                    if (p.done == done && p.owned == nullptr && p.data != nullptr) {
                        auto* b = static_cast<const unsigned char*>(p.data);
                        p.copy.assign(b, b + p.n);
                        p.data = nullptr;
                    }
    }

    int barrier_begin() override {
        lock_guard<spinlock> g(f_->lock);
        f_->ranks[std::size_t(rank_)].arrived = true;
        return 0;
    }

    int barrier_test(bool* done) override {
        lock_guard<spinlock> g(f_->lock);
        *done = true;
        for (const auto& r : f_->ranks) *done = *done && (r.arrived || r.dead);
        return 0;
    }

    void close() override {
        lock_guard<spinlock> g(f_->lock);
        clear_inbox_locked(*f_, rank_);
    }

    // Drops what waits for rank r (the fabric's lock held).
    static void clear_inbox_locked(fabric& f, int r) {
        auto& me = f.ranks[std::size_t(r)];
        for (packet& p : me.frames) f.drop(p);
        me.frames.clear();
        for (auto& q : me.bulks) {
            for (packet& p : q) f.drop(p);
            q.clear();
        }
    }

    static void kill_locked(fabric& f, int r) {
        f.ranks[std::size_t(r)].dead = true;
        clear_inbox_locked(f, r);
        for (auto& other : f.ranks) {  // what it sent and nobody took yet is lost with it
            for (auto it = other.frames.begin(); it != other.frames.end();) {
                if (it->src == r) {
                    f.drop(*it);
                    it = other.frames.erase(it);
                } else {
                    ++it;
                }
            }
            if (std::size_t(r) < other.bulks.size()) {
                for (packet& p : other.bulks[std::size_t(r)]) f.drop(p);
                other.bulks[std::size_t(r)].clear();
            }
        }
    }

private:
    const char* name_;
    std::shared_ptr<fabric> f_;
    int rank_;
    link_sink* sink_ = nullptr;
    std::vector<void*> woken_;  // progress only
};

// Sets a fault on rank r of the running faulty job: EINVAL if there is none
// or r is not one of its ranks.
int with_rank(int r, void (*act)(fabric&, int)) {
    fabric* f = g_fabric.load(memory_order_acquire);
    if (f == nullptr || r < 0 || r >= f->size) return EINVAL;
    lock_guard<spinlock> g(f->lock);
    act(*f, r);
    return 0;
}

}  // namespace

void set_faulty_plan(const faulty_plan& p) {
    lock_guard<spinlock> g(g_plan_lock);
    g_plan = p;
}

faulty_counts faulty_observed() {
    fabric* f = g_fabric.load(memory_order_acquire);
    if (f == nullptr) return faulty_counts{};
    lock_guard<spinlock> g(f->lock);
    return f->seen;
}

int faulty_kill(int rank) {
    return with_rank(rank, [](fabric& f, int r) { faulty_link::kill_locked(f, r); });
}

int faulty_stall(int rank) {
    return with_rank(rank, [](fabric& f, int r) { f.ranks[std::size_t(r)].stalled = true; });
}

int faulty_resume(int rank) {
    return with_rank(rank, [](fabric& f, int r) { f.ranks[std::size_t(r)].stalled = false; });
}

namespace {

int make_faulty_transport(const transport_config& cfg, std::unique_ptr<transport>* out) {
    std::int64_t timeout_ns = 0;
    if (int rc = read_peer_timeout(&timeout_ns); rc != 0) return rc;
    faulty_plan plan;
    {
        lock_guard<spinlock> g(g_plan_lock);
        plan = g_plan;
    }
    int n = cfg.nodes == 0 ? 1 : int(cfg.nodes);
    auto f = std::shared_ptr<fabric>(new (std::nothrow) fabric(n, plan));
    if (!f) return ENOMEM;
    std::vector<std::unique_ptr<protocol>> eps;
    for (int r = 0; r < n; ++r) {
        auto l = std::unique_ptr<link>(new (std::nothrow) faulty_link(f, r, cfg.def->name));
        if (!l) return ENOMEM;
        eps.emplace_back(new (std::nothrow) protocol(std::move(l), timeout_ns, plan.receiver_wait_ns));
        if (!eps.back()) return ENOMEM;
    }
    if (int rc = make_protocol_transport(cfg, std::move(eps), out); rc != 0) return rc;
    g_fabric.store(f.get(), memory_order_release);  // lives while its links do: the job's transport
    return 0;
}

const transport_def faulty_transport = {
    .name = "faulty",
    .description = "every node in this process, weft's wire protocol over a link that injects faults (tests)",
    .make = make_faulty_transport,
};

}  // namespace
WEFT_REGISTER(faulty_transport);
}  // namespace weft::detail::net
