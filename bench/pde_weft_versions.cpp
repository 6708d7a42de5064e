// weft-bench pde, the weft versions (apps/pde/pde_weft.hpp): the inputs of
// the model measured on the running job, and the versions' runs. pde_experiment.cpp
// drives them and prints the rows.
#include "pde_weft_versions.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "apps/pde/pde.hpp"
#include "apps/pde/pde_weft.hpp"
#include "harness.hpp"
#include "pde_experiment.hpp"
#include "weft/rpc.h"

namespace weft::bench::pde {

namespace {

namespace app = weft::apps::pde;

// An exchange between a thread on node `a` and one on node `b`: each of
// `iters` steps (after a tenth as many unrecorded ones), both send `bytes` to
// the other and then receive the other's; half_rtt_ns is the time per step,
// the latency of a message as a solver's strip sees it. With compute_ns, each
// thread computes that long between its send and its receive (a busy loop, no
// scheduling point, as a strip's sweep): when that covers the latency, the
// step less compute_ns is what the messages cost the CPU (the overhead o).
struct pingpong_run {
    weft_port_id_t port_a{}, port_b{};
    std::size_t bytes = 0;
    long iters = 0, warmup = 0;
    std::uint64_t compute_ns = 0;
    // The grain exchange's computation instead: relax a grid of relax_nx x
    // relax_ny points between the sends and the receives, as the solver's
    // strip does; compute_step_ns is its measured time per step (timed side).
    std::size_t relax_nx = 0, relax_ny = 0;
    double compute_step_ns = 0;
    double half_rtt_ns = 0;
};

void* make_port(void* arg) {
    auto* id = static_cast<weft_port_id_t*>(arg);
    check(weft_net_port_create(id, 4, 1 << 20), "weft_net_port_create");
    return nullptr;
}

void* drop_port(void* arg) {
    check(weft_net_port_destroy(*static_cast<weft_port_id_t*>(arg)), "weft_net_port_destroy");
    return nullptr;
}

// One side of the exchange: send to the other's port, then receive from
// one's own, as every strip of the solver does each sweep.
struct exchange_side {
    pingpong_run* run;
    weft_port_id_t to, mine;
    bool timed;  // the side that reports the time
    // The grain exchange's further messages of each step, each through its
    // own pair of ports (to, mine), as a strip's k remote edges.
    std::vector<std::pair<weft_port_id_t, weft_port_id_t>> more = {};
};

void* exchange(void* arg) {
    auto* x = static_cast<exchange_side*>(arg);
    pingpong_run* r = x->run;
    std::vector<unsigned char> buf(r->bytes, 1);
    bool const relax = r->relax_nx > 0 && r->relax_ny > 0;
    app::grid g(relax ? r->relax_nx : 1, relax ? r->relax_ny : 1), h(g.nx(), g.ny());
    std::uint64_t t0 = 0, computing = 0;
    for (long i = 0; i < r->warmup + r->iters; ++i) {
        if (i == r->warmup) t0 = now_ns(), computing = 0;
        check(weft_net_send(x->to, 0, buf.data(), buf.size()), "weft_net_send");
        for (auto const& m : x->more) check(weft_net_send(m.first, 0, buf.data(), buf.size()), "weft_net_send");
        if (r->compute_ns > 0) busy_for_ns(r->compute_ns);
        if (relax) {
            std::uint64_t const c0 = now_ns();
            app::relax_rect(g, h, 0, static_cast<long>(g.nx()), 0, static_cast<long>(g.ny()));
            std::swap(g, h);
            computing += now_ns() - c0;
        }
        check(weft_net_recv(x->mine, buf.data(), buf.size(), nullptr, WEFT_NET_FOREVER), "weft_net_recv");
        for (auto const& m : x->more)
            check(weft_net_recv(m.second, buf.data(), buf.size(), nullptr, WEFT_NET_FOREVER), "weft_net_recv");
    }
    if (x->timed) {
        r->half_rtt_ns = static_cast<double>(now_ns() - t0) / static_cast<double>(r->iters);
        r->compute_step_ns = static_cast<double>(computing) / static_cast<double>(r->iters);
    }
    keep(g.at(0, 0));
    return nullptr;
}

// Runs fn(arg) on a weft thread of `node` and waits for it.
void on_node(int node, void* (*fn)(void*), void* arg) {
    weft_thread_t t{};
    check(weft_net_spawn(&t, node, nullptr, fn, arg), "weft_net_spawn");
    check(weft_thread_join(t, nullptr), "weft_thread_join");
}

double exchange_ns(int a, int b, std::size_t bytes, long iters, std::uint64_t compute_ns) {
    pingpong_run r;
    r.bytes = bytes;
    r.iters = iters;
    r.compute_ns = compute_ns;
    r.warmup = std::max(1L, iters / 10);
    on_node(a, make_port, &r.port_a);
    on_node(b, make_port, &r.port_b);
    exchange_side xa{&r, r.port_b, r.port_a, true}, xb{&r, r.port_a, r.port_b, false};
    weft_thread_t tp{}, tq{};
    check(weft_net_spawn(&tq, b, nullptr, exchange, &xb), "weft_net_spawn");
    check(weft_net_spawn(&tp, a, nullptr, exchange, &xa), "weft_net_spawn");
    check(weft_thread_join(tp, nullptr), "weft_thread_join");
    check(weft_thread_join(tq, nullptr), "weft_thread_join");
    on_node(a, drop_port, &r.port_a);
    on_node(b, drop_port, &r.port_b);
    return r.half_rtt_ns - static_cast<double>(compute_ns);
}

// The grain exchange of the model's o (pde_model.hpp, overhead_at_grain):
// `threads` pairs of threads, thread i of one side exchanging `messages`
// messages each way per step with thread i of the other, each through its own
// pair of ports (ports i * messages + j), relaxing `rect` between its sends
// and its receives. One side's threads run on `node`; the times per step are
// pair 0's on the timed side (runs[0].half_rtt_ns, compute_step_ns).
std::vector<pingpong_run> grain_runs(int threads, std::size_t bytes, long iters, grain_rect rect) {
    std::vector<pingpong_run> runs(static_cast<std::size_t>(threads));
    for (auto& r : runs) {
        r.bytes = bytes;
        r.iters = iters;
        r.warmup = std::max(1L, iters / 10);
        r.relax_nx = rect.nx;
        r.relax_ny = rect.ny;
    }
    return runs;
}

struct grain_side {
    std::vector<exchange_side> xs;
    std::vector<weft_thread_t> ts;

    void start(int node, std::vector<pingpong_run>& runs, int messages, weft_port_id_t const* mine,
               weft_port_id_t const* peer, bool timed) {
        auto const k = static_cast<std::size_t>(messages);
        xs.clear();
        for (std::size_t i = 0; i < runs.size(); ++i) {
            xs.push_back({&runs[i], peer[i * k], mine[i * k], timed && i == 0});
            for (std::size_t j = 1; j < k; ++j) xs.back().more.emplace_back(peer[i * k + j], mine[i * k + j]);
        }
        ts.assign(xs.size(), weft_thread_t{});
        for (std::size_t i = 0; i < xs.size(); ++i)
            check(weft_net_spawn(&ts[i], node, nullptr, exchange, &xs[i]), "weft_net_spawn");
    }
    void join() {
        for (auto t : ts) check(weft_thread_join(t, nullptr), "weft_thread_join");
    }
};

constexpr int kGrainThreadsMax = 4;   // threads4's
constexpr int kGrainMessagesMax = 4;  // a strip's remote edges: west, east, and the outer strips' north or south
constexpr int kGrainPorts = kGrainThreadsMax * kGrainMessagesMax;

// Ranks 0 and 1's ports of the model's exchanges over mpi (measure_remote's,
// and the grain exchanges), kGrainPorts per rank, registered as
// pde/grain/<rank>/<i> and found by the other rank through the naming
// service; the other ranks take no part. Both ranks run the same sequence of
// exchanges, and every message a rank sends is received by the other before
// either goes on to the next.
struct mpi_exchange_ports {
    int self = -1;
    std::vector<weft_port_id_t> mine, peer;

    bool active() const { return self == 0 || self == 1; }

    void open() {
        self = weft_net_self_node();
        if (!active()) return;
        mine.assign(kGrainPorts, weft_port_id_t{});
        peer.assign(kGrainPorts, weft_port_id_t{});
        for (int i = 0; i < kGrainPorts; ++i) {
            on_node(self, make_port, &mine[static_cast<std::size_t>(i)]);
            check(weft_net_name_register(name(self, i).c_str(), mine[static_cast<std::size_t>(i)]),
                  "weft_net_name_register");
        }
        for (int i = 0; i < kGrainPorts; ++i) {
            std::string const want = name(1 - self, i);
            int const rc =
                weft_net_name_lookup(want.c_str(), &peer[static_cast<std::size_t>(i)], app::kLookupTimeoutNs);
            if (rc == ETIMEDOUT)
                die("pde child (weft over mpi), rank %d: no port named '%s' within %.0f s: rank %d is not measuring",
                    self, want.c_str(), static_cast<double>(app::kLookupTimeoutNs) * 1e-9, 1 - self);
            check(rc, "weft_net_name_lookup");
        }
    }

    // Both ranks make the same calls; rank 0's time per step (rank 1: 0).
    grain_step step(int threads, int messages, std::size_t bytes, long iters, grain_rect rect) {
        if (threads > kGrainThreadsMax || messages > kGrainMessagesMax)
            die("pde child (weft over mpi): a grain exchange of %d threads of %d messages (at most %d and %d)", threads,
                messages, kGrainThreadsMax, kGrainMessagesMax);
        std::vector<pingpong_run> runs = grain_runs(threads, bytes, iters, rect);
        grain_side g;
        g.start(self, runs, messages, mine.data(), peer.data(), self == 0);
        g.join();
        return {runs[0].half_rtt_ns, runs[0].compute_step_ns};
    }

    // measure_remote's exchange: one thread each, one message, compute_ns of spinning.
    double fit_step_ns(std::size_t bytes, long iters, std::uint64_t compute_ns) {
        std::vector<pingpong_run> runs = grain_runs(1, bytes, iters, {});
        runs[0].compute_ns = compute_ns;
        grain_side g;
        g.start(self, runs, 1, mine.data(), peer.data(), self == 0);
        g.join();
        return runs[0].half_rtt_ns;
    }

    // After the last exchange: every message to these ports has been received.
    void close() {
        if (!active()) return;
        for (int i = 0; i < kGrainPorts; ++i) {
            check(weft_net_name_unregister(name(self, i).c_str()), "weft_net_name_unregister");
            on_node(self, drop_port, &mine[static_cast<std::size_t>(i)]);
        }
    }

    static std::string name(int rank, int i) { return "pde/grain/" + std::to_string(rank) + "/" + std::to_string(i); }
};

// A node's block relaxed `sweeps` times with no messages. Every node builds
// its grids first and waits at `built`; the clock runs from the barrier's
// release to the last node's end, as a version's run is timed from its
// nodes' barrier (run_node's ready()): allocating and first touching the
// grids (a page fault per 4 KiB) is no part of a sweep.
struct calc_run {
    long side;
    int sweeps;
    weft_barrier_t* built;
    std::uint64_t* start;  // the barrier's release, stamped by the serial thread
};

void* relax_alone(void* arg) {
    auto const* c = static_cast<calc_run const*>(arg);
    auto const n = static_cast<std::size_t>(c->side);
    app::block const b = app::block_of(app::layout{}, 0, n, n);
    app::grid g(n, n), h(n, n);
    app::init_block(g, b, n);
    app::init_block(h, b, n);
    int const rc = weft_barrier_wait(c->built);
    if (rc == WEFT_BARRIER_SERIAL_THREAD)
        *c->start = now_ns();
    else
        check(rc, "weft_barrier_wait");
    for (int s = 0; s < c->sweeps; ++s) {
        app::relax_rect(g, h, 0, c->side, 0, c->side);
        std::swap(g, h);
    }
    keep(g.at(0, 0));
    return nullptr;
}

}  // namespace

double weft_calc_time(int nodes, long side, int sweeps) {
    weft_barrier_t built;
    check(weft_barrier_init(&built, static_cast<unsigned>(nodes)), "weft_barrier_init");
    std::uint64_t start = 0;
    calc_run const c{side, sweeps, &built, &start};
    std::vector<weft_thread_t> ts(static_cast<std::size_t>(nodes));
    for (int j = 0; j < nodes; ++j)
        check(weft_net_spawn(&ts[static_cast<std::size_t>(j)], j, nullptr, relax_alone, const_cast<calc_run*>(&c)),
              "weft_net_spawn");
    for (auto t : ts) check(weft_thread_join(t, nullptr), "weft_thread_join");
    std::uint64_t const end = now_ns();
    check(weft_barrier_destroy(&built), "weft_barrier_destroy");
    return static_cast<double>(end - start) * 1e-9 / sweeps;
}

std::vector<pingpong::point> weft_message_points(int a, int b, std::vector<std::size_t> const& sizes, int rounds,
                                                 long iters, std::uint64_t compute_ns) {
    std::vector<pingpong::point> pts;
    for (std::size_t s : sizes) pts.push_back({s, {}});
    // Rounds interleaved over the sizes, so that a slow moment of the machine
    // does not land on one size.
    for (int r = 0; r < rounds; ++r)
        for (auto& p : pts) p.half_rtt_ns.push_back(exchange_ns(a, b, p.bytes, iters, compute_ns));
    return pts;
}

pingpong::fit weft_message_fit(int a, int b, std::vector<std::size_t> const& sizes, int rounds, long iters,
                               std::uint64_t compute_ns) {
    return pingpong::fit_alpha_beta(weft_message_points(a, b, sizes, rounds, iters, compute_ns), sizes.back());
}

grain_step weft_grain_step(int a, int b, int threads, int messages, std::size_t bytes, long iters, grain_rect rect) {
    auto const n = static_cast<std::size_t>(threads) * static_cast<std::size_t>(messages);
    std::vector<weft_port_id_t> pa(n), pb(n);
    for (std::size_t i = 0; i < n; ++i) {
        on_node(a, make_port, &pa[i]);
        on_node(b, make_port, &pb[i]);
    }
    std::vector<pingpong_run> runs = grain_runs(threads, bytes, iters, rect);
    grain_side ga, gb;
    gb.start(b, runs, messages, pb.data(), pa.data(), false);
    ga.start(a, runs, messages, pa.data(), pb.data(), true);
    ga.join();
    gb.join();
    for (std::size_t i = 0; i < n; ++i) {
        on_node(a, drop_port, &pa[i]);
        on_node(b, drop_port, &pb[i]);
    }
    return {runs[0].half_rtt_ns, runs[0].compute_step_ns};
}

std::vector<int> grain_threads(std::vector<app::weft_version> const& vs) {
    std::vector<int> ts;
    for (auto v : vs) {
        if (v == app::weft_version::blocking1) continue;  // waits for its messages: no o in its model
        int const t = app::threads_per_node(v);
        if (std::find(ts.begin(), ts.end(), t) == ts.end()) ts.push_back(t);
    }
    return ts;
}

namespace {
// Steps of an mpi grain exchange, from the block alone so that both ranks
// agree: about 20 ms at a nanosecond per point, 20 to 1,000.
long grain_iters_mpi(long side) {
    double const n = static_cast<double>(side) * static_cast<double>(side);
    return static_cast<long>(std::clamp(2e7 / n, 20.0, 1000.0));
}
}  // namespace

grain_rect grain_rect_of(int nodes, long side, int threads) {
    model_shape const s = weft_shape(nodes, side, threads);
    auto const cols = static_cast<std::size_t>(side);
    double const points = threads <= 1 ? s.n - s.e : s.n / threads;
    return {cols, std::max<std::size_t>(1, static_cast<std::size_t>(points / static_cast<double>(side) + 0.5))};
}

model_shape weft_shape(int nodes, long side, int threads) {
    app::layout const l = app::block_layout(nodes);
    auto const g = static_cast<std::size_t>(side);
    std::size_t const gnx = g * static_cast<std::size_t>(l.px), gny = g * static_cast<std::size_t>(l.py);
    model_shape best;
    best.remote = -1;
    for (int r = 0; r < nodes; ++r) {
        app::block const b = app::block_of(l, r, gnx, gny);
        int const kx = (b.west != app::no_rank) + (b.east != app::no_rank);
        int const ky = (b.south != app::no_rank) + (b.north != app::no_rank);
        for (int i = 0; i < threads; ++i) {
            app::strip const s = app::strip_of(b, threads, i);
            model_shape m;
            m.n = static_cast<double>(b.nx) * static_cast<double>(b.ny);
            m.e = m.n - static_cast<double>(b.nx - static_cast<std::size_t>(kx)) *
                            static_cast<double>(b.ny - static_cast<std::size_t>(ky));
            m.threads = threads;
            bool const below = i == 0 && b.south != app::no_rank, above = i == threads - 1 && b.north != app::no_rank;
            m.remote = kx + below + above;
            m.remote_bytes = 8.0 * static_cast<double>(std::max(kx > 0 ? s.ny : 0, below || above ? b.nx : 0));
            m.local = (i > 0) + (i + 1 < threads);
            m.local_bytes = m.local > 0 ? 8.0 * static_cast<double>(b.nx) : 0.0;
            if (m.remote > best.remote || (m.remote == best.remote && m.local > best.local)) best = m;
        }
    }
    return best;
}

double weft_model(app::weft_version v, model_params const& m, model_shape const& s, bool overlap) {
    switch (v) {
    case app::weft_version::blocking1: return overlap ? t_blocking_overlap(m, s) : t_blocking(m, s);
    case app::weft_version::threads2:
    case app::weft_version::threads4: return overlap ? t_threads_overlap(m, s) : t_threads(m, s);
    case app::weft_version::handcoded: return overlap ? t_handcoded_overlap(m, s) : t_handcoded(m, s);
    }
    return 0;
}

double weft_run(int nodes, long side, app::weft_version v, int sweeps, bool check) {
    app::layout const l = app::block_layout(nodes);
    app::problem const p{static_cast<std::size_t>(side) * static_cast<std::size_t>(l.px),
                         static_cast<std::size_t>(side) * static_cast<std::size_t>(l.py), v, sweeps};
    if (!check) return app::run_inproc(p, false, nullptr);
    std::vector<double> got;
    double const secs = app::run_inproc(p, true, &got);
    std::vector<double> const ref = app::serial(p.gnx, p.gny, sweeps);
    double const diff = app::max_abs_diff(got, ref);
    if (diff != 0)
        die("pde: version %s on %d inproc nodes, side %ld: the result differs from the serial program's by up to %g "
            "(it must equal it)",
            app::weft_version_name(v), nodes, side, diff);
    return secs;
}

int weft_mpi_child(int ranks, std::vector<long> const& sides, std::vector<std::string> const& versions, int rounds,
                   double work, int max_sweeps) {
    std::vector<app::weft_version> vs;
    for (auto const& name : versions) {
        app::weft_version v{};
        if (!app::parse_weft_version(name, v))
            die("pde child (weft over mpi): '%s' is not a weft version", name.c_str());
        vs.push_back(v);
    }
    // One worker per rank: a node is one processor, as in the paper, and its
    // threads share it.
    weft_config_t cfg{};
    cfg.workers = 1;
    cfg.adapt = "off";
    check(weft_init(&cfg), "weft_init");
    weft_net_config_t ncfg{};
    ncfg.transport = "mpi";
    check(weft_net_init(&ncfg), "weft_net_init (mpi)");
    int const nodes = weft_net_num_nodes(), rank = weft_net_self_node();
    if (nodes != ranks)
        die("pde child (weft over mpi): this job has %d node%s, not the %d asked for: started without mpiexec, or by "
            "the mpiexec of another MPI than weft's",
            nodes, nodes == 1 ? "" : "s", ranks);
    mpi_exchange_ports ports;
    if (nodes >= 2) {
        ports.open();
        // alpha_R, beta_R and o after kOverheadComputeNs, between ranks 0 and 1.
        remote_points const remote = ports.active()
                                         ? measure_remote(rounds,
                                                          [&](std::size_t bytes, std::uint64_t compute_ns) {
                                                              return ports.fit_step_ns(bytes, 2000, compute_ns);
                                                          })
                                         : remote_points{};
        if (rank == 0) {
            print_points("remote", remote.latency);
            print_points("overhead", remote.overhead);
            print_points("local", weft_message_points(0, 0, kFitSizes, rounds, 5000));
        }
        check(weft_net_barrier(), "weft_net_barrier");
    }
    std::vector<int> const grain_ts = grain_threads(vs);
    app::layout const l = app::block_layout(nodes);
    long run = 0;  // every rank numbers the runs alike: the runs' names
    try {
        for (long side : sides) {
            std::size_t const gnx = static_cast<std::size_t>(side * l.px), gny = static_cast<std::size_t>(side * l.py);
            int const sweeps = sweeps_for(side, work, max_sweeps);
            std::vector<double> const ref = rank == 0 ? app::serial(gnx, gny, sweeps) : std::vector<double>{};
            for (auto v : vs) {
                app::problem const p{gnx, gny, v, sweeps};
                std::vector<double> got;
                (void)app::run_distributed(p, std::to_string(run++), true, &got);
                if (rank == 0)
                    std::printf("check %s %ld %d %.17g\n", app::weft_version_name(v), side, sweeps,
                                app::max_abs_diff(got, ref));
            }
            // Rounds: calc(n) and then every version, so that a slow moment
            // of the machine lands on the model's input as on the versions.
            for (int round = 0; round < rounds; ++round) {
                check(weft_net_barrier(), "weft_net_barrier");
                double const calc_s = calc_on_job(nodes, rank, side, sweeps);
                std::printf("calc %ld %d %d %.9g\n", side, rank, round, calc_s);
                if (ports.active())
                    for (int t : grain_ts) {
                        model_shape const shape = weft_shape(nodes, side, t);
                        grain_step const g =
                            ports.step(t, std::max(1, shape.remote), static_cast<std::size_t>(shape.remote_bytes),
                                       grain_iters_mpi(side), grain_rect_of(nodes, side, t));
                        if (rank == 0) std::printf("grain %ld %d %.9g %.9g\n", side, t, g.compute_ns, g.step_ns);
                    }
                // The other ranks wait here, not in the versions' lookups,
                // which time out.
                check(weft_net_barrier(), "weft_net_barrier");
                for (auto v : vs) {
                    app::problem const p{gnx, gny, v, sweeps};
                    double const t = app::run_distributed(p, std::to_string(run++), false, nullptr);
                    if (rank == 0) std::printf("pde %s %ld %d %.9g\n", app::weft_version_name(v), side, round, t);
                }
                std::fflush(stdout);
            }
        }
    } catch (std::exception const& e) {
        die("pde child (weft over mpi), rank %d: %s", rank, e.what());
    }
    // The names go while node 0's naming service runs: before the barrier
    // that lets node 0 finalize.
    ports.close();
    check(weft_net_barrier(), "weft_net_barrier");
    check(weft_net_finalize(), "weft_net_finalize");
    check(weft_finalize(), "weft_finalize");
    return 0;
}

}  // namespace weft::bench::pde
