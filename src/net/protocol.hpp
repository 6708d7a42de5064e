// weft::detail::net — weft's wire protocol, over any link (link.hpp): one
// rank's endpoint. Written once; the mpi link and the fault-injecting link of
// the tests carry it (docs/design/net.md, "The transport seam";
// docs/design/mpi.md, "The mpi transport", for each mechanism).
//
// Glossary:
//   frame      one message of the link's frame lane: a 64-byte header and a
//              payload (wire.hpp), at most the link's max_frame bytes, decoded
//              by decode_frame before anything acts on it. A longer message's
//              frame is its header alone (kFlagBulk); its payload is the
//              sender's next message of the bulk lane.
//   progress   the step that completes this rank's link requests: posted sends
//              finish, frames from other ranks are received, decoded and put
//              into their ports. The scheduler runs it (core/progress.hpp):
//              idle workers at every look, busy ones at a bounded interval.
//              One worker at a time (progress_lock_, try-locked).
//   window     what this rank may have in flight to one peer: tun::net_window_msgs
//              frames and tun::net_window_bytes payload bytes, the peer's staging
//              memory for this rank. A sender holds credit for each data frame;
//              the peer returns it once it has taken the frame from the link.
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
//              protocol_liveness.cpp, docs/design/mpi.md, "A rank that dies").
//
// A send (weft_net_send to another node), in order (each wait watches the
// peer's liveness; a peer declared dead fails the send at once):
//   1. the port cache: an unknown port is probed (a probe frame; the thread
//      waits for the reply): ENOENT or EMSGSIZE come back from here (a live
//      port is kept in the cache, a missing one is asked about again next time);
//   2. credit: the thread waits on its peer's credit list (asking the peer
//      once for what it has freed) until a frame of its length fits the window
//      and the port is not held;
//   3. the frame: up to max_frame - 64 payload bytes, header and payload are
//      copied into one frame and posted, and the send returns, as a send into
//      a local port returns once buffered; a longer message posts its header
//      frame and then its payload as a bulk (both under pair_lock_, so a
//      peer's bulks come in the order of their headers): up to tun::net_copy_max_bytes bytes
//      from a copy, and the send returns; above, from the caller's buffer (no
//      copy), and the thread waits for that send.
// A data frame at the destination (progress):
//   4. taken from the link, decoded; a bulk frame's payload is received from
//      its sender's bulk lane: straight into the buffer of a receiver waiting
//      on its port (claimed, port_claim) once the link holds the payload
//      (try_bulk_recv; receive_direct), or of one that comes while the header
//      is held for it (tun::net_receiver_wait_ns), else into a staging buffer; its
//      peer's later frames wait behind it until the payload is in (a peer's
//      frames are acted on in the order it sent them). Its credit is owed
//      back from here on. If its
//      peer's backlog has no frame for the port, port_try_put; a full port
//      (EAGAIN) puts a copy of the message in the backlog and holds the port
//      (a hold frame to the peer, posted before the credit owed back: the hold
//      reaches the peer first). The peer's delivery thread drains the backlog,
//      retrying full ports with a growing sleep (a port has no room
//      notification for a transport); when the last backlogged frame of a port
//      is put, the port is resumed (a resume frame);
//   5. an error of the put (ENOENT, EPIPE, EMSGSIZE) goes back as a nack, with
//      the sending thread's token: the sender's port cache marks the port, so
//      the sender's next send to it fails with that error, and the sending
//      thread's waiting receive returns ECONNABORTED (note_loss), as for a
//      message dropped on its own node. A port destroyed with a peer's
//      messages in it reports each loss the same way (report_loss).
//
// Memory: a peer's frames staged here are at most its window (credited frames)
// plus, for each held port, the frames it sent before the hold reached it (at
// most one window).
//
// Lock order: progress_lock_ -> pair_lock_ -> {peer::lock, ctl_lock_,
// cache_lock_, probe_lock_, a port's lock, the link's own}; the last ones are
// never nested. A completion's lock is taken alone, after the others are
// released.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "base/primitives.hpp"
#include "core/wait.hpp"
#include "net/link.hpp"
#include "net/message.hpp"
#include "net/transport.hpp"
#include "net/wire.hpp"
#include "sync/wait_list.hpp"

namespace weft::detail::net {

struct job;
struct rx_waiter;

// The protocol's tunables (credit window, copy limit, waits, liveness looks)
// are in core/tunables.hpp, "Messaging".

// --- Liveness (docs/design/mpi.md, "A rank that dies") -------------------------------
// What the threads waiting on a dead peer, and every later send to it, return:
// the peer is gone, which the caller's own timeouts (ETIMEDOUT) do not say.
inline constexpr int kPeerDead = EHOSTDOWN;
// The probe id of a liveness ping (a port probe's ids start at 1).
inline constexpr std::uint64_t kPingId = 0;

// A thread waiting for one event that another (progress) signals: link under
// `lk`, or find it done already. The signaller never touches it after its
// wake (the waiter's frame may then go).
struct completion {
    std::uint32_t lk = 0;
    bool done = false;
    int result = 0;
    std::uint64_t value = 0;
    wait_record rec;

    void await(const char* what, const void* object);
    // As await, until deadline_ns (absolute, monotonic): false if it passed first.
    bool await_until(std::int64_t deadline_ns, const char* what, const void* object);
    // A heap completion whose waiter gives up (its peer is dead): whoever
    // completes it frees it; true if that happened already (free it yourself).
    bool abandon();
    void complete(int r, std::uint64_t v);

private:
    bool abandoned = false;
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
    decoded_frame f;                 // its payload points into bytes or body
    unsigned char* bytes = nullptr;  // malloc'd copy of a frame with its payload inline
    unsigned char* body = nullptr;   // malloc'd staging buffer of a bulk payload
    std::size_t body_cap = 0;        // its size
    bulk_handle bulk;                // the bulk's receive, until it completes
    rx_waiter* claimed = nullptr;    // the receiver whose buffer the bulk is received into
    void* into = nullptr;            // that buffer
    // A bulk whose receive has not started (held for a receiver, or claimed
    // with its payload not yet in the link): when to stage it instead; else 0.
    std::int64_t give_up_ns = 0;
};

struct alignas(64) peer {
    std::uint32_t lock = 0;  // guards every field below (spinlock_ref)
    // --- Frames to this peer (the sending side) ---
    std::uint64_t cred_msgs = tun::net_window_msgs;
    std::uint64_t cred_bytes = tun::net_window_bytes;
    void* cw_head = nullptr;  // threads waiting for credit (a wait_list)
    void* cw_tail = nullptr;
    bool asked = false;                   // a credit_request is on its way
    bool bye_out = false;                 // we sent bye: nothing more goes to it
    std::vector<std::uint64_t> held_out;  // its ports it holds (slot_key): sends to them wait
    // --- Frames from this peer (the receiving side) ---
    staged* bl_head = nullptr;  // its backlog, oldest first
    staged* bl_tail = nullptr;
    std::vector<std::uint64_t> held_in;  // our ports we told it to hold (slot_key)
    std::uint64_t ret_msgs = 0;          // credit freed, not yet returned
    std::uint64_t ret_bytes = 0;
    bool peer_asked = false;  // it waits for credit: return what is freed now
    bool bye_in = false;
    void* dw_head = nullptr;  // its delivery thread, while it waits (a wait_list)
    void* dw_tail = nullptr;
    weft_thread_t deliverer = nullptr;
    bool stopping = false;        // its delivery thread ends (finalize)
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
    int err = 0;  // 0: alive; else what sends to it return
    std::uint64_t max_bytes = 0;
    // The threads (sender tokens) told of a loss at this port's generation:
    // each once, however many of its frames were on the wire (every one is
    // nacked), as a destroy on one node tells each sender once.
    std::vector<std::uint64_t> told;
};

// One rank's protocol over its link. The transport that owns it
// (protocol_transport) runs its progress and calls it from weft_net_*.
class protocol final : public link_sink {
public:
    // timeout_ns: the peer timeout (WEFT_NET_PEER_TIMEOUT), 0: off.
    // receiver_wait_ns: how long a long message's header waits for a receiver
    // (tun::net_receiver_wait_ns; a test may make it certain that one comes in time).
    protocol(std::unique_ptr<link> l, std::int64_t timeout_ns,
             std::int64_t receiver_wait_ns = tun::net_receiver_wait_ns);
    ~protocol();
    protocol(const protocol&) = delete;
    protocol& operator=(const protocol&) = delete;

    int rank() const { return rank_; }
    int size() const { return size_; }
    link& wire() { return *link_; }

    // transport::start: the link's receives and the delivery threads.
    [[nodiscard]] int start(job& j);
    // transport::all_started, in two halves so that one thread can run the
    // barrier of several endpoints: begun, then tested until *done.
    [[nodiscard]] int barrier_begin();
    [[nodiscard]] int barrier_test(bool* done);
    // transport::stop, in three parts for the same reason: a bye to every
    // peer; then stop_poll until it returns true (every peer's bye is in or
    // the peer is dead, and our sends are done); then stop_end.
    void stop_begin();
    bool stop_poll();
    void stop_end();
    // transport::send from a thread of this rank.
    [[nodiscard]] int send(const weft_port_id_t& to, const msg_header& h, const void* buf, std::size_t len);
    // transport::first_look and look, for waits outside the protocol.
    std::int64_t first_look(std::uint32_t node) const;
    [[nodiscard]] int look(std::uint32_t node, std::int64_t* next_ns);
    // transport::report_loss: a message of thread `sender` of node `node` was
    // dropped by port `to` of this rank: a nack tells it.
    void report_loss(std::uint32_t node, std::uint64_t sender, const weft_port_id_t& to);
    // One progress step if no other runs (the scheduler's hook): true if it did something.
    bool progress(bool waiting);
    // Whether a peer was declared dead.
    bool any_dead() const;

    // link_sink
    void frame(const unsigned char* bytes, std::size_t n, int source) override;
    void garbled(int source) override;
    void sent(void* done) override;

private:
    // --- Sending side (protocol_send.cpp) ---
    int check_port(const weft_port_id_t& to, std::size_t len);
    void give_back_credit(peer& p, std::uint64_t charge);
    static wait_record* take_credit_waiters(peer& p);
    static void wake_chain(wait_record* r);
    void post_ctl(int dest, const wire_header& h);
    void queue_ctl(int dest, const wire_header& h);
    void queue_port_ctl(int dest, frame_kind kind, const weft_port_id_t& port);
    void nack(int dest, const weft_port_id_t& to, int rc, std::uint64_t sender);
    // --- Liveness (protocol_liveness.cpp) ---
    std::int64_t first_deadline() const;
    int look_at(int r, std::int64_t* next);
    void ping(int r);
    int declare_dead(int r, std::int64_t silent_ns);
    int await_peer(completion& c, int r);
    void forget_probe(std::uint64_t id, completion& c);
    bool quiet();
    // --- Receiving side (protocol_receive.cpp) ---
    bool step(bool waiting = false);
    bool complete_bulks();
    static incoming* new_incoming(std::size_t n, const char* link_name, int source);
    void post_staging(incoming* in, int source);
    void keep_or_free(unsigned char* body, std::size_t cap);
    bool receive_direct(peer& p, int source, const decoded_frame& f);
    bool start_claimed(incoming* in, int source);
    bulk_start start_direct(incoming* in, int source);
    bool advance_unstarted(incoming* in, int source, bool stage);
    void settle_head(peer& p, int source);
    void stage_unstarted(incoming* in, int source);
    void hand_over(peer& p, incoming* in);
    static msg_header header_of(const decoded_frame& f);
    static void owe_back_locked(peer& p, std::uint64_t len);
    bool flush_control();
    void handle(peer& p, int source, const decoded_frame& f);
    void deliver(peer& p, int source, const decoded_frame& f);
    static bool backlog_has(const peer& p, std::uint64_t key);
    bool deliver_pass(peer& p, int source);
    void deliver_loop(peer& p, int source);
    [[nodiscard]] int start_deliverers();
    void stop_deliverers();
    static void* delivery_main(void* a);

    std::unique_ptr<link> link_;
    int rank_ = 0;
    int size_ = 1;
    std::size_t inline_max_ = 0;                       // the most payload a frame carries
    std::int64_t timeout_ns_ = 0;                      // the peer timeout; 0: off (read-only after construction)
    std::int64_t receiver_wait_ns_ = tun::net_receiver_wait_ns;  // read-only after construction
    job* j_ = nullptr;
    std::unique_ptr<peer[]> peers_;

    spinlock progress_lock_;  // one progress step at a time
    spinlock pair_lock_;      // a long message's header and bulk, posted together

    std::size_t incoming_ = 0;             // frames waiting in the peers' in lists (progress only)
    unsigned waiting_steps_ = 0;           // progress only: steps of a polling ult
    unsigned char* spare_body_ = nullptr;  // progress only: a staging buffer for the next bulk (keep_or_free)
    std::size_t spare_cap_ = 0;
    std::vector<std::int64_t> stop_next_look_;  // stop_poll: when to look at each peer next

    spinlock ctl_lock_;  // control frames for the next step
    std::vector<ctl_frame> ctl_;
    std::vector<ctl_frame> ctl_out_;  // progress only: the frames being posted

    spinlock cache_lock_;
    std::unordered_map<std::uint64_t, port_entry> cache_;

    spinlock probe_lock_;
    std::uint64_t probe_id_ = 0;
    std::unordered_map<std::uint64_t, probe_wait> probes_;
};

// The transport over `eps`, the endpoints of the ranks this process holds
// (mpi: its own; faulty: every rank), each over its own link, all of one
// job: it runs their progress from the scheduler's hook and hands each call
// to the endpoint of the calling thread's node. Named as cfg's registered
// transport (cfg.def, the one whose make calls this).
[[nodiscard]] int make_protocol_transport(const transport_config& cfg, std::vector<std::unique_ptr<protocol>> eps,
                                          std::unique_ptr<transport>* out);

// Helpers shared by the protocol's files.
inline std::uint64_t charge_of(std::uint64_t len) { return std::min(len, tun::net_window_bytes); }
inline std::uint64_t port_key(std::uint32_t node, std::uint32_t index) { return (std::uint64_t(node) << 32) | index; }
// A port of a known node, generation included (holds, backlogs).
inline std::uint64_t slot_key(std::uint32_t index, std::uint32_t gen) { return (std::uint64_t(gen) << 32) | index; }
inline bool contains(const std::vector<std::uint64_t>& v, std::uint64_t k) {
    return std::find(v.begin(), v.end(), k) != v.end();
}

}  // namespace weft::detail::net
