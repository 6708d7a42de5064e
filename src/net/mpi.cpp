// The mpi transport: one node per MPI rank (WEFT_NET=mpi under mpiexec).
//
// Glossary:
//   frame      one MPI message of the frame tag on the transport's own
//              communicator: a 64-byte header and a payload (wire.hpp), at most
//              kFrameMax bytes, decoded by decode_frame before anything acts on
//              it. A longer message's frame is its header alone (kFlagBulk); its
//              payload is the sender's next message of the bulk tag.
//   ring       kRingSlots receives of a frame, posted in advance (MPI_Irecv from
//              any rank): frames match them in posting order, and the step
//              tests the oldest, so frames are taken in the order MPI matched
//              them (a sender's in the order it sent them).
//   progress   the step that completes this rank's MPI requests: posted sends
//              finish, frames from other ranks are received, decoded and put
//              into their ports. The scheduler runs it (core/progress.hpp):
//              idle workers at every look, busy ones at a bounded interval.
//              One worker at a time (progress_lock_, try-locked).
//   window     what this rank may have in flight to one peer: kWindowMsgs
//              frames and kWindowBytes payload bytes, the peer's staging
//              memory for this rank. A sender holds credit for each data frame;
//              the peer returns it once it has taken the frame from MPI.
//   backlog    a peer's frames that found their port full, in arrival order,
//              each waiting for room; its delivery thread puts them, each
//              port's in order, a full port never delaying another port's.
//   hold       a port with frames of a peer in the backlog: that peer sends it
//              nothing more until its resume (the backlog has taken them all).
//              A backlogged frame's credit is returned as any other's, so a
//              port whose receiver does not receive never takes the window
//              that every other port of its node (an RPC reply port, the
//              naming service's) needs.
//   port cache this rank's knowledge of remote ports: alive (with max_bytes)
//              or the error a probe or a nack reported.
//   liveness   a peer's last heard time (any frame from it); a thread waiting
//              for a peer's answer pings it when it is silent, and declares it
//              dead (EHOSTDOWN for its waiters and every later send) once it
//              has answered nothing for the peer timeout (WEFT_NET_PEER_TIMEOUT;
//              "Liveness" below, docs/design/mpi.md, "A rank that dies").
//
// A send (weft_net_send to another node), in order (each wait watches the
// peer's liveness; a peer declared dead fails the send at once):
//   1. the port cache: an unknown port is probed (a probe frame; the thread
//      waits for the reply): ENOENT or EMSGSIZE come back from here (a live
//      port is kept in the cache, a missing one is asked about again next time);
//   2. credit: the thread waits on its peer's credit list (asking the peer
//      once for what it has freed) until a frame of its length fits the window
//      and the port is not held;
//   3. the frame: up to kInlineMax payload bytes, header and payload are copied
//      into one frame and posted (MPI_Isend), and the send returns, as a send
//      into a local port returns once buffered; a longer message posts its
//      header frame and then its payload as a bulk message (both under
//      mpi_lock_, so a peer's bulks come in the order of their headers): up to
//      kCopyMax bytes from a copy, and the send returns; above, from the
//      caller's buffer (no copy), and the thread waits for that send.
// A data frame at the destination (progress):
//   4. taken from the ring, decoded; a bulk frame's payload is received
//      from its sender on the bulk tag: straight into the buffer of a
//      receiver waiting on its port (claimed, port_claim) once MPI has the
//      payload (receive_direct), else into a staging buffer (MPI_Irecv at
//      once); its peer's later frames wait behind it until the payload is in
//      (a peer's frames are acted on in the order it sent them). Its credit
//      is owed back from here on. If its peer's backlog has no frame for the
//      port, port_try_put; a
//      full port (EAGAIN) puts a copy of the message in the backlog and holds
//      the port (a hold frame to the peer, posted before the credit owed
//      back: the hold reaches the peer first). The peer's delivery thread
//      drains the backlog, retrying full ports with a growing sleep (a port has
//      no room notification for a transport); when the last backlogged frame of
//      a port is put, the port is resumed (a resume frame);
//   5. an error of the put (ENOENT, EPIPE, EMSGSIZE) goes back as a nack: the
//      sender's port cache marks the port, so the sender's next send to it
//      fails with that error (a port destroyed with messages on the wire drops
//      them, as destroy drops a local port's buffered messages).
// MPI calls: in `funneled` mode (the default, measured faster at 32 KiB and
// above and no slower below: docs/design/mpi.md, "Thread level") every call
// is made under mpi_lock_, so the transport needs MPI_THREAD_SERIALIZED; in
// `multiple` mode senders call MPI_Isend directly (MPI_THREAD_MULTIPLE).
// WEFT_MPI_THREAD picks one.
//
// Memory: a peer's frames staged here are at most its window (credited frames)
// plus, for each held port, the frames it sent before the hold reached it (at
// most one window).
//
// Lock order: progress_lock_ -> mpi_lock_ -> {peer::lock, pend_lock_, ctl_lock_,
// cache_lock_, probe_lock_, a port's lock}; the last ones are never nested.
// A completion's lock is taken alone, after the others are released.
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/env.hpp"
#include "core/progress.hpp"
#include "core/wait.hpp"
#include "net/port.hpp"
#include "net/transport.hpp"
#include "net/wire.hpp"
#include "sync/wait_list.hpp"

namespace weft::detail::net {
namespace {

// --- Tunables (docs/design/mpi.md, "Credits") ----------------------------------------
// Frames and payload bytes one rank may have in flight to one peer. Guesses: 64
// frames keep a stream of small messages from waiting for credit (credit comes
// back every 32); 4 MiB holds four 1 MiB messages. A message longer than the
// window goes alone, when the whole window is free.
constexpr std::uint64_t kWindowMsgs = 64;
constexpr std::uint64_t kWindowBytes = std::uint64_t(4) << 20;
// Up to this many payload bytes a message is a copy and the send returns at
// once; above, the caller's buffer is sent from and the caller waits for the
// send. Guess: where a copy starts to cost more than the wait (a 64 KiB memcpy
// ~5 us).
constexpr std::size_t kCopyMax = 64 * 1024;
// The longest frame, header included, and so the most payload a message
// carries in its frame; a longer one's payload goes as a bulk message. Open
// MPI's shared-memory eager limit (btl_vader_eager_limit, 4 KiB) counts its
// own headers: measured between two ranks, a 4,032-byte message goes eagerly
// in about 1 us, one of 4,048 bytes by rendezvous in 6-7 us.
constexpr std::size_t kFrameMax = 4032;
constexpr std::size_t kInlineMax = kFrameMax - kWireHeaderBytes;
// Receives of a frame posted in advance. A frame that comes while all are
// full waits in MPI's unexpected queue until one is posted again. Guess:
// several steps' worth of frames.
constexpr int kRingSlots = 32;
// Frames taken per progress step at most (the worker has its own threads).
constexpr int kRecvBatch = 16;
// A polling ult's steps complete sends and post control frames every this
// many (step()). Guess: a few hundred ns apart, against credit that a peer
// waits for for a round trip anyway.
constexpr unsigned kWaitingSideEvery = 8;
// How long a receiver claimed for a long message's payload waits for MPI to
// have that payload (its sender posts it right after the header) before the
// payload goes through a staging buffer instead; the claimed receiver's
// deadline does not end its wait meanwhile. Guess: well above the
// microseconds between a sender's two posts, well below a timeout anyone sets.
constexpr std::int64_t kClaimWaitNs = 50'000;
// The delivery thread's retry of a full port: first and longest sleep, ns.
constexpr std::int64_t kRetryFirstNs = 20'000;
constexpr std::int64_t kRetryMaxNs = 1'000'000;
// The MPI tags on the transport's own communicator: frames, and the payloads
// of long messages (bulk), which only a receive posted for its sender takes.
constexpr int kTagFrame = 1;
constexpr int kTagBulk = 2;

// --- Liveness (docs/design/mpi.md, "A rank that dies") -------------------------------
// A peer that answered nothing (no frame at all) for the peer timeout while a
// thread waited on it is declared dead. WEFT_NET_PEER_TIMEOUT sets it (its
// default and bounds: read_peer_timeout, core/env.cpp).
// A waiter looks at its peer's liveness this many times per timeout; from the
// first look that finds the peer silent it pings it (a probe frame of id 0,
// which any live peer's progress answers), at most once per look interval.
constexpr std::int64_t kLivenessLooks = 4;
// What the threads waiting on a dead peer, and every later send to it, return:
// the peer is gone, which the caller's own timeouts (ETIMEDOUT) do not say.
constexpr int kPeerDead = EHOSTDOWN;
// The probe id of a liveness ping (a port probe's ids start at 1).
constexpr std::uint64_t kPingId = 0;
// Progress steps a waiter runs, at most, to receive a ping's answer before it
// declares the peer dead (16 frames each).
constexpr int kDrainSteps = 64;

std::uint64_t charge_of(std::uint64_t len) { return std::min(len, kWindowBytes); }

std::uint64_t port_key(std::uint32_t node, std::uint32_t index) { return (std::uint64_t(node) << 32) | index; }

// A port of a known node, generation included (holds, backlogs).
std::uint64_t slot_key(std::uint32_t index, std::uint32_t gen) { return (std::uint64_t(gen) << 32) | index; }

bool contains(const std::vector<std::uint64_t>& v, std::uint64_t k) {
    return std::find(v.begin(), v.end(), k) != v.end();
}

// A thread waiting for one event that another (progress) signals: link under
// `lk`, or find it done already. The signaller never touches it after its
// wake (the waiter's frame may then go).
struct completion {
    std::uint32_t lk = 0;
    bool done = false;
    int result = 0;
    std::uint64_t value = 0;
    wait_record rec;

    void await(const char* what, const void* object) {
        spinlock_ref l(lk);
        l.lock();
        if (done) {
            l.unlock();
            return;
        }
        rec.linked = true;
        (void)wait(&rec, &lk, 0, what, object);
    }
    // As await, until deadline_ns (absolute, monotonic): false if it passed first.
    bool await_until(std::int64_t deadline_ns, const char* what, const void* object) {
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
    // A heap completion whose waiter gives up (its peer is dead): whoever
    // completes it frees it; true if that happened already (free it yourself).
    bool abandon() {
        spinlock_ref l(lk);
        l.lock();
        bool d = done;
        abandoned = true;
        l.unlock();
        return d;
    }
    void complete(int r, std::uint64_t v) {
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

private:
    bool abandoned = false;
    static void unlink_nothing(wait_record*) {}
};

// A message of a peer's backlog: its port, header and a copy of its payload.
struct staged {
    staged* next = nullptr;
    unsigned char* buf = nullptr;  // malloc'd payload (null when len is 0)
    std::size_t len = 0;
    weft_port_id_t to{};
    msg_header h;
};

// A peer's frame that waits for a bulk payload still being received (its
// own, or an earlier frame's): a peer's frames are acted on in sent order.
struct incoming {
    incoming* next = nullptr;
    decoded_frame f;                     // its payload points into bytes or body
    unsigned char* bytes = nullptr;      // malloc'd copy of a frame with its payload inline
    unsigned char* body = nullptr;       // malloc'd bulk payload
    std::size_t body_cap = 0;            // its size
    MPI_Request bulk = MPI_REQUEST_NULL; // the bulk's receive, until it completes
    rx_waiter* claimed = nullptr;        // the receiver whose buffer the bulk is received into
    void* into = nullptr;                // that buffer
    std::int64_t give_up_ns = 0;         // claimed, payload not yet in MPI: when to stage it instead
};

struct alignas(64) peer {
    std::uint32_t lock = 0;  // guards every field below (spinlock_ref)
    // --- Frames to this peer (the sending side) ---
    std::uint64_t cred_msgs = kWindowMsgs;
    std::uint64_t cred_bytes = kWindowBytes;
    void* cw_head = nullptr;  // threads waiting for credit (a wait_list)
    void* cw_tail = nullptr;
    bool asked = false;       // a credit_request is on its way
    bool bye_out = false;     // we sent bye: nothing more goes to it
    std::vector<std::uint64_t> held_out;  // its ports it holds (slot_key): sends to them wait
    // --- Frames from this peer (the receiving side) ---
    staged* bl_head = nullptr;  // its backlog, oldest first
    staged* bl_tail = nullptr;
    std::vector<std::uint64_t> held_in;  // our ports we told it to hold (slot_key)
    std::uint64_t ret_msgs = 0;   // credit freed, not yet returned
    std::uint64_t ret_bytes = 0;
    bool peer_asked = false;    // it waits for credit: return what is freed now
    bool bye_in = false;
    void* dw_head = nullptr;    // its delivery thread, while it waits (a wait_list)
    void* dw_tail = nullptr;
    weft_thread_t deliverer = nullptr;
    bool stopping = false;      // its delivery thread ends (finalize)
    incoming* in_head = nullptr;  // progress only: its frames behind a bulk being received
    incoming* in_tail = nullptr;
    // --- Liveness ---
    // When a frame from it was last taken (coarse_monotonic_ns: a stamp per
    // frame costs a few ns, and the timeout is at least 100 ms). Relaxed: a
    // time compared with the clock, ordering nothing; stored by progress only.
    atomic<std::int64_t> heard_ns{0};
    // 0, or kPeerDead once it is declared dead (for good). Written under lock;
    // read under it by the credit wait, relaxed elsewhere (a stale 0 lets at
    // most a frame more go to a dead peer).
    atomic<int> dead{0};
    std::int64_t pinged_ns = 0;  // when the last liveness ping went to it (coarse clock; 0: none)
};

void unlink_credit(wait_record* rec) {
    auto* p = static_cast<peer*>(rec->queue);
    wait_list(p->cw_head, p->cw_tail).remove(rec);
}

void unlink_delivery(wait_record* rec) {
    auto* p = static_cast<peer*>(rec->queue);
    wait_list(p->dw_head, p->dw_tail).remove(rec);
}

// A posted MPI_Isend: its buffer to free, or its waiting sender to wake.
struct pending_send {
    void* buf = nullptr;
    completion* waiter = nullptr;
    int dest = 0;  // a dead peer's sends may never complete: finalize does not wait for them
};

// A control frame waiting for the progress step to post it.
struct ctl_frame {
    int dest = 0;
    wire_header h;
};

// A thread waiting for a probe's reply, and the node it asked.
struct probe_wait {
    completion* c = nullptr;
    int node = 0;
};

struct port_entry {
    std::uint32_t gen = 0;
    int err = 0;               // 0: alive; else what sends to it return
    std::uint64_t max_bytes = 0;
};

class mpi_transport final : public transport {
public:
    ~mpi_transport() override {
        cancel_ring();
        std::free(spare_body_);
        if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
        if (!we_init_) return;
        // Open MPI 4.1's MPI_Finalize ends with a fence over every rank of the
        // job, which can wait for a dead one for ever (docs/design/mpi.md, "A
        // rank that dies"): after a death MPI is left to the process's exit.
        for (int r = 0; r < size_; ++r) {
            if (peers_ && peers_[r].dead.load(memory_order_relaxed) != 0) {
                std::fprintf(stderr, "weft: mpi transport: node %d was declared dead: MPI_Finalize is not called "
                                     "(it could wait for that rank for ever)\n", r);
                return;
            }
        }
        MPI_Finalize();
    }

    int init(const transport_config&) {
        if (int rc = read_mpi_thread(&multiple_); rc != 0) return rc;
        if (int rc = read_peer_timeout(&timeout_ns_); rc != 0) return rc;
        int required = multiple_ ? MPI_THREAD_MULTIPLE : MPI_THREAD_SERIALIZED;
        int inited = 0, provided = 0;
        MPI_Initialized(&inited);
        if (inited) {
            int finalized = 0;
            MPI_Finalized(&finalized);
            if (finalized) {
                std::fprintf(stderr, "weft: WEFT_NET=mpi: MPI was finalized already; weft_net_init must come "
                                     "before the program's MPI_Finalize\n");
                return EINVAL;
            }
            MPI_Query_thread(&provided);
        } else {
            if (MPI_Init_thread(nullptr, nullptr, required, &provided) != MPI_SUCCESS) {
                std::fprintf(stderr, "weft: WEFT_NET=mpi: MPI_Init_thread failed (is the program run under "
                                     "mpiexec?)\n");
                return EINVAL;
            }
            we_init_ = true;
        }
        if (provided < required) {
            std::fprintf(stderr, "weft: WEFT_NET=mpi needs MPI thread level %s, this MPI provides %d (%s); "
                                 "initialise MPI with MPI_Init_thread at that level "
                                 "(WEFT_MPI_THREAD=funneled needs only MPI_THREAD_SERIALIZED)\n",
                         multiple_ ? "MPI_THREAD_MULTIPLE" : "MPI_THREAD_SERIALIZED", provided,
                         inited ? "the program initialised it" : "weft asked for it");
            return EINVAL;
        }
        // A communicator of our own: the program's MPI traffic never matches
        // ours. Errors return (MPI_ERRORS_RETURN) instead of aborting, so that a
        // failed call is reported (docs/design/mpi.md, "A rank that dies").
        if (MPI_Comm_dup(MPI_COMM_WORLD, &comm_) != MPI_SUCCESS) return EINVAL;
        MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
        MPI_Comm_rank(comm_, &rank_);
        MPI_Comm_size(comm_, &size_);
        peers_.reset(new (std::nothrow) peer[std::size_t(size_)]);
        return peers_ ? 0 : ENOMEM;
    }

    const char* name() const override { return "mpi"; }
    std::uint32_t nodes() const override { return std::uint32_t(size_); }
    std::int32_t home() const override { return rank_; }

    int start(job& j) override {
        j_ = &j;
        if (int rc = post_ring(); rc != 0) return rc;
        for (int r = 0; r < size_; ++r) peers_[r].heard_ns.store(coarse_monotonic_ns(), memory_order_relaxed);
        for (int r = 0; r < size_; ++r) {
            if (r == rank_) continue;
            weft_attr_t attr;
            weft_attr_init(&attr);
            weft_attr_setname(&attr, "weft-mpi-delivery");
            int rc = weft_net_spawn(&peers_[r].deliverer, rank_, &attr, &delivery_main, new delivery_arg{this, r});
            weft_attr_destroy(&attr);
            if (rc != 0) {
                stop_deliverers();
                return rc;
            }
        }
        if (!set_progress_hook(&progress_entry, this)) {
            std::fprintf(stderr, "weft: WEFT_NET=mpi: another progress hook is set\n");
            stop_deliverers();
            return EBUSY;
        }
        return 0;
    }

    // A nonblocking barrier over the job's communicator, completed by the
    // calling thread between yields: every rank has created its service ports.
    int all_started(job&) override {
        MPI_Request req = MPI_REQUEST_NULL;
        {
            mpi_guard g(*this);
            if (MPI_Ibarrier(comm_, &req) != MPI_SUCCESS) {
                std::fprintf(stderr, "weft: WEFT_NET=mpi: MPI_Ibarrier failed at weft_net_init\n");
                return EIO;
            }
        }
        for (unsigned spins = 0;; ++spins) {
            int done = 0;
            {
                mpi_guard g(*this);
                if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
                    std::fprintf(stderr, "weft: WEFT_NET=mpi: the start-up barrier failed (a rank died?)\n");
                    return EIO;
                }
            }
            if (done) {
                // Every rank reached the barrier: each was alive just now.
                for (int r = 0; r < size_; ++r) peers_[r].heard_ns.store(coarse_monotonic_ns(), memory_order_relaxed);
                return 0;
            }
            weft_thread_yield();
            if (spins % 64 == 63) sched_yield();  // oversubscribed ranks: let the others run
        }
    }

    void stop(job&) override {
        // 1. Everything queued goes out, then a bye to every peer: after it we
        //    send that peer nothing (MPI keeps one sender's messages in order,
        //    so the bye is the last frame it receives from us).
        progress_lock_.lock();
        step();
        {
            mpi_guard g(*this);
            for (int r = 0; r < size_; ++r) {
                if (r == rank_) continue;
                wire_header h;
                h.kind = std::uint8_t(frame_kind::bye);
                h.src_node = std::uint32_t(rank_);
                h.dst_node = std::uint32_t(r);
                if (peers_[r].dead.load(memory_order_relaxed) == 0) post_ctl_locked(r, h);
                spinlock_ref l(peers_[r].lock);
                l.lock();
                peers_[r].bye_out = true;
                l.unlock();
            }
        }
        progress_lock_.unlock();
        // 2. Make progress until every peer's bye is in and our sends are done,
        //    watching the liveness of the peers whose bye is not: a dead one
        //    sends none, and is no longer waited for.
        std::vector<std::int64_t> next_look(std::size_t(size_), first_deadline());
        for (unsigned spins = 0;; ++spins) {
            progress_lock_.lock();
            step();
            bool done = quiet();
            progress_lock_.unlock();
            if (done) break;
            if (timeout_ns_ != 0) {
                std::int64_t now = monotonic_ns();
                for (int r = 0; r < size_; ++r) {
                    if (r == rank_ || now < next_look[std::size_t(r)]) continue;
                    spinlock_ref l(peers_[r].lock);
                    l.lock();
                    bool waited = !peers_[r].bye_in;
                    l.unlock();
                    if (waited) (void)look_at(r, &next_look[std::size_t(r)]);
                }
            }
            weft_thread_yield();
            if (spins % 64 == 63) sched_yield();  // oversubscribed ranks: let the others run
        }
        clear_progress_hook();
        stop_deliverers();
        cancel_ring();  // every peer said bye: no frame is left to come
    }

    int send(const weft_port_id_t& to, msg_header h, const void* buf, std::size_t len) override {
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
        if (len <= kInlineMax) {
            auto* fb = static_cast<unsigned char*>(std::malloc(kWireHeaderBytes + len));
            if (fb == nullptr) {
                give_back_credit(p, charge);
                return ENOMEM;
            }
            encode_header(wh, fb);
            if (len != 0) std::memcpy(fb + kWireHeaderBytes, buf, len);
            mpi_guard g(*this);
            return post_locked(int(to.node), kTagFrame, fb, kWireHeaderBytes + len, fb, nullptr);
        }
        // A long message: its header frame, then its payload as a bulk message.
        wh.flags = kFlagBulk;
        bool copy = len <= kCopyMax;
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
            // no other sender's pair comes between these two (mpi_lock_, in
            // either thread mode).
            lock_guard<spinlock> pair(mpi_lock_);
            rc = post_locked(int(to.node), kTagFrame, fb, kWireHeaderBytes, fb, nullptr);
            if (rc == 0) rc = post_locked(int(to.node), kTagBulk, copy ? body : buf, len, body, c);
            else std::free(body);
        }
        if (copy) return rc;
        if (rc != 0) {
            delete c;
            return rc;
        }
        if (int d = await_peer(*c, int(to.node)); d != 0) {
            if (c->abandon()) delete c;  // completed meanwhile; else its completion frees it
            return d;
        }
        rc = c->result;
        delete c;
        return rc;
    }

    // The liveness of the file's waits, for waits outside the transport.
    std::int64_t first_look(std::uint32_t node) const override {
        return int(node) == rank_ || node >= std::uint32_t(size_) ? 0 : first_deadline();
    }
    int look(std::uint32_t node, std::int64_t* next_ns) override {
        if (timeout_ns_ == 0 || int(node) == rank_ || node >= std::uint32_t(size_)) {
            *next_ns = 0;
            return 0;
        }
        return look_at(int(node), next_ns);
    }

private:
    struct delivery_arg {
        mpi_transport* t;
        int peer;
    };

    // Serialises MPI calls in funneled mode.
    struct mpi_guard {
        explicit mpi_guard(mpi_transport& t) : t_(t) {
            if (!t_.multiple_) t_.mpi_lock_.lock();
        }
        ~mpi_guard() {
            if (!t_.multiple_) t_.mpi_lock_.unlock();
        }
        mpi_transport& t_;
    };

    static bool progress_entry(void* self, bool waiting) {
        auto* t = static_cast<mpi_transport*>(self);
        if (!t->progress_lock_.try_lock()) return false;
        bool did = t->step(waiting);
        t->progress_lock_.unlock();
        return did;
    }

    static void* delivery_main(void* a) {
        auto* arg = static_cast<delivery_arg*>(a);
        mpi_transport* t = arg->t;
        int r = arg->peer;
        delete arg;
        t->deliver_loop(t->peers_[r], r);
        return nullptr;
    }

    // --- The sending side ---------------------------------------------------------

    // The cache's verdict on port `to` for a message of len bytes, probing an
    // unknown port: 0, ENOENT (or EPIPE: destroyed while messages were on the
    // wire), EMSGSIZE.
    int check_port(const weft_port_id_t& to, std::size_t len) {
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
                slot.gen = to.gen;
                slot.err = c.result;
                slot.max_bytes = c.value;
            }
            cache_lock_.unlock();
        }
    }

    void give_back_credit(peer& p, std::uint64_t charge) {
        spinlock_ref l(p.lock);
        l.lock();
        p.cred_msgs += 1;
        p.cred_bytes += charge;
        wait_record* woken = take_credit_waiters(p);
        l.unlock();
        wake_chain(woken);
    }

    // Unlinks every credit waiter (p.lock held), chained through next.
    static wait_record* take_credit_waiters(peer& p) {
        wait_record* chain = nullptr;
        wait_list q(p.cw_head, p.cw_tail);
        while (wait_record* r = q.pop_front()) {
            r->next = chain;
            chain = r;
        }
        return chain;
    }

    static void wake_chain(wait_record* r) {
        while (r != nullptr) {
            wait_record* next = r->next;  // read before the wake: the record dies with its waiter
            wake(r);
            r = next;
        }
    }

    // Posts an MPI_Isend of n bytes (the MPI guard held); owned is freed and
    // waiter completed when it is done: at once if MPI sent it inline (Open
    // MPI's eager sends over shared memory copy the message out in MPI_Isend
    // and return a request that is complete), else by a progress step.
    int post_locked(int dest, int tag, const void* buf, std::size_t n, void* owned, completion* waiter) {
        MPI_Request req;
        int rc = MPI_Isend(buf, int(n), MPI_BYTE, dest, tag, comm_, &req);
        if (rc != MPI_SUCCESS) {
            report_mpi_error("MPI_Isend", dest, rc);
            std::free(owned);
            return EIO;
        }
        int done = 0;
        if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done) {
            std::free(owned);
            if (waiter != nullptr) waiter->complete(0, 0);
            return 0;
        }
        pend_lock_.lock();
        send_reqs_.push_back(req);
        sends_.push_back(pending_send{owned, waiter, dest});
        pend_lock_.unlock();
        return 0;
    }

    // Posts a control frame (the MPI guard held), unless we said bye to dest.
    void post_ctl_locked(int dest, const wire_header& h) {
        auto* fb = static_cast<unsigned char*>(std::malloc(kWireHeaderBytes));
        if (fb == nullptr) {
            std::fprintf(stderr, "weft: mpi transport: out of memory for a control frame to node %d\n", dest);
            return;
        }
        encode_header(h, fb);
        (void)post_locked(dest, kTagFrame, fb, kWireHeaderBytes, fb, nullptr);
    }

    // A control frame from a thread: the next progress step posts it.
    void queue_ctl(int dest, const wire_header& h) {
        ctl_lock_.lock();
        ctl_.push_back(ctl_frame{dest, h});
        ctl_lock_.unlock();
    }

    void report_mpi_error(const char* call, int peer_rank, int rc) {
        char text[MPI_MAX_ERROR_STRING];
        int n = 0;
        MPI_Error_string(rc, text, &n);
        std::fprintf(stderr, "weft: mpi transport: %s with node %d failed: %s\n", call, peer_rank, text);
    }

    // --- Liveness (docs/design/mpi.md, "A rank that dies") ---------------------------
    //
    // Only a thread that waits for a peer's answer watches it: the wait has a
    // deadline one look interval (timeout / kLivenessLooks) ahead, and when it
    // passes the thread looks (look_at()):
    //   1. the peer is dead already: the wait ends with kPeerDead;
    //   2. it has been silent for the whole timeout and a ping sent at least one
    //      interval ago is unanswered: this rank's own progress runs first (the
    //      answer may be waiting in MPI while this rank was not scheduled), and
    //      if nothing came, the peer is declared dead (declare_dead());
    //   3. it has been silent for an interval, and not pinged in the last one:
    //      a ping goes to it (posted at once, so that step 2 measures from when
    //      it left), and any live peer's progress answers it;
    //   4. the next look is one interval ahead.
    // A live peer thus answers at least every interval while anyone waits on it,
    // whatever it has to send, and a rank that was itself not running (all its
    // workers computing, or the process stopped) never declares a peer dead
    // before it has asked it and let its own progress look for the answer.

    // The deadline of a first wait on a peer: one look interval ahead, or 0 (no
    // deadline) when the timeout is off.
    std::int64_t first_deadline() const { return timeout_ns_ == 0 ? 0 : monotonic_ns() + timeout_ns_ / kLivenessLooks; }

    // A waiter's look at peer r once its deadline passed (steps above): 0 and
    // the next deadline in *next, or kPeerDead.
    int look_at(int r, std::int64_t* next) {
        peer& p = peers_[r];
        const std::int64_t interval = timeout_ns_ / kLivenessLooks;
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
            for (int i = 0; i < kDrainSteps && p.heard_ns.load(memory_order_relaxed) < pinged; ++i) {
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
    void ping(int r) {
        wire_header q;
        q.kind = std::uint8_t(frame_kind::probe);
        q.src_node = std::uint32_t(rank_);
        q.dst_node = std::uint32_t(r);
        q.arg0 = kPingId;
        {
            mpi_guard g(*this);
            post_ctl_locked(r, q);
        }
        peer& p = peers_[r];
        spinlock_ref l(p.lock);
        l.lock();
        p.pinged_ns = coarse_monotonic_ns();
        l.unlock();
    }

    // Declares peer r dead (once): its credit waiters and probe waiters wake
    // with kPeerDead; a large send waiting on it sees it at its next look.
    int declare_dead(int r, std::int64_t silent_ns) {
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
        std::fprintf(stderr, "weft: mpi transport: node %d answered nothing for %.1f s; declared dead\n", r,
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

    // Waits for c, an answer of peer r, watching r's liveness: 0 once c is
    // done, or kPeerDead.
    int await_peer(completion& c, int r) {
        std::int64_t next = first_deadline();
        for (;;) {
            if (c.await_until(next, "weft_net_send", &peers_[r])) return 0;
            if (int d = look_at(r, &next); d != 0) return d;
        }
    }

    // A probe whose waiter gives up: out of the map, or, if a reply or a
    // declaration took it out first, completed by it (at once) before c goes.
    void forget_probe(std::uint64_t id, completion& c) {
        probe_lock_.lock();
        bool mine = probes_.erase(id) != 0;
        probe_lock_.unlock();
        if (!mine) c.await("weft_net_send", &c);
    }

    // --- The progress step (progress_lock_ held) ------------------------------------

    // True if it did something: a send completed, a frame came in or went out.
    // `waiting` (a ult polls for its message, core/progress.hpp): one frame,
    // and the step ends after it; the sends and control frames only every
    // kWaitingSideEvery-th such step (a ult polls in a tight loop).
    // A step that wakes the thread of a long send takes no frame: that thread
    // mostly receives next, and the reply it waits for, whose header often
    // comes right behind the send's completion, then finds it waiting (and
    // goes straight into its buffer: receive_direct) instead of staged. The
    // sends are tested twice: MPI_Testsome makes progress only after finding
    // nothing complete, and that progress may have taken both the send's
    // completion and the reply's header.
    bool step(bool waiting = false) {
        mpi_guard g(*this);
        bool did = false;
        if (!waiting) {
            bool woke = false;
            did = complete_sends(&woke);
            if (woke) return flush_control() || did;
        }
        did |= receive(waiting ? 1 : kRecvBatch);
        did |= complete_bulks();
        if (waiting && (did || ++waiting_steps_ % kWaitingSideEvery != 0)) return did;
        if (waiting) did |= complete_sends(nullptr);
        did |= flush_control();
        return did;
    }

    // Completes the posted sends MPI has finished; *woke (if given): whether
    // one of them had a waiting thread, and the sends are tested twice when
    // the first test finds none.
    bool complete_sends(bool* woke) {
        pend_lock_.lock();
        if (send_reqs_.empty()) {
            pend_lock_.unlock();
            return false;
        }
        // Test a snapshot: senders may append while we test (multiple mode).
        std::size_t n = send_reqs_.size();
        done_idx_.resize(n);
        int outcount = 0;
        tested_.assign(send_reqs_.begin(), send_reqs_.begin() + long(n));
        pend_lock_.unlock();
        int rc = MPI_Testsome(int(n), tested_.data(), &outcount, done_idx_.data(), MPI_STATUSES_IGNORE);
        if (rc == MPI_SUCCESS && outcount == 0 && woke != nullptr)  // again, after the progress it made (step)
            rc = MPI_Testsome(int(n), tested_.data(), &outcount, done_idx_.data(), MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) report_mpi_error("MPI_Testsome (sends)", -1, rc);
        if (outcount <= 0 || outcount == MPI_UNDEFINED) return false;
        pend_lock_.lock();
        for (std::size_t i = 0; i < n; ++i) send_reqs_[i] = tested_[i];
        std::vector<completion*> woken;
        std::size_t keep = 0;
        for (std::size_t i = 0; i < send_reqs_.size(); ++i) {
            if (send_reqs_[i] == MPI_REQUEST_NULL) {
                std::free(sends_[i].buf);
                if (sends_[i].waiter != nullptr) woken.push_back(sends_[i].waiter);
                continue;
            }
            send_reqs_[keep] = send_reqs_[i];
            sends_[keep] = sends_[i];
            ++keep;
        }
        send_reqs_.resize(keep);
        sends_.resize(keep);
        pend_lock_.unlock();
        for (completion* c : woken) c->complete(0, 0);
        if (woke != nullptr) *woke = !woken.empty();
        return true;
    }

    // Posts the ring (at start, before the progress hook is set).
    int post_ring() {
        mpi_guard g(*this);
        ring_bufs_.assign(kRingSlots, nullptr);
        ring_reqs_.assign(kRingSlots, MPI_REQUEST_NULL);
        for (std::size_t i = 0; i < ring_bufs_.size(); ++i) {
            ring_bufs_[i] = static_cast<unsigned char*>(std::malloc(kFrameMax));
            if (ring_bufs_[i] == nullptr) return ENOMEM;
            if (int rc = repost(i); rc != 0) return rc;
        }
        return 0;
    }

    int repost(std::size_t i) {
        int rc = MPI_Irecv(ring_bufs_[i], int(kFrameMax), MPI_BYTE, MPI_ANY_SOURCE, kTagFrame, comm_, &ring_reqs_[i]);
        if (rc == MPI_SUCCESS) return 0;
        report_mpi_error("MPI_Irecv (a frame)", -1, rc);
        return EIO;
    }

    void cancel_ring() {
        for (std::size_t i = 0; i < ring_bufs_.size(); ++i) {
            if (ring_reqs_[i] != MPI_REQUEST_NULL) {
                MPI_Cancel(&ring_reqs_[i]);
                MPI_Wait(&ring_reqs_[i], MPI_STATUS_IGNORE);
            }
            std::free(ring_bufs_[i]);
        }
        ring_bufs_.clear();
        ring_reqs_.clear();
    }

    // Takes up to `batch` frames from the ring, oldest first, testing the
    // oldest receive (MPI_Test: an MPI progress call when it is not in).
    bool receive(int batch) {
        bool did = false;
        for (int k = 0; k < batch; ++k) {
            MPI_Request& req = ring_reqs_[ring_head_];
            int flag = 0;
            MPI_Status st;
            int rc = MPI_Test(&req, &flag, &st);
            if (rc != MPI_SUCCESS && req != MPI_REQUEST_NULL) {
                report_mpi_error("MPI_Test (a frame)", -1, rc);
                return did;
            }
            if (rc == MPI_SUCCESS && !flag) return did;
            if (rc != MPI_SUCCESS) {
                // Completed with an error: a message longer than any frame
                // (MPI_ERR_TRUNCATE), received into the slot's bytes only.
                char text[MPI_MAX_ERROR_STRING];
                int n = 0;
                MPI_Error_string(rc, text, &n);
                std::fprintf(stderr, "weft: mpi transport: node %d sent a malformed frame (oversized frame: at "
                                     "most %zu bytes; %s); dropped\n",
                             st.MPI_SOURCE, kFrameMax, text);
            } else {
                int count = 0;
                MPI_Get_count(&st, MPI_BYTE, &count);
                accept(ring_bufs_[ring_head_], std::size_t(count), st.MPI_SOURCE);
            }
            did = true;
            if (repost(ring_head_) != 0) return did;
            ring_head_ = (ring_head_ + 1) % ring_bufs_.size();
        }
        return did;
    }

    // A frame from the ring (its bytes are the slot's until it is posted
    // again): decoded, then acted on now, or after its peer's earlier bulk.
    void accept(const unsigned char* bytes, std::size_t n, int source) {
        // Any frame, even a malformed one, shows the peer alive.
        peers_[source].heard_ns.store(coarse_monotonic_ns(), memory_order_relaxed);
        decoded_frame f;
        wire_context ctx{std::uint32_t(size_), std::uint32_t(rank_), std::uint32_t(source)};
        if (wire_error e = decode_frame(bytes, n, ctx, &f); e != wire_error::none) {
            std::fprintf(stderr, "weft: mpi transport: node %d sent a malformed frame of %zu bytes (%s: %s); "
                                 "dropped\n",
                         source, n, wire_error_name(e), f.why);
            return;
        }
        peer& p = peers_[source];
        if (!f.bulk && p.in_head == nullptr) {
            handle(p, source, f);
            return;
        }
        if (f.bulk) settle_claim(p, source);
        if (f.bulk && p.in_head == nullptr && receive_direct(p, source, f)) return;
        incoming* in = new_incoming(f.bulk ? 0 : n, source);
        in->f = f;
        if (f.bulk) {
            post_staging(in, source);
        } else {
            std::memcpy(in->bytes, bytes, n);
            if (f.payload != nullptr) in->f.payload = in->bytes + kWireHeaderBytes;
        }
        if (p.in_tail != nullptr) p.in_tail->next = in;
        else p.in_head = in;
        p.in_tail = in;
        ++incoming_;
    }

    // An incoming with room for a frame of n bytes (none when n is 0).
    static incoming* new_incoming(std::size_t n, int source) {
        auto* in = new (std::nothrow) incoming;
        if (in != nullptr && n != 0) in->bytes = static_cast<unsigned char*>(std::malloc(n));
        if (in == nullptr || (n != 0 && in->bytes == nullptr)) out_of_memory(n, source);
        return in;
    }

    // A bulk must be received (the peer's next ones would take its place), and
    // a frame behind one must wait: nothing else can.
    [[noreturn]] static void out_of_memory(std::size_t n, int source) {
        std::fprintf(stderr, "weft: mpi transport: out of memory for a %zu-byte message from node %d\n", n, source);
        std::abort();
    }

    // A staging buffer whose payload was put: kept as the spare if it is the
    // largest yet and at most kWindowBytes, else freed. A long payload's
    // malloc gets fresh pages from the kernel (glibc maps, or gives back and
    // takes again, a block that large), so a buffer freed after every message
    // costs a page fault per 4 KiB at the next one's receive (counted by perf
    // stat in 1 MiB ping-pongs: 44-165 faults per message received).
    void keep_or_free(unsigned char* body, std::size_t cap) {
        if (body == nullptr) return;
        if (cap > spare_cap_ && cap <= kWindowBytes) {
            std::free(spare_body_);
            spare_body_ = body;
            spare_cap_ = cap;
        } else {
            std::free(body);
        }
    }

    // Posts the receive of in's bulk payload into a staging buffer (the spare
    // when it is large enough).
    void post_staging(incoming* in, int source) {
        std::size_t len = in->f.payload_len;
        if (spare_body_ != nullptr && spare_cap_ >= len) {
            in->body = spare_body_;
            in->body_cap = spare_cap_;
            spare_body_ = nullptr;
            spare_cap_ = 0;
        } else {
            in->body = static_cast<unsigned char*>(std::malloc(len));
            if (in->body == nullptr) out_of_memory(len, source);
            in->body_cap = len;
        }
        in->f.payload = in->body;
        int rc = MPI_Irecv(in->body, int(len), MPI_BYTE, source, kTagBulk, comm_, &in->bulk);
        if (rc != MPI_SUCCESS) {
            report_mpi_error("MPI_Irecv (a bulk payload)", source, rc);
            in->bulk = MPI_REQUEST_NULL;
            in->f.payload_len = 0;  // delivered empty rather than never: the peer's frames after it go on
            in->f.payload = nullptr;
        }
    }

    // A bulk whose port's receiver waits: its payload is received straight
    // into that receiver's buffer (no staging copy). The receiver is claimed
    // (port_claim), and the payload's receive posted once MPI has the payload
    // (start_direct): then the receive needs nothing more from the sender
    // (over shared memory with CMA it copies the sender's buffer inside
    // MPI_Imrecv), so the claimed receiver, whose deadline no longer ends its
    // wait, waits for a transfer only. True if it went so: handed over now,
    // or as the peer's first incoming, which complete_bulks finishes (or, once
    // kClaimWaitNs passed with no payload in MPI, releases to the staging path).
    bool receive_direct(peer& p, int source, const decoded_frame& f) {
        weft_port_id_t to{f.h.dst_node, f.h.dst_index, f.h.dst_gen, 0};
        spinlock_ref l(p.lock);
        l.lock();
        bool queued = backlog_has(p, slot_key(to.index, to.gen));  // its frames before it go first
        l.unlock();
        if (queued) return false;
        void* dst = nullptr;
        rx_waiter* w = port_claim(*j_, to, header_of(f), f.payload_len, &dst);
        if (w == nullptr) return false;
        incoming* in = new_incoming(0, source);
        in->f = f;
        in->claimed = w;
        in->into = dst;
        int started = start_direct(in, source);
        if (started == 1) {
            hand_over(p, in);
            return true;
        }
        if (started < 0) in->give_up_ns = monotonic_ns() + kClaimWaitNs;
        p.in_head = p.in_tail = in;
        ++incoming_;
        return true;
    }

    // The receive of a claimed receiver's payload, if MPI has it: MPI_Improbe
    // from its sender on the bulk tag matches the payload of the sender's
    // oldest header whose payload is not received (this one: its earlier ones'
    // receives are posted), and MPI_Imrecv takes it into the receiver's
    // buffer. 1: the payload is in; 0: its receive is posted (in->bulk); -1:
    // MPI has no payload from that sender yet.
    int start_direct(incoming* in, int source) {
        int flag = 0;
        MPI_Message msg = MPI_MESSAGE_NULL;
        int rc = MPI_Improbe(source, kTagBulk, comm_, &flag, &msg, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) report_mpi_error("MPI_Improbe (a bulk payload)", source, rc);
        if (rc != MPI_SUCCESS || !flag) return -1;
        in->give_up_ns = 0;
        rc = MPI_Imrecv(in->into, int(in->f.payload_len), MPI_BYTE, &msg, &in->bulk);
        if (rc != MPI_SUCCESS) {
            report_mpi_error("MPI_Imrecv (a bulk payload)", source, rc);
            in->bulk = MPI_REQUEST_NULL;
            in->f.payload_len = 0;  // delivered empty rather than never, as a failed staging receive
            return 1;
        }
        rc = MPI_Test(&in->bulk, &flag, MPI_STATUS_IGNORE);
        return rc == MPI_SUCCESS && flag ? 1 : 0;  // an error is reported by complete_bulks' test
    }

    // Before a peer's next bulk posts its receive: MPI matches a sender's
    // bulks to the receives in the order they are posted, so a claim at the
    // head of its in list whose payload MPI did not have yet must post its
    // receive first: into the receiver's buffer if MPI has the payload now,
    // else into a staging buffer.
    void settle_claim(peer& p, int source) {
        incoming* in = p.in_head;
        if (in == nullptr || in->give_up_ns == 0) return;
        if (start_direct(in, source) < 0) stage_claimed(in, source);
    }

    // A claim given up before its payload's receive was posted: the receiver
    // looks at its port again, and the payload is staged.
    void stage_claimed(incoming* in, int source) {
        in->give_up_ns = 0;
        port_release(in->claimed);
        in->claimed = nullptr;
        post_staging(in, source);
    }

    // A claimed receiver's payload is in its buffer: its credit is owed back,
    // and the receiver gets the message (in is freed).
    void hand_over(peer& p, incoming* in) {
        const wire_header& h = in->f.h;
        owe_back(p, in->f.payload_len);
        port_hand_over(in->claimed, weft_port_id_t{h.dst_node, h.dst_index, h.dst_gen, 0}, header_of(in->f),
                       in->f.payload_len);
        delete in;
    }

    // Acts on the frames that waited for a bulk, each peer's in order, up to
    // the first whose bulk is still on its way.
    bool complete_bulks() {
        if (incoming_ == 0) return false;
        bool did = false;
        for (int r = 0; r < size_; ++r) {
            peer& p = peers_[r];
            while (incoming* in = p.in_head) {
                if (in->give_up_ns != 0 && start_direct(in, r) < 0) {  // claimed, its payload not yet in MPI
                    if (monotonic_ns() < in->give_up_ns) break;
                    stage_claimed(in, r);
                }
                if (in->bulk != MPI_REQUEST_NULL) {
                    int flag = 0;
                    int rc = MPI_Test(&in->bulk, &flag, MPI_STATUS_IGNORE);
                    if (rc != MPI_SUCCESS) {
                        report_mpi_error("MPI_Test (a bulk payload)", r, rc);
                        if (in->bulk != MPI_REQUEST_NULL) break;
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

    bool flush_control() {
        ctl_lock_.lock();
        ctl_out_.swap(ctl_);
        ctl_lock_.unlock();
        std::vector<ctl_frame>& out = ctl_out_;
        for (int r = 0; r < size_; ++r) {
            if (r == rank_) continue;
            peer& p = peers_[r];
            spinlock_ref l(p.lock);
            l.lock();
            bool due = p.ret_msgs != 0 && (p.peer_asked || p.ret_msgs >= kWindowMsgs / 2 ||
                                           p.ret_bytes >= kWindowBytes / 2);
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
            if (!gone) post_ctl_locked(f.dest, f.h);
        }
        bool did = !out.empty();
        out.clear();  // keeps its capacity for the next step
        return did;
    }

    // A decoded frame of peer p (rank source), acted on.
    void handle(peer& p, int source, const decoded_frame& f) {
        const wire_header& h = f.h;
        weft_port_id_t port{h.dst_node, h.dst_index, h.dst_gen, 0};
        switch (frame_kind(h.kind)) {
        case frame_kind::data:
            deliver(p, source, f);
            break;
        case frame_kind::credit: {
            spinlock_ref l(p.lock);
            l.lock();
            p.cred_msgs = std::min(kWindowMsgs, p.cred_msgs + h.arg0);
            p.cred_bytes = std::min(kWindowBytes, p.cred_bytes + h.arg1);
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
            if (c != nullptr) c->complete(h.tag, h.arg1);
            else std::fprintf(stderr, "weft: mpi transport: node %d answered a probe %llu nobody asked; dropped\n",
                              source, static_cast<unsigned long long>(h.arg0));
            break;
        }
        case frame_kind::nack: {
            cache_lock_.lock();
            port_entry& e = cache_[port_key(h.dst_node, h.dst_index)];
            if (e.gen <= h.dst_gen) {
                e.gen = h.dst_gen;
                e.err = h.tag;
            }
            cache_lock_.unlock();
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

    // Step 4 of the file comment: the message goes into its port now, or a
    // copy to the back of its peer's backlog (its port held). Either way its
    // credit is owed back from here on.
    void deliver(peer& p, int source, const decoded_frame& f) {
        weft_port_id_t to{f.h.dst_node, f.h.dst_index, f.h.dst_gen, 0};
        msg_header mh = header_of(f);
        std::uint64_t key = slot_key(to.index, to.gen);
        spinlock_ref l(p.lock);
        l.lock();
        bool queued = backlog_has(p, key);  // its frames before it go first
        owe_back_locked(p, f.payload_len);
        l.unlock();
        if (!queued) {
            int rc = port_try_put(*j_, to, mh, f.payload, f.payload_len);
            if (rc != EAGAIN) {
                if (rc != 0) nack(source, to, rc);
                return;
            }
        }
        auto* s = new (std::nothrow) staged;
        unsigned char* copy = f.payload_len != 0 ? static_cast<unsigned char*>(std::malloc(f.payload_len)) : nullptr;
        if (s == nullptr || (f.payload_len != 0 && copy == nullptr)) {
            std::fprintf(stderr, "weft: mpi transport: out of memory for a %zu-byte message from node %d; dropped\n",
                         f.payload_len, source);
            delete s;
            return;
        }
        if (copy != nullptr) std::memcpy(copy, f.payload, f.payload_len);
        s->buf = copy;
        s->len = f.payload_len;
        s->to = to;
        s->h = mh;
        l.lock();
        if (p.bl_tail != nullptr) p.bl_tail->next = s;
        else p.bl_head = s;
        p.bl_tail = s;
        bool hold = !contains(p.held_in, key);
        if (hold) p.held_in.push_back(key);
        wait_record* w = wait_list(p.dw_head, p.dw_tail).pop_front();
        l.unlock();
        // Queued now, so this step posts it before the credit just freed
        // (flush_control): the peer holds the port before it may send more.
        if (hold) queue_port_ctl(source, frame_kind::hold, s->to);
        if (w != nullptr) wake(w);
    }

    static msg_header header_of(const decoded_frame& f) {
        msg_header mh;
        mh.tag = f.h.tag;
        mh.source = f.h.src_node;
        mh.sent_ns = f.h.sent_ns;
        return mh;
    }

    // A data frame taken from MPI: its credit is owed back to its sender (p.lock held).
    static void owe_back_locked(peer& p, std::uint64_t len) {
        p.ret_msgs += 1;
        p.ret_bytes += charge_of(len);
    }
    static void owe_back(peer& p, std::uint64_t len) {
        spinlock_ref l(p.lock);
        l.lock();
        owe_back_locked(p, len);
        l.unlock();
    }

    // p.lock held.
    static bool backlog_has(const peer& p, std::uint64_t key) {
        for (const staged* s = p.bl_head; s != nullptr; s = s->next)
            if (slot_key(s->to.index, s->to.gen) == key) return true;
        return false;
    }

    // A hold or resume of our port `port` to node dest.
    void queue_port_ctl(int dest, frame_kind kind, const weft_port_id_t& port) {
        wire_header r;
        r.kind = std::uint8_t(kind);
        r.src_node = std::uint32_t(rank_);
        r.dst_node = port.node;
        r.dst_index = port.index;
        r.dst_gen = port.gen;
        queue_ctl(dest, r);
    }

    // A message for port `to` from node dest failed there with rc: step 5 of
    // the file comment.
    void nack(int dest, const weft_port_id_t& to, int rc) {
        wire_header r;
        r.kind = std::uint8_t(frame_kind::nack);
        r.tag = rc;
        r.src_node = std::uint32_t(rank_);
        r.dst_node = to.node;
        r.dst_index = to.index;
        r.dst_gen = to.gen;
        queue_ctl(dest, r);
    }

    // One pass of a peer's delivery thread over its backlog, oldest first: each
    // frame is put unless a frame of its port was found full in this pass (a
    // port's frames keep their order). True if a frame left the backlog.
    bool deliver_pass(peer& p, int source) {
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
            if (rc != 0) nack(source, s->to, rc);
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
    void deliver_loop(peer& p, int source) {
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
                (void)wait(&rec, &p.lock, deadline, "weft-mpi-delivery", &p);
                if (s == nullptr) continue;
            } else {
                l.unlock();
            }
            if (deliver_pass(p, source)) retry_ns = 0;
            else retry_ns = retry_ns == 0 ? kRetryFirstNs : std::min(retry_ns * 2, kRetryMaxNs);
        }
    }

    void stop_deliverers() {
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

    // Finalize may end: every peer said bye (or is dead), our sends to live
    // peers and their bulks to us are done (progress_lock_ held).
    bool quiet() {
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
        pend_lock_.lock();
        bool sends = false;
        for (const pending_send& s : sends_) sends |= peers_[s.dest].dead.load(memory_order_relaxed) == 0;
        pend_lock_.unlock();
        return !sends;
    }

    // --- State ---------------------------------------------------------------------
    MPI_Comm comm_ = MPI_COMM_NULL;
    int rank_ = 0;
    int size_ = 1;
    bool we_init_ = false;   // we called MPI_Init_thread, so we call MPI_Finalize
    bool multiple_ = false;  // MPI_THREAD_MULTIPLE: senders call MPI_Isend themselves
    std::int64_t timeout_ns_ = 0;  // the peer timeout; 0: off (set by init, read-only after)
    job* j_ = nullptr;
    std::unique_ptr<peer[]> peers_;

    spinlock progress_lock_;  // one progress step at a time
    // funneled mode: every MPI call; either mode: a long message's header and
    // bulk, posted together
    spinlock mpi_lock_;

    spinlock pend_lock_;  // posted sends
    std::vector<MPI_Request> send_reqs_;
    std::vector<pending_send> sends_;
    std::vector<int> done_idx_;          // progress only
    std::vector<MPI_Request> tested_;    // progress only: the requests being tested
    std::vector<unsigned char*> ring_bufs_;  // progress only: the ring's kFrameMax-byte buffers
    std::vector<MPI_Request> ring_reqs_;     // progress only: their receives
    std::size_t ring_head_ = 0;          // the oldest receive of the ring
    std::size_t incoming_ = 0;           // frames waiting in the peers' in lists
    unsigned waiting_steps_ = 0;         // progress only: steps of a polling ult
    unsigned char* spare_body_ = nullptr;  // progress only: a staging buffer for the next bulk (keep_or_free)
    std::size_t spare_cap_ = 0;

    spinlock ctl_lock_;  // control frames for the next step
    std::vector<ctl_frame> ctl_;
    std::vector<ctl_frame> ctl_out_;  // progress only: the frames being posted

    spinlock cache_lock_;
    std::unordered_map<std::uint64_t, port_entry> cache_;

    spinlock probe_lock_;
    std::uint64_t probe_id_ = 0;
    std::unordered_map<std::uint64_t, probe_wait> probes_;
};

}  // namespace

int make_mpi_transport(const transport_config& cfg, std::unique_ptr<transport>* out) {
    auto t = std::unique_ptr<mpi_transport>(new (std::nothrow) mpi_transport);
    if (!t) return ENOMEM;
    if (int rc = t->init(cfg); rc != 0) return rc;
    *out = std::move(t);
    return 0;
}

}  // namespace weft::detail::net
