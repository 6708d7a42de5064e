// The mpi link: one rank per process (WEFT_NET=mpi under mpiexec), moving the
// protocol's frames and bulks (protocol.hpp) with MPI point-to-point calls on
// a communicator of its own. It is the byte mover only: credit, probes,
// holds, bulk ordering and liveness are the protocol's.
//
// Glossary:
//   frame      one MPI message of tag kTagFrame, at most tun::net_frame_max_bytes bytes.
//   bulk       one MPI message of tag kTagBulk: a long message's payload,
//              taken only by a receive posted for its sender (post_bulk_recv,
//              MPI_Irecv), or matched once MPI holds it (try_bulk_recv,
//              MPI_Improbe and MPI_Imrecv: the protocol's receive straight
//              into a waiting thread's buffer).
//   ring       tun::net_mpi_ring_slots receives of a frame, posted in advance (MPI_Irecv from
//              any rank): frames match them in posting order, and poll tests
//              the oldest, so frames are taken in the order MPI matched them
//              (a sender's in the order it sent them: MPI's non-overtaking rule
//              gives the link's order guarantee, link.hpp).
// MPI calls: in `funneled` mode (the default, measured faster at 32 KiB and
// above and no slower below: docs/design/mpi.md, "Thread level") every call
// is made under mpi_lock_, so the link needs MPI_THREAD_SERIALIZED; in
// `multiple` mode senders call MPI_Isend directly (MPI_THREAD_MULTIPLE).
// WEFT_MPI_THREAD picks one. The guard is taken per call and never held while
// the protocol is called back (it posts from its callbacks).
#include <mpi.h>
#include <sched.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "core/env.hpp"
#include "core/tunables.hpp"
#include "net/protocol.hpp"
#include "net/transport.hpp"

namespace weft::detail::net {
namespace {

// The MPI tags on the link's own communicator: frames, and the payloads of
// long messages (bulk), which only a receive posted for its sender takes.
constexpr int kTagFrame = 1;
constexpr int kTagBulk = 2;

static_assert(sizeof(MPI_Request) <= sizeof(bulk_handle::req), "an MPI_Request fits a bulk handle");

MPI_Request* request_of(bulk_handle* h) { return reinterpret_cast<MPI_Request*>(&h->req); }

// A posted MPI_Isend: its buffer to free, or its protocol waiter to tell.
struct pending_send {
    void* buf = nullptr;
    void* done = nullptr;
    int dest = 0;  // a dead peer's sends may never complete: finalize does not wait for them
};

class mpi_link final : public link {
public:
    // `name`: the registered transport's (transport_def::name).
    explicit mpi_link(const char* name) : name_(name) {}
    ~mpi_link() override {
        close();
        if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
        if (!we_init_) return;
        // Open MPI 4.1's MPI_Finalize ends with a fence over every rank of the
        // job, which can wait for a dead one for ever (docs/design/mpi.md, "A
        // rank that dies"): after a death MPI is left to the process's exit.
        if (int r = dead_.load(memory_order_relaxed); r >= 0) {
            std::fprintf(stderr,
                         "weft: mpi transport: node %d was declared dead: MPI_Finalize is not called "
                         "(it could wait for that rank for ever)\n",
                         r);
            return;
        }
        MPI_Finalize();
    }

    int init() {
        if (int rc = read_mpi_thread(&multiple_); rc != 0) return rc;
        int required = multiple_ ? MPI_THREAD_MULTIPLE : MPI_THREAD_SERIALIZED;
        int inited = 0, provided = 0;
        MPI_Initialized(&inited);
        if (inited) {
            int finalized = 0;
            MPI_Finalized(&finalized);
            if (finalized) {
                std::fprintf(stderr,
                             "weft: WEFT_NET=mpi: MPI was finalized already; weft_net_init must come "
                             "before the program's MPI_Finalize\n");
                return EINVAL;
            }
            MPI_Query_thread(&provided);
        } else {
            if (MPI_Init_thread(nullptr, nullptr, required, &provided) != MPI_SUCCESS) {
                std::fprintf(stderr,
                             "weft: WEFT_NET=mpi: MPI_Init_thread failed (is the program run under "
                             "mpiexec?)\n");
                return EINVAL;
            }
            we_init_ = true;
        }
        if (provided < required) {
            std::fprintf(stderr,
                         "weft: WEFT_NET=mpi needs MPI thread level %s, this MPI provides %d (%s); "
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
        return 0;
    }

    const char* name() const override { return name_; }
    int size() const override { return size_; }
    int rank() const override { return rank_; }
    std::size_t max_frame() const override { return tun::net_frame_max_bytes; }

    // Posts the ring (at start, before the progress hook is set).
    int open(link_sink* sink) override {
        sink_ = sink;
        mpi_guard g(*this);
        ring_bufs_.assign(tun::net_mpi_ring_slots, nullptr);
        ring_reqs_.assign(tun::net_mpi_ring_slots, MPI_REQUEST_NULL);
        for (std::size_t i = 0; i < ring_bufs_.size(); ++i) {
            ring_bufs_[i] = static_cast<unsigned char*>(std::malloc(tun::net_frame_max_bytes));
            if (ring_bufs_[i] == nullptr) return ENOMEM;
            if (int rc = repost(i); rc != 0) return rc;
        }
        return 0;
    }

    // An MPI_Isend; owned is freed and done told when it is done: at once if
    // MPI sent it inline (Open MPI's eager sends over shared memory copy the
    // message out in MPI_Isend and return a request that is complete), else
    // by complete_sends.
    int post(int dest, lane l, const void* buf, std::size_t n, void* owned, void* done) override {
        MPI_Request req;
        int finished = 0;
        {
            mpi_guard g(*this);
            int rc = MPI_Isend(buf, int(n), MPI_BYTE, dest, l == lane::frame ? kTagFrame : kTagBulk, comm_, &req);
            if (rc != MPI_SUCCESS) {
                report_mpi_error("MPI_Isend", dest, rc);
                std::free(owned);
                return EIO;
            }
            if (MPI_Test(&req, &finished, MPI_STATUS_IGNORE) != MPI_SUCCESS) finished = 0;
        }
        if (finished) {
            std::free(owned);
            if (done != nullptr) sink_->sent(done);
            return 0;
        }
        pend_lock_.lock();
        send_reqs_.push_back(req);
        sends_.push_back(pending_send{owned, done, dest});
        pend_lock_.unlock();
        return 0;
    }

    bool complete_sends(bool retry, bool* woke) override {
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
        int rc;
        {
            mpi_guard g(*this);
            rc = MPI_Testsome(int(n), tested_.data(), &outcount, done_idx_.data(), MPI_STATUSES_IGNORE);
            // MPI_Testsome makes progress only after finding nothing complete,
            // and that progress may have finished a send.
            if (rc == MPI_SUCCESS && outcount == 0 && retry)
                rc = MPI_Testsome(int(n), tested_.data(), &outcount, done_idx_.data(), MPI_STATUSES_IGNORE);
        }
        if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) report_mpi_error("MPI_Testsome (sends)", -1, rc);
        if (outcount <= 0 || outcount == MPI_UNDEFINED) return false;
        pend_lock_.lock();
        for (std::size_t i = 0; i < n; ++i) send_reqs_[i] = tested_[i];
        woken_.clear();
        std::size_t keep = 0;
        for (std::size_t i = 0; i < send_reqs_.size(); ++i) {
            if (send_reqs_[i] == MPI_REQUEST_NULL) {
                std::free(sends_[i].buf);
                if (sends_[i].done != nullptr) woken_.push_back(sends_[i].done);
                continue;
            }
            send_reqs_[keep] = send_reqs_[i];
            sends_[keep] = sends_[i];
            ++keep;
        }
        send_reqs_.resize(keep);
        sends_.resize(keep);
        pend_lock_.unlock();
        for (void* d : woken_) sink_->sent(d);
        if (woke != nullptr) *woke = !woken_.empty();
        return true;
    }

    bool sends_pending(bool (*counts)(void*, int), void* ctx) override {
        pend_lock_.lock();
        bool any = false;
        for (const pending_send& s : sends_) any |= counts(ctx, s.dest);
        pend_lock_.unlock();
        return any;
    }

    // Takes up to `batch` frames from the ring, oldest first, testing the
    // oldest receive (MPI_Test: an MPI progress call when it is not in).
    bool poll(int batch) override {
        bool did = false;
        for (int k = 0; k < batch; ++k) {
            MPI_Request& req = ring_reqs_[ring_head_];
            int flag = 0;
            MPI_Status st;
            int rc;
            {
                mpi_guard g(*this);
                rc = MPI_Test(&req, &flag, &st);
            }
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
                std::fprintf(stderr,
                             "weft: mpi transport: node %d sent a malformed frame (oversized frame: at "
                             "most %zu bytes; %s); dropped\n",
                             st.MPI_SOURCE, tun::net_frame_max_bytes, text);
                sink_->garbled(st.MPI_SOURCE);
            } else {
                int count = 0;
                MPI_Get_count(&st, MPI_BYTE, &count);
                sink_->frame(ring_bufs_[ring_head_], std::size_t(count), st.MPI_SOURCE);
            }
            did = true;
            int re;
            {
                mpi_guard g(*this);
                re = repost(ring_head_);
            }
            if (re != 0) return did;
            ring_head_ = (ring_head_ + 1) % ring_bufs_.size();
        }
        return did;
    }

    int post_bulk_recv(int source, void* buf, std::size_t n, bulk_handle* h) override {
        mpi_guard g(*this);
        int rc = MPI_Irecv(buf, int(n), MPI_BYTE, source, kTagBulk, comm_, request_of(h));
        if (rc != MPI_SUCCESS) {
            report_mpi_error("MPI_Irecv (a bulk payload)", source, rc);
            h->active = false;
            return EIO;
        }
        h->active = true;
        return 0;
    }

    // MPI_Improbe from the sender on the bulk tag matches its oldest bulk
    // that no receive took (the protocol posts a sender's bulk receives in
    // order), and MPI_Imrecv receives that very message: once matched it
    // needs nothing more from the sender (over shared memory with CMA the
    // copy from the sender's buffer happens inside MPI_Imrecv).
    bulk_start try_bulk_recv(int source, void* buf, std::size_t n, bulk_handle* h) override {
        mpi_guard g(*this);
        int flag = 0;
        MPI_Message msg = MPI_MESSAGE_NULL;
        int rc = MPI_Improbe(source, kTagBulk, comm_, &flag, &msg, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) report_mpi_error("MPI_Improbe (a bulk payload)", source, rc);
        if (rc != MPI_SUCCESS || !flag) return bulk_start::absent;
        MPI_Request* req = request_of(h);
        rc = MPI_Imrecv(buf, int(n), MPI_BYTE, &msg, req);
        if (rc != MPI_SUCCESS) {
            report_mpi_error("MPI_Imrecv (a bulk payload)", source, rc);
            h->active = false;
            return bulk_start::failed;
        }
        h->active = true;
        rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || !flag) return bulk_start::posted;  // an error is reported by test_bulk
        h->active = false;
        return bulk_start::in;
    }

    int test_bulk(bulk_handle* h, bool* done) override {
        int flag = 0;
        mpi_guard g(*this);
        MPI_Request* req = request_of(h);
        int rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            report_mpi_error("MPI_Test (a bulk payload)", -1, rc);
            h->active = *req != MPI_REQUEST_NULL;
            return EIO;
        }
        *done = flag != 0;
        if (*done) h->active = false;
        return 0;
    }

    // A nonblocking barrier over the job's communicator: every rank has
    // created its service ports.
    int barrier_begin() override {
        mpi_guard g(*this);
        if (MPI_Ibarrier(comm_, &barrier_) != MPI_SUCCESS) {
            std::fprintf(stderr, "weft: WEFT_NET=mpi: MPI_Ibarrier failed at weft_net_init\n");
            return EIO;
        }
        return 0;
    }

    int barrier_test(bool* done) override {
        int flag = 0;
        mpi_guard g(*this);
        if (MPI_Test(&barrier_, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            std::fprintf(stderr, "weft: WEFT_NET=mpi: the start-up barrier failed (a rank died?)\n");
            return EIO;
        }
        *done = flag != 0;
        return 0;
    }

    // MPI_Cancel of the send. MPI may refuse it for a send (Open MPI's ob1
    // does: its sends are not cancellable), and the request then stays
    // posted; complete_sends tells the protocol if it ever finishes
    // (docs/design/net.md, "A long send to a dead peer").
    void abandon(void* done) override {
        pend_lock_.lock();
        MPI_Request req = MPI_REQUEST_NULL;
        for (std::size_t i = 0; i < sends_.size(); ++i)
            if (sends_[i].done == done) req = send_reqs_[i];
        pend_lock_.unlock();
        if (req == MPI_REQUEST_NULL) return;  // finished already
        mpi_guard g(*this);
        MPI_Cancel(&req);
    }

    void peer_dead(int r) override { dead_.store(r, memory_order_relaxed); }

    void close() override {
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

private:
    // Serialises MPI calls in funneled mode.
    struct mpi_guard {
        explicit mpi_guard(mpi_link& t) : t_(t) {
            if (!t_.multiple_) t_.mpi_lock_.lock();
        }
        ~mpi_guard() {
            if (!t_.multiple_) t_.mpi_lock_.unlock();
        }
        mpi_link& t_;
    };

    // The guard held.
    int repost(std::size_t i) {
        int rc = MPI_Irecv(ring_bufs_[i], int(tun::net_frame_max_bytes), MPI_BYTE, MPI_ANY_SOURCE, kTagFrame, comm_,
                           &ring_reqs_[i]);
        if (rc == MPI_SUCCESS) return 0;
        report_mpi_error("MPI_Irecv (a frame)", -1, rc);
        return EIO;
    }

    void report_mpi_error(const char* call, int peer_rank, int rc) {
        char text[MPI_MAX_ERROR_STRING];
        int n = 0;
        MPI_Error_string(rc, text, &n);
        std::fprintf(stderr, "weft: mpi transport: %s with node %d failed: %s\n", call, peer_rank, text);
    }

    const char* name_;
    MPI_Comm comm_ = MPI_COMM_NULL;
    int rank_ = 0;
    int size_ = 1;
    bool we_init_ = false;   // we called MPI_Init_thread, so we call MPI_Finalize
    bool multiple_ = false;  // MPI_THREAD_MULTIPLE: senders call MPI_Isend themselves
    link_sink* sink_ = nullptr;
    atomic<int> dead_{-1};  // a rank the protocol declared dead, or -1
    MPI_Request barrier_ = MPI_REQUEST_NULL;

    spinlock mpi_lock_;  // funneled mode: every MPI call

    spinlock pend_lock_;  // posted sends
    std::vector<MPI_Request> send_reqs_;
    std::vector<pending_send> sends_;
    std::vector<int> done_idx_;              // progress only
    std::vector<MPI_Request> tested_;        // progress only: the requests being tested
    std::vector<void*> woken_;               // progress only: the sends finished by a test
    std::vector<unsigned char*> ring_bufs_;  // progress only: the ring's tun::net_frame_max_bytes-byte buffers
    std::vector<MPI_Request> ring_reqs_;     // progress only: their receives
    std::size_t ring_head_ = 0;              // the oldest receive of the ring
};

int make_mpi_transport(const transport_config& cfg, std::unique_ptr<transport>* out) {
    std::int64_t timeout_ns = 0;
    if (int rc = read_peer_timeout(&timeout_ns); rc != 0) return rc;
    auto l = std::unique_ptr<mpi_link>(new (std::nothrow) mpi_link(cfg.def->name));
    if (!l) return ENOMEM;
    if (int rc = l->init(); rc != 0) return rc;
    std::vector<std::unique_ptr<protocol>> eps;
    eps.emplace_back(new (std::nothrow) protocol(std::move(l), timeout_ns));
    if (!eps.back()) return ENOMEM;
    return make_protocol_transport(cfg, std::move(eps), out);
}

const transport_def mpi_transport = {
    .name = "mpi",
    .description = "one node per MPI rank (under mpiexec), weft's wire protocol over MPI",
    .make = make_mpi_transport,
};

}  // namespace
WEFT_REGISTER(mpi_transport);
}  // namespace weft::detail::net
