// The PDE solver's versions on weft's ports: blocking1, threads2, threads4
// (one program, run by 1, 2 or 4 threads per node on strips of the node's
// block) and handcoded. pde_weft.hpp and docs/design/pde.md describe them.
#include "apps/pde/pde_weft.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>

#include "weft/rpc.h"
#include "weft/weft.hpp"

namespace weft::apps::pde {

namespace {

// A weft call that failed ends the solver with weft::error (what failed, and the errno).
void check(int rc, const char* what) {
    if (rc != 0) throw weft::error(rc, what);
}

// A strip's halo port buffers at most this many edges: a neighbour runs at
// most one sweep ahead (it cannot finish sweep s + 1 before it has this
// strip's edge of sweep s + 1), so two are ever queued; four leave room.
constexpr std::size_t kHaloMsgs = 4;
// The gather port: messages buffered before node 0 takes them.
constexpr std::size_t kGatherMsgs = 16;

// A failure in a running solver: the neighbours would wait for this strip's
// edges for ever, so the process stops (the MPI versions' MPI_Abort).
[[noreturn]] void fail(int rc, char const* what, int node, int strip_index) {
    std::fprintf(stderr, "weft pde: %s failed on node %d, strip %d: %s\n", what, node, strip_index,
                 std::strerror(rc));
    std::abort();
}

double now_s() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::size_t max_block_nx(problem const& p, layout l) {
    return p.gnx / static_cast<std::size_t>(l.px) + (p.gnx % static_cast<std::size_t>(l.px) != 0 ? 1 : 0);
}

// A gathered row segment: its first global column, then its values.
std::size_t gather_bytes(std::size_t nx) { return sizeof(std::uint64_t) + nx * sizeof(double); }

// Where a strip sends an edge (present: the side has a neighbour).
struct peer {
    weft_port_id_t port{};
    bool present = false;
};

// One strip's solver: its grids, its peers and its receive ports. Run by one
// weft thread of its node.
class strip_solver {
public:
    strip_solver(problem const& p, int node, int index, std::vector<node_ports> const& dir)
        : p_(p), node_(node), index_(index), threads_(threads_per_node(p.version)), old_(0, 0), new_(0, 0) {
        layout const l = block_layout(static_cast<int>(dir.size()));
        block_ = block_of(l, node, p.gnx, p.gny);
        strip_ = strip_of(block_, threads_, index);
        old_ = grid(block_.nx, strip_.ny);
        new_ = grid(block_.nx, strip_.ny);
        // The block's halo, seen from this strip: rows above and below come
        // from the block's edge only for the top and bottom strips.
        block sb = block_;
        sb.y0 = block_.y0 + strip_.y0;
        sb.ny = strip_.ny;
        init_block(old_, sb, p.gny);
        init_block(new_, sb, p.gny);
        for (int s = 0; s < 4; ++s) mine_[s] = dir[static_cast<std::size_t>(node)].halo[slot(index, s)];
        // My east edge fills the east neighbour's west halo, and so on.
        auto at = [&](int n, int i, int s) { return peer{dir[static_cast<std::size_t>(n)].halo[slot(i, s)], true}; };
        if (block_.west != no_rank) to_[west] = at(block_.west, index, east);
        if (block_.east != no_rank) to_[east] = at(block_.east, index, west);
        if (index > 0) to_[south] = at(node, index - 1, north);
        else if (block_.south != no_rank) to_[south] = at(block_.south, threads_ - 1, north);
        if (index + 1 < threads_) to_[north] = at(node, index + 1, south);
        else if (block_.north != no_rank) to_[north] = at(block_.north, 0, south);
        col_out_[west].resize(strip_.ny);
        col_out_[east].resize(strip_.ny);
        col_in_[west].resize(strip_.ny);
        col_in_[east].resize(strip_.ny);
    }

    void run() {
        for (int s = 0; s < p_.sweeps; ++s) {
            if (p_.version == weft_version::handcoded) sweep_handcoded();
            else sweep_blocking();
            std::swap(old_, new_);
        }
    }

    // Sends this strip's points (the last sweep's result) to node 0's gather
    // port, one message per row: tag = global row, then first column, values.
    void send_result(weft_port_id_t to) {
        std::vector<unsigned char> msg(gather_bytes(block_.nx));
        std::uint64_t const x0 = block_.x0;
        std::memcpy(msg.data(), &x0, sizeof x0);
        for (std::size_t y = 0; y < strip_.ny; ++y) {
            std::memcpy(msg.data() + sizeof x0, old_.row(static_cast<long>(y)), block_.nx * sizeof(double));
            auto const tag = static_cast<std::int32_t>(block_.y0 + strip_.y0 + y);
            if (int rc = weft_net_send(to, tag, msg.data(), msg.size()); rc != 0) fail(rc, "gather send", node_, index_);
        }
    }

    // Copies this strip's points into `all`, the global interior of width gnx.
    void copy_result(std::vector<double>& all, std::size_t gnx) const {
        for (std::size_t y = 0; y < strip_.ny; ++y)
            std::memcpy(&all[(block_.y0 + strip_.y0 + y) * gnx + block_.x0], old_.row(static_cast<long>(y)),
                        block_.nx * sizeof(double));
    }

private:
    static std::size_t slot(int i, int s) { return static_cast<std::size_t>(i) * 4 + static_cast<std::size_t>(s); }
    long nx() const noexcept { return static_cast<long>(block_.nx); }
    long ny() const noexcept { return static_cast<long>(strip_.ny); }

    void send(int s, double const* v, std::size_t count) {
        if (!to_[s].present) return;
        if (int rc = weft_net_send(to_[s].port, s, v, count * sizeof(double)); rc != 0)
            fail(rc, "weft_net_send", node_, index_);
    }
    void recv(int s, double* v, std::size_t count) {
        if (!to_[s].present) return;  // a side without a neighbour keeps its boundary values
        weft_net_status_t st{};
        if (int rc = weft_net_recv(mine_[s], v, count * sizeof(double), &st, WEFT_NET_FOREVER); rc != 0)
            fail(rc, "weft_net_recv", node_, index_);
        if (st.len != count * sizeof(double)) fail(EBADMSG, "weft_net_recv (edge length)", node_, index_);
    }

    // Sends the four edges of old_: columns packed, rows straight from the grid.
    void send_edges() {
        for (long y = 0; y < ny(); ++y) {
            col_out_[west][static_cast<std::size_t>(y)] = old_.at(0, y);
            col_out_[east][static_cast<std::size_t>(y)] = old_.at(nx() - 1, y);
        }
        send(east, col_out_[east].data(), strip_.ny);
        send(west, col_out_[west].data(), strip_.ny);
        send(north, old_.row(ny() - 1), block_.nx);
        send(south, old_.row(0), block_.nx);
    }
    // Receives the four halos of old_, blocking this thread only.
    void recv_halos() {
        recv(west, col_in_[west].data(), strip_.ny);
        recv(east, col_in_[east].data(), strip_.ny);
        recv(south, old_.row(-1), block_.nx);
        recv(north, old_.row(ny()), block_.nx);
        for (long y = 0; y < ny(); ++y) {
            if (to_[west].present) old_.at(-1, y) = col_in_[west][static_cast<std::size_t>(y)];
            if (to_[east].present) old_.at(nx(), y) = col_in_[east][static_cast<std::size_t>(y)];
        }
    }

    void sweep_blocking() {
        send_edges();
        recv_halos();
        relax_rect(old_, new_, 0, nx(), 0, ny());
    }

    void sweep_handcoded() {
        send_edges();
        // The points whose stencil reads no halo a neighbour fills, while the edges travel.
        long const x_lo = to_[west].present ? 1 : 0, x_hi = nx() - (to_[east].present ? 1 : 0);
        long const y_lo = to_[south].present ? 1 : 0, y_hi = ny() - (to_[north].present ? 1 : 0);
        relax_rect(old_, new_, x_lo, x_hi, y_lo, y_hi);
        recv_halos();
        // Then the edge points: full rows below and above, the columns between them.
        if (y_lo == 1) relax_rect(old_, new_, 0, nx(), 0, 1);
        if (y_hi == ny() - 1) relax_rect(old_, new_, 0, nx(), ny() - 1, ny());
        if (x_lo == 1) relax_rect(old_, new_, 0, 1, y_lo, y_hi);
        if (x_hi == nx() - 1) relax_rect(old_, new_, nx() - 1, nx(), y_lo, y_hi);
    }

    problem const& p_;
    int node_, index_, threads_;
    block block_;
    strip strip_;
    grid old_, new_;
    weft_port_id_t mine_[4]{};
    peer to_[4]{};
    std::vector<double> col_out_[2], col_in_[2];  // indexed by west, east
};

// A strip run by a weft thread of the node (strips 1..T-1).
struct strip_task {
    strip_solver* solver;
    double end_s = 0;
};

void* run_strip(void* arg) {
    auto* t = static_cast<strip_task*>(arg);
    t->solver->run();
    t->end_s = now_s();
    return nullptr;
}

// Runs body(j) on a weft thread of node j, for every node, and waits for them
// all; rethrows the first exception one of them threw.
struct node_call {
    std::function<void(int)> const* body;
    int node;
    std::exception_ptr error;
};

void* run_node_call(void* arg) {
    auto* c = static_cast<node_call*>(arg);
    try {
        (*c->body)(c->node);
    } catch (...) {
        c->error = std::current_exception();
    }
    return nullptr;
}

// Runs body(j) on a weft thread of node j for every j of `nodes` and waits
// for them all; rethrows the first exception one of them threw.
void on_nodes(std::vector<int> const& nodes, std::function<void(int)> const& body) {
    std::vector<node_call> calls(nodes.size());
    std::vector<weft_thread_t> ts(nodes.size());
    for (std::size_t k = 0; k < nodes.size(); ++k) {
        calls[k] = {&body, nodes[k], nullptr};
        check(weft_net_spawn(&ts[k], nodes[k], nullptr, run_node_call, &calls[k]), "weft_net_spawn");
    }
    for (auto t : ts) check(weft_thread_join(t, nullptr), "weft_thread_join");
    for (auto const& c : calls)
        if (c.error) std::rethrow_exception(c.error);
}

void on_every_node(int nodes, std::function<void(int)> const& body) {
    std::vector<int> all(static_cast<std::size_t>(nodes));
    for (int j = 0; j < nodes; ++j) all[static_cast<std::size_t>(j)] = j;
    on_nodes(all, body);
}

// Every size checked on the caller's thread before any port exists: every
// node's block must split into the version's strips.
void check_sizes(problem const& p, int nodes, char const* who) {
    if (nodes < 1) throw std::invalid_argument(std::string("pde: ") + who + " needs a running job (weft_net_init)");
    if (p.sweeps < 1) throw std::invalid_argument("pde: sweeps must be >= 1, got " + std::to_string(p.sweeps));
    layout const l = block_layout(nodes);
    for (int j = 0; j < nodes; ++j) (void)strip_of(block_of(l, j, p.gnx, p.gny), threads_per_node(p.version), 0);
}

// The naming service's names of one run (run_distributed).
std::string halo_name(std::string const& run, int node, std::size_t i) {
    return "pde/" + run + "/" + std::to_string(node) + "/" + std::to_string(i);
}
std::string gather_name(std::string const& run) { return "pde/" + run + "/gather"; }
std::string times_name(std::string const& run) { return "pde/" + run + "/times"; }

// One node's side of run_distributed, on a weft thread of that node: its
// names, registered in order, are unregistered and its ports destroyed on
// every way out.
class distributed_node {
public:
    distributed_node(problem const& p, std::string const& run, int self, int nodes)
        : p_(p), run_(run), self_(self), nodes_(nodes) {}
    distributed_node(distributed_node const&) = delete;
    distributed_node& operator=(distributed_node const&) = delete;
    ~distributed_node() {
        // On an exception's way out: its error, not a teardown's, is the one the caller gets.
        unregister_names(false);
        destroy_ports(false);
    }

    double run(bool gather, std::vector<double>* result, std::int64_t timeout_ns) {
        ports_ = make_node_ports(p_, self_);
        has_ports_ = true;
        if (self_ == 0) {
            check(weft_net_port_create(&times_, static_cast<std::size_t>(nodes_),
                                                     static_cast<std::size_t>(nodes_) * sizeof(double)),
                                "weft_net_port_create (times)");
            has_times_ = true;
        }
        for (std::size_t i = 0; i < ports_.halo.size(); ++i) enter(halo_name(run_, self_, i), ports_.halo[i]);
        if (self_ == 0) {
            enter(gather_name(run_), ports_.gather);
            enter(times_name(run_), times_);
        }
        // The directory as far as run_node reads it: this node's ports, its
        // neighbours' and node 0's gather port.
        std::vector<node_ports> dir(static_cast<std::size_t>(nodes_));
        dir[static_cast<std::size_t>(self_)] = ports_;
        block const b = block_of(block_layout(nodes_), self_, p_.gnx, p_.gny);
        for (int n : {b.west, b.east, b.south, b.north}) {
            if (n == no_rank) continue;
            auto& d = dir[static_cast<std::size_t>(n)];
            d.halo.resize(ports_.halo.size());
            for (std::size_t i = 0; i < d.halo.size(); ++i) d.halo[i] = find(halo_name(run_, n, i), timeout_ns);
        }
        weft_port_id_t times_at = times_;
        if (self_ != 0) {
            dir[0].gather = find(gather_name(run_), timeout_ns);
            dir[0].has_gather = true;
            times_at = find(times_name(run_), timeout_ns);
        }
        double secs = run_node(p_, self_, dir, gather, result, [] {
            check(weft_net_barrier(), "weft_net_barrier (before the sweeps)");
        });
        if (self_ != 0) {
            check(weft_net_send(times_at, 0, &secs, sizeof secs), "weft_net_send (times)");
        } else {
            for (int k = 1; k < nodes_; ++k) {
                double t = 0;
                weft_net_status_t st{};
                check(weft_net_recv(times_, &t, sizeof t, &st, WEFT_NET_FOREVER),
                                    "weft_net_recv (times)");
                if (st.len != sizeof t) throw weft::error(EBADMSG, "weft_net_recv (times): not one double");
                secs = std::max(secs, t);
            }
        }
        // Every lookup of the run was done before the first barrier, so the
        // names can go now; they go before the final barrier because
        // unregistering is a call to node 0's naming service, and after the
        // final barrier node 0 may end the job (weft_net_finalize stops the
        // service). The ports go after it: until every node has passed it, a
        // neighbour may still be sending its last edge.
        unregister_names(true);
        check(weft_net_barrier(), "weft_net_barrier (after the sweeps)");
        destroy_ports(true);
        return secs;
    }

private:
    // Unregisters this node's names, and destroys its ports; with `checked`, a
    // failure throws weft::error.
    void unregister_names(bool checked) {
        for (; !names_.empty(); names_.pop_back()) {
            int const rc = weft_net_name_unregister(names_.back().c_str());
            if (checked) check(rc, "weft_net_name_unregister");
        }
    }
    void destroy_ports(bool checked) {
        auto done = [checked](int rc, char const* what) {
            if (checked) check(rc, what);
        };
        if (has_ports_) {
            has_ports_ = false;
            for (auto const& id : ports_.halo) done(weft_net_port_destroy(id), "weft_net_port_destroy");
            if (ports_.has_gather) done(weft_net_port_destroy(ports_.gather), "weft_net_port_destroy (gather)");
        }
        if (has_times_) {
            has_times_ = false;
            done(weft_net_port_destroy(times_), "weft_net_port_destroy (times)");
        }
    }

    void enter(std::string const& name, weft_port_id_t id) {
        if (int rc = weft_net_name_register(name.c_str(), id); rc != 0)
            throw weft::error(rc, ("weft_net_name_register '" + name + "'").c_str());
        names_.push_back(name);
    }

    weft_port_id_t find(std::string const& name, std::int64_t timeout_ns) const {
        weft_port_id_t id{};
        int const rc = weft_net_name_lookup(name.c_str(), &id, timeout_ns);
        if (rc == ETIMEDOUT)
            throw std::runtime_error("pde: node " + std::to_string(self_) + " found no port named '" + name +
                                     "' within " + std::to_string(static_cast<double>(timeout_ns) * 1e-9) +
                                     " s: every node of the job must call run_distributed with the same problem "
                                     "and run name");
        if (rc != 0) throw weft::error(rc, ("weft_net_name_lookup '" + name + "'").c_str());
        return id;
    }

    problem const& p_;
    std::string const& run_;
    int self_, nodes_;
    node_ports ports_;
    bool has_ports_ = false;
    weft_port_id_t times_{};
    bool has_times_ = false;
    std::vector<std::string> names_;
};

}  // namespace

char const* weft_version_name(weft_version v) noexcept {
    switch (v) {
        case weft_version::blocking1: return "blocking1";
        case weft_version::threads2: return "threads2";
        case weft_version::threads4: return "threads4";
        case weft_version::handcoded: return "handcoded";
    }
    return "?";
}

bool parse_weft_version(std::string const& s, weft_version& v) noexcept {
    for (weft_version c : {weft_version::blocking1, weft_version::threads2, weft_version::threads4,
                           weft_version::handcoded})
        if (s == weft_version_name(c)) {
            v = c;
            return true;
        }
    return false;
}

int threads_per_node(weft_version v) noexcept {
    switch (v) {
        case weft_version::threads2: return 2;
        case weft_version::threads4: return 4;
        case weft_version::blocking1:
        case weft_version::handcoded: return 1;
    }
    return 1;
}

strip strip_of(block const& b, int threads, int i) {
    if (threads < 1 || i < 0 || i >= threads)
        throw std::invalid_argument("pde: strip " + std::to_string(i) + " of " + std::to_string(threads) +
                                    " does not exist (threads >= 1, 0 <= strip < threads)");
    if (b.ny < static_cast<std::size_t>(threads))
        throw std::invalid_argument("pde: a block of " + std::to_string(b.ny) + " rows cannot be cut into " +
                                    std::to_string(threads) + " strips; each needs at least one row");
    auto const r = near_equal_run(b.ny, threads, i);
    return {r.first, r.second};
}

node_ports make_node_ports(problem const& p, int node) {
    layout const l = block_layout(weft_net_num_nodes());
    block const b = block_of(l, node, p.gnx, p.gny);
    int const threads = threads_per_node(p.version);
    (void)strip_of(b, threads, threads - 1);  // the sizes are checked before any port exists
    std::size_t const row_bytes = std::max(b.nx, b.ny) * sizeof(double);
    node_ports ports;
    ports.halo.resize(static_cast<std::size_t>(threads) * 4);
    for (auto& id : ports.halo)
        check(weft_net_port_create(&id, kHaloMsgs, kHaloMsgs * row_bytes), "weft_net_port_create");
    ports.has_gather = node == 0;
    if (ports.has_gather)
        check(weft_net_port_create(&ports.gather, kGatherMsgs,
                                                 kGatherMsgs * gather_bytes(max_block_nx(p, l))),
                            "weft_net_port_create (gather)");
    return ports;
}

void destroy_node_ports(node_ports const& ports) {
    for (auto const& id : ports.halo) check(weft_net_port_destroy(id), "weft_net_port_destroy");
    if (ports.has_gather) check(weft_net_port_destroy(ports.gather), "weft_net_port_destroy (gather)");
}

double run_node(problem const& p, int node, std::vector<node_ports> const& directory, bool gather,
                std::vector<double>* result, std::function<void()> const& ready) {
    int const threads = threads_per_node(p.version);
    std::vector<strip_solver> solvers;
    solvers.reserve(static_cast<std::size_t>(threads));
    for (int i = 0; i < threads; ++i) solvers.emplace_back(p, node, i, directory);
    ready();
    std::vector<strip_task> tasks(static_cast<std::size_t>(threads));
    std::vector<weft_thread_t> ts(static_cast<std::size_t>(threads));
    double const t0 = now_s();
    for (int i = 1; i < threads; ++i) {
        tasks[static_cast<std::size_t>(i)].solver = &solvers[static_cast<std::size_t>(i)];
        if (int rc = weft_thread_create(&ts[static_cast<std::size_t>(i)], nullptr, run_strip,
                                        &tasks[static_cast<std::size_t>(i)]);
            rc != 0)
            fail(rc, "weft_thread_create", node, i);
    }
    solvers[0].run();
    double end = now_s();
    for (int i = 1; i < threads; ++i) {
        if (int rc = weft_thread_join(ts[static_cast<std::size_t>(i)], nullptr); rc != 0)
            fail(rc, "weft_thread_join", node, i);
        end = std::max(end, tasks[static_cast<std::size_t>(i)].end_s);
    }
    double const secs = (end - t0) / p.sweeps;
    if (!gather) return secs;
    weft_port_id_t const to = directory[0].gather;
    if (node != 0) {
        for (auto& s : solvers) s.send_result(to);
        return secs;
    }
    layout const l = block_layout(static_cast<int>(directory.size()));
    std::size_t const max_nx = max_block_nx(p, l);
    std::vector<double> all(p.gnx * p.gny);
    std::vector<unsigned char> msg(gather_bytes(max_nx));
    auto take = [&] {
        weft_net_status_t st{};
        if (int rc = weft_net_recv(to, msg.data(), msg.size(), &st, WEFT_NET_FOREVER); rc != 0)
            fail(rc, "gather recv", node, 0);
        std::uint64_t x0 = 0;
        std::memcpy(&x0, msg.data(), sizeof x0);
        std::size_t const n = (st.len - sizeof x0) / sizeof(double);
        if (st.len < sizeof x0 || x0 + n > p.gnx || static_cast<std::size_t>(st.tag) >= p.gny)
            fail(EBADMSG, "gather recv (row out of the grid)", node, 0);
        std::memcpy(&all[static_cast<std::size_t>(st.tag) * p.gnx + x0], msg.data() + sizeof x0, n * sizeof(double));
    };
    // Node 0's own rows are here already; every other node sends one message
    // per row of its block.
    for (auto const& s : solvers) s.copy_result(all, p.gnx);
    std::size_t total = 0;
    for (int r = 1; r < static_cast<int>(directory.size()); ++r) total += block_of(l, r, p.gnx, p.gny).ny;
    for (std::size_t k = 0; k < total; ++k) take();
    if (result != nullptr) *result = std::move(all);
    return secs;
}

}  // namespace weft::apps::pde

namespace weft::apps::pde {

double run_inproc(problem const& p, bool gather, std::vector<double>* result) {
    int const nodes = weft_net_num_nodes();
    check_sizes(p, nodes, "run_inproc");
    std::vector<node_ports> directory(static_cast<std::size_t>(nodes));
    on_every_node(nodes, [&](int j) { directory[static_cast<std::size_t>(j)] = make_node_ports(p, j); });
    std::vector<double> secs(static_cast<std::size_t>(nodes));
    weft_barrier_t built;
    check(weft_barrier_init(&built, static_cast<unsigned>(nodes)), "weft_barrier_init");
    auto const ready = [&built] {
        int const rc = weft_barrier_wait(&built);
        if (rc != 0 && rc != WEFT_BARRIER_SERIAL_THREAD) check(rc, "weft_barrier_wait");
    };
    on_every_node(nodes, [&](int j) {
        secs[static_cast<std::size_t>(j)] = run_node(p, j, directory, gather, j == 0 ? result : nullptr, ready);
    });
    check(weft_barrier_destroy(&built), "weft_barrier_destroy");
    on_every_node(nodes, [&](int j) { destroy_node_ports(directory[static_cast<std::size_t>(j)]); });
    return *std::max_element(secs.begin(), secs.end());
}

double run_distributed(problem const& p, std::string const& run, bool gather, std::vector<double>* result,
                       std::int64_t lookup_timeout_ns) {
    int const nodes = weft_net_num_nodes();
    check_sizes(p, nodes, "run_distributed");
    if (run.empty())
        throw std::invalid_argument("pde: run_distributed needs a run name (non-empty, unique to the run)");
    int const self = weft_net_self_node();
    double secs = 0;
    on_nodes({self}, [&](int node) {
        distributed_node d(p, run, node, nodes);
        secs = d.run(gather, result, lookup_timeout_ns);
    });
    return secs;
}

}  // namespace weft::apps::pde
