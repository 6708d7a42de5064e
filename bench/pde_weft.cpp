// weft-bench pde, the weft versions (apps/pde/pde_weft.hpp): the inputs of
// the model measured on the running job, and the versions' runs. pde.cpp
// drives them and prints the rows.
#include "pde_weft.hpp"

#include <algorithm>
#include <vector>

#include "apps/pde/pde.hpp"
#include "apps/pde/pde_weft.hpp"
#include "harness.hpp"

namespace weft::bench::pde {

namespace {

namespace app = weft::apps::pde;

// A ping-pong between a thread on node `a` and one on node `b`: `iters`
// round trips of `bytes` after a tenth as many unrecorded ones.
struct pingpong_run {
    weft_port_id_t port_a{}, port_b{};
    std::size_t bytes = 0;
    long iters = 0, warmup = 0;
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

void* ping(void* arg) {
    auto* r = static_cast<pingpong_run*>(arg);
    std::vector<unsigned char> buf(r->bytes, 1);
    std::uint64_t t0 = 0;
    for (long i = 0; i < r->warmup + r->iters; ++i) {
        if (i == r->warmup) t0 = now_ns();
        check(weft_net_send(r->port_b, 0, buf.data(), buf.size()), "weft_net_send");
        check(weft_net_recv(r->port_a, buf.data(), buf.size(), nullptr, WEFT_NET_FOREVER), "weft_net_recv");
    }
    r->half_rtt_ns = static_cast<double>(now_ns() - t0) / (2.0 * static_cast<double>(r->iters));
    return nullptr;
}

void* pong(void* arg) {
    auto* r = static_cast<pingpong_run*>(arg);
    std::vector<unsigned char> buf(r->bytes, 2);
    for (long i = 0; i < r->warmup + r->iters; ++i) {
        check(weft_net_recv(r->port_b, buf.data(), buf.size(), nullptr, WEFT_NET_FOREVER), "weft_net_recv");
        check(weft_net_send(r->port_a, 0, buf.data(), buf.size()), "weft_net_send");
    }
    return nullptr;
}

// Runs fn(arg) on a weft thread of `node` and waits for it.
void on_node(int node, void* (*fn)(void*), void* arg) {
    weft_thread_t t{};
    check(weft_net_spawn(&t, node, nullptr, fn, arg), "weft_net_spawn");
    check(weft_thread_join(t, nullptr), "weft_thread_join");
}

double half_rtt_ns(int a, int b, std::size_t bytes, long iters) {
    pingpong_run r;
    r.bytes = bytes;
    r.iters = iters;
    r.warmup = std::max(1L, iters / 10);
    on_node(a, make_port, &r.port_a);
    on_node(b, make_port, &r.port_b);
    weft_thread_t tp{}, tq{};
    check(weft_net_spawn(&tq, b, nullptr, pong, &r), "weft_net_spawn");
    check(weft_net_spawn(&tp, a, nullptr, ping, &r), "weft_net_spawn");
    check(weft_thread_join(tp, nullptr), "weft_thread_join");
    check(weft_thread_join(tq, nullptr), "weft_thread_join");
    on_node(a, drop_port, &r.port_a);
    on_node(b, drop_port, &r.port_b);
    return r.half_rtt_ns;
}

}  // namespace

pingpong::fit weft_message_fit(int a, int b, std::vector<std::size_t> const& sizes, int rounds, long iters) {
    std::vector<pingpong::point> pts;
    for (std::size_t s : sizes) pts.push_back({s, {}});
    // Rounds interleaved over the sizes, so that a slow moment of the machine
    // does not land on one size.
    for (int r = 0; r < rounds; ++r)
        for (auto& p : pts) p.half_rtt_ns.push_back(half_rtt_ns(a, b, p.bytes, iters));
    return pingpong::fit_alpha_beta(pts, sizes.back());
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

double weft_model(app::weft_version v, model_params const& m, model_shape const& s) {
    switch (v) {
        case app::weft_version::blocking1: return t_blocking(m, s);
        case app::weft_version::threads2:
        case app::weft_version::threads4: return t_threads(m, s);
        case app::weft_version::handcoded: return t_handcoded(m, s);
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

}  // namespace weft::bench::pde
