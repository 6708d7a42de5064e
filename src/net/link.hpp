// weft::detail::net — the byte-moving seam: what a transport between address
// spaces must do, and nothing of weft's protocol.
//
// A link moves bytes between the ranks of a job: it knows its size and rank,
// posts a frame (a short message) or a bulk (a long payload) to a rank, polls
// for arrived frames, receives a named sender's next bulk into a buffer, runs
// a start-up barrier and reports a peer it can tell is gone. Everything weft
// builds on those bytes (credit windows, port probes and nacks, hold and
// resume, the order of bulks behind their headers, liveness and the errors of
// a dead peer) is the protocol (protocol.hpp), written once for every link.
// The split is Open MPI's between its PML (matching, protocol) and its BTLs
// (byte transfer), or HPX's between its parcel layer and its parcelports
// (docs/design/net.md, "The transport seam").
//
// What a link guarantees, and the protocol relies on:
//   - order: the frames of one sender reach a receiver in the order they were
//     posted, and so do its bulks (two lanes, each in order; no order between
//     them, nor between senders);
//   - no loss between live ranks: a posted frame or bulk arrives, unless its
//     sender or receiver dies;
//   - any thread may call post (the link serialises what its library needs);
//     one thread at a time calls poll, complete_sends and the bulk calls (the
//     protocol's progress step);
//   - a bulk is received by the receive posted for its sender: post_bulk_recv
//     and try_bulk_recv take a sender's bulks in the order they are called.
// Links: mpi (mpi.cpp, one rank per process) and faulty (faulty.cpp, every
// rank in this process, for tests: delays, reordering across senders, a rank
// that goes silent or dies).
#pragma once

#include <cstddef>
#include <cstdint>

namespace weft::detail::net {

// A link's two lanes: frames (at most max_frame() bytes, polled for) and bulks
// (received only into a receive posted for their sender).
enum class lane : int {
    frame = 0,
    bulk = 1
};

// A posted bulk receive: the link's request, opaque to the protocol.
struct bulk_handle {
    std::uint64_t req = 0;
    bool active = false;  // posted and not yet tested done
};

// What a link calls back into: the protocol endpoint of its rank.
// What try_bulk_recv did.
enum class bulk_start : int {
    absent,  // the link does not hold the sender's next bulk yet: nothing posted
    posted,  // its receive is posted into buf (h active: test_bulk finishes it)
    in,      // it is in buf
    failed,  // it could not be received (said on stderr) and is gone
};

class link_sink {
public:
    // A frame of n bytes from `source`, valid for the call only.
    virtual void frame(const unsigned char* bytes, std::size_t n, int source) = 0;
    // Something unreadable came from `source` (mpi: a message longer than any
    // frame); the link reported and dropped it. It shows the source alive.
    virtual void garbled(int source) = 0;
    // A send posted with a non-null `done` is finished: its buffer is free.
    virtual void sent(void* done) = 0;

protected:
    ~link_sink() = default;
};

class link {
public:
    virtual ~link() = default;
    virtual const char* name() const = 0;
    virtual int size() const = 0;
    virtual int rank() const = 0;
    // The longest frame, header included.
    virtual std::size_t max_frame() const = 0;
    // Starts delivering to `sink` (before any other call but the three
    // above): posts the frame receives. 0, or an errno (said on stderr).
    [[nodiscard]] virtual int open(link_sink* sink) = 0;
    // Sends n bytes at buf on lane l to rank dest. When the send is finished
    // the link frees `owned` (std::malloc'd, may be null) and, if `done` is not
    // null, calls sink->sent(done), from this call or a later complete_sends.
    // 0, or EIO (said on stderr; owned freed, sent not called).
    [[nodiscard]] virtual int post(int dest, lane l, const void* buf, std::size_t n, void* owned, void* done) = 0;
    // Finishes the posted sends that are done (progress): true if any was.
    // *woke (if given): whether one of them had a `done` (a thread waits for
    // it). retry: look once more when the first look finds none (mpi: a test
    // that finds nothing makes progress, which may finish one).
    virtual bool complete_sends(bool retry, bool* woke) = 0;
    // Whether a posted send to a rank r with counts(ctx, r) is unfinished.
    virtual bool sends_pending(bool (*counts)(void* ctx, int r), void* ctx) = 0;
    // Takes up to `batch` arrived frames, oldest first, calling sink->frame
    // for each: true if any came.
    virtual bool poll(int batch) = 0;
    // Posts the receive of `source`'s next bulk, n bytes into buf.
    [[nodiscard]] virtual int post_bulk_recv(int source, void* buf, std::size_t n, bulk_handle* h) = 0;
    // Receives `source`'s next bulk (n bytes) into buf only if the link holds
    // it already, so that its receive needs nothing more from the sender
    // (mpi: MPI_Improbe matched it and MPI_Imrecv takes it; faulty: it is
    // visible, and copied). The protocol receives a payload straight into a
    // waiting thread's buffer so (protocol_receive.cpp).
    [[nodiscard]] virtual bulk_start try_bulk_recv(int source, void* buf, std::size_t n, bulk_handle* h) = 0;
    // Whether h's bulk is in: 0 and *done; or EIO (said; h is then no longer active).
    [[nodiscard]] virtual int test_bulk(bulk_handle* h, bool* done) = 0;
    // The start-up barrier over every rank: begun once, then tested until done.
    [[nodiscard]] virtual int barrier_begin() = 0;
    [[nodiscard]] virtual int barrier_test(bool* done) = 0;
    // The waiter of a send posted with `done` from the caller's buffer (not
    // owned) gives up on it (its peer is dead): when this returns the link
    // reads that buffer no more, if it can (faulty: it copies what it still
    // needs; mpi: MPI_Cancel, which an MPI may refuse for a send). sent(done)
    // still comes exactly once, now or later.
    virtual void abandon(void* done) = 0;
    // The protocol declared rank r dead (mpi: MPI_Finalize could then wait
    // for it for ever, so it is not called).
    virtual void peer_dead(int /*r*/) {}
    // Every peer said bye (or is dead): no frame is left to come; cancels the
    // frame receives.
    virtual void close() = 0;
};

}  // namespace weft::detail::net
