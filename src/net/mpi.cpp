// The mpi transport: one node per MPI rank (WEFT_NET=mpi under mpiexec).
//
// Glossary:
//   frame      one MPI message on the transport's own communicator: a 64-byte
//              header and a payload (wire.hpp), decoded by decode_frame before
//              anything acts on it.
//   progress   the step that completes this rank's MPI requests: posted sends
//              finish, frames from other ranks are received, decoded and put
//              into their ports. The scheduler runs it (core/progress.hpp):
//              idle workers at every look, busy ones at a bounded interval.
//              One worker at a time (progress_lock_, try-locked).
//   window     what this rank may have in flight to one peer: kWindowMsgs
//              frames and kWindowBytes payload bytes, the peer's staging
//              memory for this rank. A sender holds credit for each data frame;
//              the peer returns it once the frame has left its staging.
//   backlog    a peer's frames that found their port full, in arrival order,
//              each waiting for room; its delivery thread puts them, each
//              port's in order, a full port never delaying another port's.
//   hold       a port with frames of a peer in the backlog: that peer sends it
//              nothing more until its resume (the backlog has taken them all).
//              A backlogged frame's credit is returned at once, so a port whose
//              receiver does not receive never takes the window that every
//              other port of its node (an RPC reply port, the naming service's)
//              needs.
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
//   3. the frame: up to kCopyMax bytes it is copied and posted (MPI_Isend) and
//      the send returns, as a send into a local port returns once buffered;
//      above, header and the caller's buffer go as one MPI message of a derived
//      datatype (no copy), and the thread waits for that send to complete.
// A data frame at the destination (progress):
//   4. decoded; if its peer's backlog has no frame for the port, port_try_put
//      (its credit is returned after the put); a full port (EAGAIN) puts the
//      frame in the backlog, returns its credit and holds the port (a hold frame
//      to the peer, posted before that credit). The peer's delivery thread
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
// Up to this many payload bytes a frame is a copy and the send returns at once;
// above, the caller's buffer is sent from and the caller waits for the send.
// Guess: where a copy starts to cost more than the wait (a 64 KiB memcpy ~5 us).
constexpr std::size_t kCopyMax = 64 * 1024;
// Frames received per progress step at most (the worker has its own threads).
constexpr int kProbeBatch = 16;
// A frame up to this long is received at once (MPI_Mrecv of an eager message
// is a local copy); longer ones with MPI_Imrecv, completed by later steps.
constexpr int kMrecvMax = 4096;
// The delivery thread's retry of a full port: first and longest sleep, ns.
constexpr std::int64_t kRetryFirstNs = 20'000;
constexpr std::int64_t kRetryMaxNs = 1'000'000;
// The one MPI tag of every frame, on the transport's own communicator.
constexpr int kTagFrame = 1;

// --- Liveness (docs/design/mpi.md, "A rank that dies") -------------------------------
// A peer that answered nothing (no frame at all) for the peer timeout while a
// thread waited on it is declared dead. Default: 30 s, three to four orders of
// magnitude above the longest a live peer takes to answer (its progress runs at
// every scheduling point, at most 1 ms apart when idle, plus a scheduler quantum
// of milliseconds when its rank waits for a CPU), and short against a user's
// patience with a hung program. WEFT_NET_PEER_TIMEOUT (ms) sets it, or `off`.
constexpr std::int64_t kPeerTimeoutDefaultMs = 30'000;
constexpr unsigned long long kPeerTimeoutMinMs = 100;         // below, scheduling noise could look like death
constexpr unsigned long long kPeerTimeoutMaxMs = 86'400'000;  // a day
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

// A frame of a peer's backlog: the received bytes, decoded.
struct staged {
    staged* next = nullptr;
    unsigned char* buf = nullptr;  // malloc'd frame; the payload points into it
    const unsigned char* payload = nullptr;
    std::size_t len = 0;
    weft_port_id_t to{};
    msg_header h;
    bool credited = false;  // its credit went back when it entered the backlog
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
    // --- Liveness ---
    // When a frame from it was last handled (monotonic ns). Relaxed: a time
    // compared with the clock, ordering nothing; stored by progress only.
    atomic<std::int64_t> heard_ns{0};
    // 0, or kPeerDead once it is declared dead (for good). Written under lock;
    // read under it by the credit wait, relaxed elsewhere (a stale 0 lets at
    // most a frame more go to a dead peer).
    atomic<int> dead{0};
    std::int64_t pinged_ns = 0;  // when the last liveness ping went to it (0: none)
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

// A frame being received by MPI_Imrecv.
struct pending_recv {
    MPI_Request req = MPI_REQUEST_NULL;
    unsigned char* buf = nullptr;
    int count = 0;
    int source = 0;
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
        multiple_ = false;
        if (const char* v = env_value("WEFT_MPI_THREAD"); v != nullptr) {
            if (iequals(v, "multiple")) multiple_ = true;
            else if (!iequals(v, "funneled")) {
                complain("WEFT_MPI_THREAD", v, "one of: multiple, funneled");
                return EINVAL;
            }
        }
        timeout_ns_ = kPeerTimeoutDefaultMs * 1'000'000;
        if (const char* v = env_value("WEFT_NET_PEER_TIMEOUT"); v != nullptr) {
            unsigned long long ms = 0;
            if (iequals(v, "off")) {
                timeout_ns_ = 0;
            } else if (parse_count(v, kPeerTimeoutMaxMs, &ms) && ms >= kPeerTimeoutMinMs) {
                timeout_ns_ = std::int64_t(ms) * 1'000'000;
            } else {
                complain("WEFT_NET_PEER_TIMEOUT", v,
                         "a number of milliseconds from " + std::to_string(kPeerTimeoutMinMs) + " to " +
                             std::to_string(kPeerTimeoutMaxMs) + ", or off");
                return EINVAL;
            }
        }
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
        for (int r = 0; r < size_; ++r) peers_[r].heard_ns.store(monotonic_ns(), memory_order_relaxed);
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
                for (int r = 0; r < size_; ++r) peers_[r].heard_ns.store(monotonic_ns(), memory_order_relaxed);
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
        if (len <= kCopyMax) {
            auto* fb = static_cast<unsigned char*>(std::malloc(kWireHeaderBytes + len));
            if (fb == nullptr) {
                give_back_credit(p, charge);
                return ENOMEM;
            }
            encode_header(wh, fb);
            if (len != 0) std::memcpy(fb + kWireHeaderBytes, buf, len);
            mpi_guard g(*this);
            return post_locked(int(to.node), fb, int(kWireHeaderBytes + len), MPI_BYTE, fb, nullptr);
        }
        // Header and payload as one message, sent from where they are.
        unsigned char hb[kWireHeaderBytes];
        encode_header(wh, hb);
        // On the heap: a send to a peer that dies is left posted when its
        // sender gives up, and completing it later must find its completion.
        auto* c = new (std::nothrow) completion;
        if (c == nullptr) {
            give_back_credit(p, charge);
            return ENOMEM;
        }
        MPI_Aint disp[2];
        MPI_Get_address(hb, &disp[0]);
        MPI_Get_address(const_cast<void*>(buf), &disp[1]);
        int lens[2] = {int(kWireHeaderBytes), int(len)};
        MPI_Datatype type;
        int rc = 0;
        {
            mpi_guard g(*this);
            MPI_Type_create_hindexed(2, lens, disp, MPI_BYTE, &type);
            MPI_Type_commit(&type);
            rc = post_locked(int(to.node), MPI_BOTTOM, 1, type, nullptr, c);
            MPI_Type_free(&type);  // the posted send keeps what it needs
        }
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

    static bool progress_entry(void* self) {
        auto* t = static_cast<mpi_transport*>(self);
        if (!t->progress_lock_.try_lock()) return false;
        bool did = t->step();
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

    // Posts an MPI_Isend (the MPI guard held): buf/count/type as MPI_Isend's;
    // owned is freed and waiter completed when it is done.
    int post_locked(int dest, const void* buf, int count, MPI_Datatype type, void* owned, completion* waiter) {
        MPI_Request req;
        int rc = MPI_Isend(buf, count, type, dest, kTagFrame, comm_, &req);
        if (rc != MPI_SUCCESS) {
            report_mpi_error("MPI_Isend", dest, rc);
            std::free(owned);
            return EIO;
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
        (void)post_locked(dest, fb, int(kWireHeaderBytes), MPI_BYTE, fb, nullptr);
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
        std::int64_t now = monotonic_ns();
        *next = now + interval;
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
            if (heard < pinged) return declare_dead(r, monotonic_ns() - heard);
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
        p.pinged_ns = monotonic_ns();
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
    bool step() {
        mpi_guard g(*this);
        bool did = complete_sends();
        did |= receive();
        did |= complete_receives();
        did |= flush_control();
        return did;
    }

    bool complete_sends() {
        pend_lock_.lock();
        if (send_reqs_.empty()) {
            pend_lock_.unlock();
            return false;
        }
        // Test a snapshot: senders may append while we test (multiple mode).
        std::size_t n = send_reqs_.size();
        done_idx_.resize(n);
        int outcount = 0;
        std::vector<MPI_Request> reqs(send_reqs_.begin(), send_reqs_.begin() + long(n));
        pend_lock_.unlock();
        int rc = MPI_Testsome(int(n), reqs.data(), &outcount, done_idx_.data(), MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) report_mpi_error("MPI_Testsome (sends)", -1, rc);
        if (outcount <= 0 || outcount == MPI_UNDEFINED) return false;
        pend_lock_.lock();
        for (std::size_t i = 0; i < n; ++i) send_reqs_[i] = reqs[i];
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
        return true;
    }

    bool receive() {
        for (int k = 0; k < kProbeBatch; ++k) {
            int flag = 0;
            MPI_Message msg;
            MPI_Status st;
            if (MPI_Improbe(MPI_ANY_SOURCE, kTagFrame, comm_, &flag, &msg, &st) != MPI_SUCCESS || !flag) return k != 0;
            int count = 0;
            MPI_Get_count(&st, MPI_BYTE, &count);
            if (count < 0 || std::uint64_t(count) > kWireHeaderBytes + kWireMaxPayload) {
                // Longer than any frame: take its first bytes only (MPI reports
                // the truncation, which MPI_ERRORS_RETURN returns), drop it.
                unsigned char head[kWireHeaderBytes];
                MPI_Mrecv(head, int(sizeof head), MPI_BYTE, &msg, MPI_STATUS_IGNORE);
                std::fprintf(stderr, "weft: mpi transport: node %d sent a malformed frame of %d bytes (oversized "
                                     "frame: at most %llu); dropped\n",
                             st.MPI_SOURCE, count,
                             static_cast<unsigned long long>(kWireHeaderBytes + kWireMaxPayload));
                continue;
            }
            auto* buf = static_cast<unsigned char*>(std::malloc(std::size_t(count) + 1));
            if (buf == nullptr) {
                std::fprintf(stderr, "weft: mpi transport: out of memory for a %d-byte frame from node %d\n",
                             count, st.MPI_SOURCE);
                std::abort();  // the matched message must be received; nothing else can take it
            }
            if (count <= kMrecvMax) {
                MPI_Mrecv(buf, count, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
                handle(buf, std::size_t(count), st.MPI_SOURCE);
            } else {
                pending_recv r;
                r.buf = buf;
                r.count = count;
                r.source = st.MPI_SOURCE;
                MPI_Imrecv(buf, count, MPI_BYTE, &msg, &r.req);
                recvs_.push_back(r);
            }
        }
        return true;
    }

    bool complete_receives() {
        bool did = false;
        for (std::size_t i = 0; i < recvs_.size();) {
            int flag = 0;
            MPI_Test(&recvs_[i].req, &flag, MPI_STATUS_IGNORE);
            if (!flag) {
                ++i;
                continue;
            }
            pending_recv r = recvs_[i];
            recvs_.erase(recvs_.begin() + long(i));
            handle(r.buf, std::size_t(r.count), r.source);
            did = true;
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

    // A received frame: decoded, then acted on. Takes buf.
    void handle(unsigned char* buf, std::size_t n, int source) {
        // Any frame, even a malformed one, shows the peer alive.
        peers_[source].heard_ns.store(monotonic_ns(), memory_order_relaxed);
        decoded_frame f;
        wire_context ctx{std::uint32_t(size_), std::uint32_t(rank_), std::uint32_t(source)};
        if (wire_error e = decode_frame(buf, n, ctx, &f); e != wire_error::none) {
            std::fprintf(stderr, "weft: mpi transport: node %d sent a malformed frame of %zu bytes (%s: %s); "
                                 "dropped\n",
                         source, n, wire_error_name(e), f.why);
            std::free(buf);
            return;
        }
        peer& p = peers_[source];
        const wire_header& h = f.h;
        weft_port_id_t port{h.dst_node, h.dst_index, h.dst_gen, 0};
        switch (frame_kind(h.kind)) {
        case frame_kind::data:
            deliver(p, source, f, buf);
            return;
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
        std::free(buf);
    }

    // Step 4 of the file comment: the frame goes into its port now, or to the
    // back of its peer's backlog (its port held, its credit returned).
    void deliver(peer& p, int source, const decoded_frame& f, unsigned char* buf) {
        auto* s = new (std::nothrow) staged;
        if (s == nullptr) {
            std::fprintf(stderr, "weft: mpi transport: out of memory for a frame from node %d; dropped\n", source);
            std::free(buf);
            return;
        }
        s->buf = buf;
        s->payload = f.payload;
        s->len = f.payload_len;
        s->to = weft_port_id_t{f.h.dst_node, f.h.dst_index, f.h.dst_gen, 0};
        s->h.tag = f.h.tag;
        s->h.source = f.h.src_node;
        s->h.sent_ns = f.h.sent_ns;
        std::uint64_t key = slot_key(s->to.index, s->to.gen);
        spinlock_ref l(p.lock);
        l.lock();
        bool queued = backlog_has(p, key);  // its frames before it go first
        l.unlock();
        if (!queued) {
            int rc = port_try_put(*j_, s->to, s->h, s->payload, s->len);
            if (rc != EAGAIN) {
                finish(p, source, *s, rc);
                return;
            }
        }
        l.lock();
        if (p.bl_tail != nullptr) p.bl_tail->next = s;
        else p.bl_head = s;
        p.bl_tail = s;
        s->credited = true;
        p.ret_msgs += 1;
        p.ret_bytes += charge_of(s->len);
        bool hold = !contains(p.held_in, key);
        if (hold) p.held_in.push_back(key);
        wait_record* w = wait_list(p.dw_head, p.dw_tail).pop_front();
        l.unlock();
        // Queued now, so this step posts it before the credit just freed
        // (flush_control): the peer holds the port before it may send more.
        if (hold) queue_port_ctl(source, frame_kind::hold, s->to);
        if (w != nullptr) wake(w);
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

    // A frame has left the staging: its credit is freed (unless it was when
    // the frame entered the backlog); an error goes back.
    void finish(peer& p, int source, staged& s, int rc) {
        if (!s.credited) {
            spinlock_ref l(p.lock);
            l.lock();
            p.ret_msgs += 1;
            p.ret_bytes += charge_of(s.len);
            l.unlock();
        }
        if (rc != 0) {
            wire_header r;
            r.kind = std::uint8_t(frame_kind::nack);
            r.tag = rc;
            r.src_node = std::uint32_t(rank_);
            r.dst_node = s.to.node;
            r.dst_index = s.to.index;
            r.dst_gen = s.to.gen;
            queue_ctl(source, r);
        }
        std::free(s.buf);
        delete &s;
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
        while (s != nullptr && !stopping_) {
            std::uint64_t key = slot_key(s->to.index, s->to.gen);
            if (contains(full, key)) {
                prev = s;
                s = s->next;
                continue;
            }
            l.unlock();
            int rc = port_try_put(*j_, s->to, s->h, s->payload, s->len);
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
            finish(p, source, *s, rc);
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
            if (stopping_) {
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
            stopping_ = true;
            wait_record* w = wait_list(p.dw_head, p.dw_tail).pop_front();
            l.unlock();
            if (w != nullptr) wake(w);
        }
        for (int r = 0; r < size_; ++r) {
            if (peers_[r].deliverer != nullptr) (void)weft_thread_join(peers_[r].deliverer, nullptr);
            peers_[r].deliverer = nullptr;
        }
    }

    // Finalize may end: every peer said bye, our sends and receives are done
    // (progress_lock_ held).
    bool quiet() {
        for (int r = 0; r < size_; ++r) {
            if (r == rank_) continue;
            spinlock_ref l(peers_[r].lock);
            l.lock();
            bool in = peers_[r].bye_in || peers_[r].dead.load(memory_order_relaxed) != 0;
            l.unlock();
            if (!in) return false;
        }
        pend_lock_.lock();
        bool sends = false;
        for (const pending_send& s : sends_) sends |= peers_[s.dest].dead.load(memory_order_relaxed) == 0;
        pend_lock_.unlock();
        return !sends && recvs_.empty();
    }

    // --- State ---------------------------------------------------------------------
    MPI_Comm comm_ = MPI_COMM_NULL;
    int rank_ = 0;
    int size_ = 1;
    bool we_init_ = false;   // we called MPI_Init_thread, so we call MPI_Finalize
    bool multiple_ = false;  // MPI_THREAD_MULTIPLE: senders call MPI_Isend themselves
    bool stopping_ = false;  // under every peer's lock: the delivery threads end
    std::int64_t timeout_ns_ = 0;  // the peer timeout; 0: off (set by init, read-only after)
    job* j_ = nullptr;
    std::unique_ptr<peer[]> peers_;

    spinlock progress_lock_;  // one progress step at a time
    spinlock mpi_lock_;       // funneled mode: every MPI call

    spinlock pend_lock_;  // posted sends
    std::vector<MPI_Request> send_reqs_;
    std::vector<pending_send> sends_;
    std::vector<int> done_idx_;        // progress only
    std::vector<pending_recv> recvs_;  // progress only

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
