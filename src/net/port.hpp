// weft::detail::net — ports and the per-node port table.
//
// Glossary (src/net):
//   job        the N nodes started by weft_net_init, with their transport.
//   node       one address space's share of the job: a port table and the
//              threads spawned on it (ult::node). inproc: all nodes are in
//              this process, on the one runtime's workers.
//   port       a bounded FIFO of messages with a global ID (node, index, gen).
//   slot       a port's storage in its node's table; a destroyed port's slot
//              is reused with the next generation, so stale IDs miss.
//   rx waiter  a receiving thread blocked on one port, or on several
//              (weft_net_recv_any); tx waiter: a sender blocked on a full port.
//
// A port's state is guarded by its spinlock; every wait is the core's
// (core/wait.hpp): the waiter links a record and calls wait() with the port's
// lock (one port) or its own selector lock (several), and whoever unlinks it
// under that lock wakes it (docs/design/net.md, "How a thread waits").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "base/primitives.hpp"
#include "net/message.hpp"
#include "net/transport.hpp"
#include "weft/weft.h"

namespace weft::detail::net {

inline constexpr std::uint32_t kChunkBits = 8;                         // 256 slots per chunk
inline constexpr std::uint32_t kChunkSlots = 1u << kChunkBits;
inline constexpr std::uint32_t kMaxChunks = 4096;                      // 2^20 ports per node
inline constexpr std::uint32_t kMaxNodes = 1024;                       // 32 KiB of chunk pointers each

struct rx_link;
struct rx_waiter;

struct alignas(64) port {
    // --- Guarded by `lock` -----------------------------------------------------
    std::uint32_t lock = 0;        // spinlock word (spinlock_ref); the one-port rx waiters' wait lock
    std::uint32_t gen = 0;         // this incarnation's generation (bumped by destroy)
    bool open = false;
    bool closed = false;           // weft_net_port_close: no new messages; receivers drain
    std::size_t max_msgs = 0;
    std::size_t max_bytes = 0;
    std::size_t count = 0;         // messages buffered
    std::size_t bytes = 0;         // their bytes
    message* head = nullptr;       // oldest first
    message* tail = nullptr;
    rx_link* rx_head = nullptr;    // blocked receivers, oldest first
    rx_link* rx_tail = nullptr;
    void* tx_head = nullptr;       // blocked senders: a wait_list (sync/wait_list.hpp)
    void* tx_tail = nullptr;
    // Written under `lock`; read without it by a sender deciding whether to
    // copy its message before it locks (a hint: the decision is redone under
    // the lock). Relaxed: nothing is published through it.
    atomic<std::uint32_t> rx_waiting{0};
    // --- Fixed once the slot is handed out ---------------------------------------
    std::uint32_t node = 0;
    std::uint32_t index = 0;
    // --- Guarded by the node table's lock ---------------------------------------------
    port* next_free = nullptr;
};

struct node_table {
    spinlock lock;                 // free list and growth
    port* free = nullptr;
    std::uint32_t used = 0;        // slots handed out so far
    // Chunks are allocated on demand and never move or go away before the job
    // ends, so a sender may look a slot up without a lock (acquire pairs with
    // the release that published the chunk).
    std::unique_ptr<atomic<port*>[]> chunks{new atomic<port*>[kMaxChunks]()};
};

struct job {
    std::uint32_t nodes = 0;
    // The node of every thread of this process when it holds one node only
    // (mpi: its rank); -1 when it holds them all (inproc: ult::node says).
    std::int32_t home = -1;
    std::unique_ptr<node_table[]> tables;
    std::unique_ptr<transport> tp;
    // Losses not yet reported (port.cpp, note_loss): a sender whose message
    // was dropped, and the port it was sent to; one entry per sender, taken
    // by its next receive that would wait. `losses` is their number, read
    // without the lock by every receive that would wait (a non-zero value
    // sends it to the list).
    spinlock loss_lock;
    atomic<std::size_t> losses{0};
    std::vector<std::pair<std::uint64_t, weft_port_id_t>> lost;
};

// The running job, or null.
job* current_job();

// A timeout the API refuses (EINVAL): negative, other than WEFT_NET_FOREVER.
bool bad_timeout(std::int64_t timeout_ns);

// The C API's operations on `j`; `self` is the caller's node. Errors as
// include/weft/weft.h documents them.
[[nodiscard]] int port_create(job& j, std::uint32_t self, std::size_t max_msgs, std::size_t max_bytes,
                              weft_port_id_t* out);
[[nodiscard]] int port_destroy(job& j, std::uint32_t self, const weft_port_id_t& id);
// weft_net_port_close: later puts fail (EPIPE), blocked senders return EPIPE,
// receivers take what is buffered and then get EPIPE instead of waiting.
[[nodiscard]] int port_close(job& j, std::uint32_t self, const weft_port_id_t& id);
// Puts a message into port `to` (any node of this process): the receiving
// side of every transport, and the whole of a same-node send.
[[nodiscard]] int port_put(job& j, const weft_port_id_t& to, const msg_header& h, const void* buf, std::size_t len);
// port_put that never waits: EAGAIN (nothing changed) where port_put would
// wait for room. The mpi transport's progress step delivers with it, since it
// runs on a worker's scheduling loop, which must not block.
[[nodiscard]] int port_try_put(job& j, const weft_port_id_t& to, const msg_header& h, const void* buf,
                               std::size_t len);
// A transport's hand-off in two steps, for a message whose bytes arrive after
// its header (the mpi transport's long messages, received by MPI straight
// into the receiver's buffer): port_claim takes the receiver that port_put
// would hand a message of len bytes to now (the oldest one, waiting on `to`
// alone with room for len, nothing queued, the message ready) and returns it
// with its buffer in *buf, or null (put the message as usual). Nothing else
// can take a claimed receiver, and its deadline does not end its wait: the
// claimer must end the claim soon, with port_hand_over once the len bytes are
// in *buf, or with port_release (the receiver looks at its port again).
// With null, *claimable (if given) says whether a receiver that comes later
// could still be claimed: the port is live and open, admits len, and holds no
// message that such a receiver would take first.
[[nodiscard]] rx_waiter* port_claim(job& j, const weft_port_id_t& to, const msg_header& h, std::size_t len, void** buf,
                                    bool* claimable = nullptr);
void port_hand_over(rx_waiter* w, const weft_port_id_t& to, const msg_header& h, std::size_t len);
void port_release(rx_waiter* w);
// 0 and the port's max_bytes if `id` names a live port of this process; else ENOENT.
[[nodiscard]] int port_info(job& j, const weft_port_id_t& id, std::size_t* max_bytes);
// try_only: EAGAIN instead of waiting. timeout_ns: WEFT_NET_FOREVER (< 0) or a limit.
[[nodiscard]] int port_recv(job& j, std::uint32_t self, const weft_port_id_t* ids, std::size_t n, void* buf,
                            std::size_t cap, weft_net_status_t* st, std::int64_t timeout_ns, bool try_only);
// Whether a thread waits on a port, other than a receiver on one of
// except[0..n) (the runtime's own servers, which finalize stops itself).
[[nodiscard]] bool any_waiter(job& j, const weft_port_id_t* except, std::size_t n);
// The deadlock report's name of a wait on a port of the running job: its ID
// (core/deadlock.hpp, wait_object_namer).
bool name_port_wait(const char* what, const void* object, char* out, std::size_t cap);
// The calling thread's sender token (msg_header::sender): its weft thread's
// id + 1; 0 for an external thread.
std::uint64_t sender_token();
// Tells the sender `sender` of node `node` that its message to port `to` was
// dropped: its receive that waits now, or its next one that would wait,
// returns ECONNABORTED with st->port = to. Call it with no port locked.
void note_loss(job& j, std::uint32_t node, std::uint64_t sender, const weft_port_id_t& to);
// EBUSY if a thread waits on any port; else destroys every port and frees the tables.
[[nodiscard]] int close_all(job& j);

}  // namespace weft::detail::net
