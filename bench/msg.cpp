// weft-bench msg: message passing between two nodes, one row per operation,
// transport and message size.
//
// An operation is an entry of `ops()` below. Its size rows have the shape
//     {"experiment":"msg","op":OP,"transport":T,"bytes":B,"latency_ns":..,"bandwidth_mb_s":..}
// with latency the median over rounds of the half round trip and bandwidth
// bytes / latency (MB = 10^6 bytes), so that operations over different
// transports line up by size. Operations:
//   pingpong and rpc over MPI, paired: each of --rounds rounds runs three MPI
//                       jobs of this executable (mpiexec -n 2), one timed
//                       round each, in an order that alternates (raw first in
//                       even rounds, last in odd ones):
//                       - raw_mpi: MPI_Send / MPI_Recv ping-pong between two
//                         ranks (pingpong.hpp), the baseline;
//                       - mpi: the same ping-pong between weft threads on two
//                         ranks over weft's mpi transport (weft_net_send/recv,
//                         one worker per rank; pingpong_weft.cpp);
//                       - rpc over mpi: a null weft::rpc::call from rank 0 to a
//                         server thread on rank 1.
//                       The host's speed moves 2x for minutes at a time, so
//                       weft is compared with raw MPI within a round only: the
//                       mpi rows carry paired_ratio_to and paired_ratio (the
//                       median over rounds of weft's half round trip over
//                       raw's; for rpc, the call over raw's 8-byte round trip),
//                       with a row per round ("round", "raw_ns"). After them
//                       the raw fit row (alpha and beta of
//                       latency = alpha + beta * bytes over the sizes up to
//                       --fit-max-bytes, the costs the PDE model uses) and the
//                       target rows {"target":NAME,"value":..,"bound":..,"met":..}:
//                       8 B ping-pong within 2x raw, 1 MiB bandwidth at least
//                       0.9x raw, the null RPC within 3x raw's round trip.
//   pingpong (inproc)   the same between two nodes of this process, one worker.
//   port_roundtrip (inproc)  two weft threads on one worker, one port each on
//                       the same node (src/net, docs/design/net.md), each
//                       blocked in weft_net_recv on its own port: a send, a
//                       wake-up and a switch each way (the hand-off path: the
//                       sender copies straight into the waiting receiver's
//                       buffer). Its latency_ns is the whole round trip, the
//                       figure the target names; 8-byte messages.
//   rpc (inproc)        weft::rpc::call from a thread of node 1 to a server of
//                       one thread on node 0 (docs/design/rpc.md): a null call
//                       (no arguments, void result; bytes 0) and one with an
//                       8-byte argument and result (bytes 8); latency_ns is
//                       the whole call, at 1 and 2 workers (workers).
//   lookup (inproc)     weft_net_name_lookup of a registered name from node 1:
//                       an RPC to the naming server on node 0; bytes is the
//                       name's length; 1 and 2 workers.
// Without MPI built in, the MPI operations print why and emit no rows (status 0).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "harness.hpp"
#include "mpi_launch.hpp"
#include "pingpong.hpp"
#include "weft/rpc.hpp"
#include "weft/weft.h"

// The service the rpc rows call.
struct msg_bench_service {
    void null() {}
    std::int64_t echo(std::int64_t v) { return v; }
};
template <>
struct weft::rpc::interface<msg_bench_service>
    : weft::rpc::functions<&msg_bench_service::null, &msg_bench_service::echo> {};

namespace weft::bench::msg {
namespace {

// An operation: what --ops selects it by (any of `names`), the transport it
// runs over, whether this build has it, and what measures it and emits its
// rows. The MPI operations are one entry: they run paired, round by round.
struct op {
    std::vector<std::string> names;
    char const* transport;
    bool (*built)();
    std::string (*not_built)();
    void (*run)(context& ctx);
};

void emit_size_row(context& ctx, table& t, char const* op_name, char const* transport, std::size_t bytes,
                   summary const& lat_ns) {
    double const bw = lat_ns.median > 0 ? static_cast<double>(bytes) / lat_ns.median * 1e3 : 0;  // B/ns = 10^3 MB/s
    json_object rec = ctx.record();
    rec.add("op", op_name).add("transport", transport).add("bytes", static_cast<unsigned long long>(bytes));
    rec.add("latency_ns", lat_ns.median).add("latency_ns_spread", lat_ns.spread).add("bandwidth_mb_s", bw);
    rec.add("rounds", static_cast<unsigned long long>(lat_ns.n));
    ctx.emit(rec);
    t.add_row({op_name, transport, fmt_sig(static_cast<double>(bytes)), fmt(lat_ns.median, 1), fmt_pct(lat_ns.spread),
               fmt_sig(bw)});
}

void emit_points(context& ctx, char const* transport, std::vector<pingpong::point> const& pts, char const* title) {
    table t({"op", "transport", "bytes", "latency ns", "spread", "MB/s"});
    for (auto const& p : pts) emit_size_row(ctx, t, "pingpong", transport, p.bytes, summarize(p.half_rtt_ns));
    ctx.print(t, title);
}
void run_weft_inproc_pingpong(context& ctx) {
    auto const& o = ctx.opts();
    std::vector<std::size_t> const sizes = pingpong::parse_sizes("sizes", o.list("sizes"));
    int const rounds = static_cast<int>(o.integer("rounds"));
    std::vector<pingpong::point> const pts = pingpong::weft_inproc(sizes, rounds, o.integer("iters"));
    emit_points(ctx, "inproc", pts, "msg: weft threads on two in-process nodes, one worker: half round trip");
}

struct port_pair {
    weft_port_id_t mine;
    weft_port_id_t peer;
    long iters;
};

void* echo(void* a) {
    auto* p = static_cast<port_pair*>(a);
    std::int64_t v = 0;
    for (long i = 0; i < p->iters; ++i) {
        check(weft_net_recv(p->mine, &v, sizeof v, nullptr, WEFT_NET_FOREVER), "weft_net_recv");
        check(weft_net_send(p->peer, 0, &v, sizeof v), "weft_net_send");
    }
    return nullptr;
}

// One timed round: iters round trips; ns per round trip.
double port_roundtrip_round(long iters) {
    weft_port_id_t a{}, b{};
    check(weft_net_port_create(&a, 4, 256), "weft_net_port_create");
    check(weft_net_port_create(&b, 4, 256), "weft_net_port_create");
    port_pair other{b, a, iters};
    weft_thread_t t;
    check(weft_thread_create(&t, nullptr, echo, &other), "weft_thread_create");
    std::int64_t v = 0;
    // One untimed exchange: the echo thread is blocked in its receive from here on.
    check(weft_net_send(b, 0, &v, sizeof v), "weft_net_send");
    check(weft_net_recv(a, &v, sizeof v, nullptr, WEFT_NET_FOREVER), "weft_net_recv");
    std::uint64_t t0 = now_ns();
    for (long i = 1; i < iters; ++i) {
        v = i;
        check(weft_net_send(b, 0, &v, sizeof v), "weft_net_send");
        check(weft_net_recv(a, &v, sizeof v, nullptr, WEFT_NET_FOREVER), "weft_net_recv");
    }
    double ns = double(now_ns() - t0) / double(iters - 1);
    check(weft_thread_join(t, nullptr), "weft_thread_join");
    check(weft_net_port_destroy(a), "weft_net_port_destroy");
    check(weft_net_port_destroy(b), "weft_net_port_destroy");
    return ns;
}

// Runs body(policy name) on a fresh runtime of `workers` workers (--sched,
// adaptation off) with an inproc job of `nodes` nodes, then ends both.
template <class Body>
void with_inproc_job(context& ctx, int workers, int nodes, Body body) {
    std::string const sched = ctx.opts().string("sched");
    weft_config_t cfg{};
    cfg.workers = workers;
    cfg.sched = sched.empty() ? nullptr : sched.c_str();
    cfg.adapt = "off";
    check(weft_init(&cfg), "weft_init");
    weft_net_config_t ncfg{};
    ncfg.nodes = nodes;
    ncfg.transport = "inproc";
    check(weft_net_init(&ncfg), "weft_net_init");
    body(std::string(weft_sched_name()));
    check(weft_net_finalize(), "weft_net_finalize");
    check(weft_finalize(), "weft_finalize");
}

void run_port_roundtrip(context& ctx) {
    auto const& o = ctx.opts();
    int const rounds = static_cast<int>(o.integer("rounds"));
    long const iters = static_cast<long>(o.integer("iters"));
    std::string policy;
    std::vector<double> samples;
    with_inproc_job(ctx, 1, 1, [&](std::string const& p) {
        policy = p;
        for (int r = 0; r < rounds; ++r) samples.push_back(port_roundtrip_round(iters));
    });
    summary const s = summarize(samples);
    json_object rec = ctx.record();
    rec.add("op", "port_roundtrip").add("transport", "inproc").add("workers", 1).add("bytes", 8ULL);
    rec.add("latency_ns", s.median).add("latency_ns_spread", s.spread).add("latency_ns_min", s.min);
    rec.add("latency_ns_max", s.max).add("bandwidth_mb_s", s.median > 0 ? 8.0 / s.median * 1e3 : 0.0);
    rec.add("rounds", static_cast<unsigned long long>(rounds)).add("iters", static_cast<unsigned long long>(iters));
    rec.add("sched", policy);
    add_provenance(rec);
    ctx.emit(rec);
    table t({"op", "transport", "median ns", "min ns", "max ns", "spread"}, "llrrrr");
    t.add_row({"port_roundtrip", "inproc", fmt(s.median, 1), fmt(s.min, 1), fmt(s.max, 1), fmt_pct(s.spread)});
    ctx.print(t, "msg: round trip of an 8-byte message between two weft threads on one worker (same node)");
}

// One timed round of `iters` calls of `one` from a thread of node 1; ns per call.
template <class F>
double on_node1_round(long iters, F one) {
    struct arg {
        long iters;
        F* one;
        double ns;
    } a{iters, &one, 0};
    weft_thread_t t;
    check(weft_net_spawn(&t, 1, nullptr,
                         [](void* p) -> void* {
                             auto* a = static_cast<arg*>(p);
                             (*a->one)();  // untimed: the reply port is made, the server waits
                             std::uint64_t t0 = now_ns();
                             for (long i = 0; i < a->iters; ++i) (*a->one)();
                             a->ns = double(now_ns() - t0) / double(a->iters);
                             return nullptr;
                         },
                         &a),
          "weft_net_spawn");
    check(weft_thread_join(t, nullptr), "weft_thread_join");
    return a.ns;
}

void emit_call_row(context& ctx, table& t, char const* op_name, char const* transport, int workers,
                   std::size_t bytes, std::vector<double> const& samples, std::string const& policy) {
    summary const s = summarize(samples);
    json_object rec = ctx.record();
    rec.add("op", op_name).add("transport", transport).add("workers", workers);
    rec.add("bytes", static_cast<unsigned long long>(bytes)).add("latency_ns", s.median);
    rec.add("latency_ns_spread", s.spread).add("latency_ns_min", s.min).add("latency_ns_max", s.max);
    rec.add("bandwidth_mb_s", s.median > 0 ? double(bytes) / s.median * 1e3 : 0.0);
    rec.add("rounds", static_cast<unsigned long long>(s.n)).add("sched", policy);
    add_provenance(rec);
    ctx.emit(rec);
    t.add_row({op_name, transport, std::to_string(workers), std::to_string(bytes), fmt(s.median, 1), fmt(s.min, 1),
               fmt_pct(s.spread)});
}

// rpc and lookup share the set-up: a runtime of `workers` workers, a job of
// two in-process nodes, a server of one thread on node 0 (main's node).

void run_rpc(context& ctx) {
    auto const& o = ctx.opts();
    int const rounds = static_cast<int>(o.integer("rounds"));
    long const iters = static_cast<long>(o.integer("iters"));
    table t({"op", "transport", "workers", "bytes", "median ns", "min ns", "spread"}, "llrrrrr");
    for (int workers : {1, 2}) {
        with_inproc_job(ctx, workers, 2, [&](std::string const& policy) {
            msg_bench_service svc;
            weft::rpc::server<msg_bench_service> srv(svc, 1);
            weft_port_id_t const port = srv.port();
            std::vector<double> null_ns, echo_ns;
            for (int r = 0; r < rounds; ++r) {
                null_ns.push_back(on_node1_round(iters, [&] { weft::rpc::call(port, &msg_bench_service::null); }));
                echo_ns.push_back(on_node1_round(iters, [&] {
                    if (weft::rpc::call(port, &msg_bench_service::echo, std::int64_t(7)) != 7) std::abort();
                }));
            }
            emit_call_row(ctx, t, "rpc", "inproc", workers, 0, null_ns, policy);
            emit_call_row(ctx, t, "rpc", "inproc", workers, 8, echo_ns, policy);
        });
    }
    ctx.print(t, "msg: RPC round trip, caller on node 1, one server thread on node 0 (inproc)");
}

// --- Over MPI: weft against raw MPI, paired round by round -----------------------
//
// This host's speed moves by 2x for minutes at a time, so a weft job and a
// raw MPI job run one after the other can differ by the host alone. Each
// round therefore runs one job of each kind, of one timed round each: the raw
// MPI ping-pong, weft's ping-pong over its mpi transport and the RPC job,
// alternating their order (raw first in even rounds, last in odd ones) so that
// a steady drift of the host falls on both sides alike. Every ratio is taken
// within a round (paired_ratio), and the figures are its median over rounds.

// The raw round trip an RPC is compared with: an 8-byte MPI ping-pong's.
constexpr std::size_t kRpcRawBytes = 8;

bool op_selected(context& ctx, char const* name) {
    for (auto const& w : ctx.opts().list("ops"))
        if (w == name) return true;
    return false;
}

std::size_t index_of(std::vector<std::size_t> const& sizes, std::size_t bytes) {
    return static_cast<std::size_t>(std::find(sizes.begin(), sizes.end(), bytes) - sizes.begin());
}

// The RPC job of one round: a null call from rank 0 to a server thread on
// rank 1 over weft's mpi transport (pingpong::rpc_child); ns per call, and
// the scheduler it ran.
std::pair<double, std::string> rpc_job_round(long iters) {
    std::string const out = mpi::run(
        2, {"msg", "--mpi-child", "--child-transport", "mpi-rpc", "--rounds", "1", "--iters", std::to_string(iters)},
        "the RPC job over mpi");
    std::vector<std::string> const lines = mpi::lines_tagged(out, "rpc"), sched = mpi::lines_tagged(out, "rpcsched");
    int round = 0;
    double ns = 0;
    if (lines.size() != 1 || sched.size() != 1 || std::sscanf(lines.front().c_str(), "%d %lf", &round, &ns) != 2)
        die("rpc child: no 'rpc 0 NS' and 'rpcsched NAME' lines; its output: %s", out.c_str());
    return {ns, sched.front()};
}

// A per-round row: weft's figure beside the raw one of the same round.
void emit_round_row(context& ctx, char const* op_name, std::size_t bytes, int round, double weft_ns, double raw_ns,
                    char const* raw_what) {
    json_object rec = ctx.record();
    rec.add("op", op_name).add("transport", "mpi").add("bytes", static_cast<unsigned long long>(bytes));
    rec.add("round", round).add("latency_ns", weft_ns).add("raw_ns", raw_ns).add("paired_ratio_to", raw_what);
    rec.add("paired_ratio", raw_ns > 0 ? weft_ns / raw_ns : 0.0);
    ctx.emit(rec);
}

void run_mpi_paired(context& ctx) {
    auto const& o = ctx.opts();
    bool const pp = op_selected(ctx, "pingpong"), rpc = op_selected(ctx, "rpc");
    std::vector<std::size_t> const sizes = pingpong::parse_sizes("sizes", o.list("sizes"));
    int const rounds = static_cast<int>(o.integer("rounds"));
    long const iters = static_cast<long>(o.integer("iters"));
    // The raw job measures every size weft's does, and the RPC's raw round trip.
    std::vector<std::size_t> raw_sizes = pp ? sizes : std::vector<std::size_t>{};
    if (rpc && index_of(raw_sizes, kRpcRawBytes) == raw_sizes.size()) raw_sizes.insert(raw_sizes.begin(), kRpcRawBytes);
    std::vector<pingpong::point> raw(raw_sizes.size()), weft(pp ? sizes.size() : 0);
    for (std::size_t i = 0; i < raw.size(); ++i) raw[i].bytes = raw_sizes[i];
    for (std::size_t i = 0; i < weft.size(); ++i) weft[i].bytes = sizes[i];
    std::vector<double> rpc_ns;
    std::string rpc_sched;
    auto append = [](std::vector<pingpong::point>& to, std::vector<pingpong::point> const& from) {
        for (std::size_t i = 0; i < to.size(); ++i) to[i].half_rtt_ns.push_back(from[i].half_rtt_ns.front());
    };
    auto raw_job = [&] { append(raw, pingpong::measure("msg", raw_sizes, 1, iters)); };
    auto weft_job = [&] {
        if (pp)
            append(weft, pingpong::measure("msg", sizes, 1, iters, {"--child-transport", "mpi"},
                                           "the weft ping-pong over mpi"));
    };
    auto rpc_job = [&] {
        if (!rpc) return;
        auto [ns, sched] = rpc_job_round(iters);
        rpc_ns.push_back(ns);
        rpc_sched = sched;
    };
    for (int r = 0; r < rounds; ++r) {
        ctx.progress("MPI round %d of %d: raw MPI ping-pong%s%s, one mpiexec -n 2 job each (%s, %s), raw %s", r + 1,
                     rounds, pp ? ", weft ping-pong over mpi" : "", rpc ? ", RPC over mpi" : "",
                     mpi::launcher().c_str(), mpi::flavor().c_str(), r % 2 == 0 ? "first" : "last");
        if (r % 2 == 0) raw_job(), weft_job(), rpc_job();
        else rpc_job(), weft_job(), raw_job();
    }

    table t({"op", "transport", "bytes", "latency ns", "spread", "MB/s"});
    for (auto const& p : raw) emit_size_row(ctx, t, "pingpong", "raw_mpi", p.bytes, summarize(p.half_rtt_ns));
    if (pp) {
        auto const max_fit = static_cast<std::size_t>(o.integer("fit-max-bytes"));
        pingpong::fit const f = pingpong::fit_alpha_beta(raw, max_fit);
        json_object rec = ctx.record();
        rec.add("op", "pingpong").add("transport", "raw_mpi").add("fit", true).add("alpha_ns", f.alpha_ns);
        rec.add("beta_ns_per_byte", f.beta_ns_per_byte).add("fit_max_bytes", static_cast<unsigned long long>(max_fit));
        rec.add("fit_points", static_cast<unsigned long long>(f.points)).add("mpi", mpi::flavor());
        add_provenance(rec);
        ctx.emit(rec);
        ctx.print(t, "msg: raw MPI ping-pong, half round trip (median over rounds) and bandwidth");
        ctx.say("fit over sizes <= %zu B: latency = %.1f ns + %.4f ns/B * bytes (alpha, beta; %zu points)\n", max_fit,
                f.alpha_ns, f.beta_ns_per_byte, f.points);
    }

    // weft over mpi: each size's figures, its paired ratio to raw MPI (the
    // weft job's half round trip over the raw job's of the same round), and
    // the rounds' rows.
    table w({"op", "bytes", "latency ns", "spread", "MB/s", "x raw (paired)", "ratio range"});
    std::vector<double> ratio_8, bw_ratio_1m;
    for (auto const& p : weft) {
        auto const& base = raw[index_of(raw_sizes, p.bytes)].half_rtt_ns;
        summary const lat = summarize(p.half_rtt_ns);
        std::vector<double> ratios;
        for (int r = 0; r < rounds; ++r) ratios.push_back(p.half_rtt_ns[r] / base[r]);
        summary const ratio = summarize(ratios);
        double const bw = lat.median > 0 ? static_cast<double>(p.bytes) / lat.median * 1e3 : 0;
        json_object rec = ctx.record();
        rec.add("op", "pingpong").add("transport", "mpi").add("bytes", static_cast<unsigned long long>(p.bytes));
        rec.add("latency_ns", lat.median).add("latency_ns_spread", lat.spread).add("bandwidth_mb_s", bw);
        rec.add("rounds", static_cast<unsigned long long>(lat.n)).add("paired_ratio_to", "raw_mpi");
        rec.add_summary("paired_ratio", ratio);
        add_provenance(rec);
        ctx.emit(rec);
        for (int r = 0; r < rounds; ++r)
            emit_round_row(ctx, "pingpong", p.bytes, r, p.half_rtt_ns[r], base[r], "raw_mpi");
        w.add_row({"pingpong", fmt_sig(static_cast<double>(p.bytes)), fmt(lat.median, 1), fmt_pct(lat.spread),
                   fmt_sig(bw), fmt_ratio(ratio.median), fmt(ratio.min, 2) + "-" + fmt(ratio.max, 2)});
        if (p.bytes == 8) ratio_8 = ratios;
        if (p.bytes == std::size_t{1} << 20)
            for (double x : ratios) bw_ratio_1m.push_back(1.0 / x);
    }
    std::vector<double> rpc_ratios;
    if (rpc) {
        auto const& base = raw[index_of(raw_sizes, kRpcRawBytes)].half_rtt_ns;
        for (int r = 0; r < rounds; ++r) rpc_ratios.push_back(rpc_ns[r] / (2 * base[r]));
        summary const lat = summarize(rpc_ns), ratio = summarize(rpc_ratios);
        json_object rec = ctx.record();
        rec.add("op", "rpc").add("transport", "mpi").add("workers", 1).add("bytes", 0ULL).add("latency_ns", lat.median);
        rec.add("latency_ns_spread", lat.spread).add("latency_ns_min", lat.min).add("latency_ns_max", lat.max);
        rec.add("rounds", static_cast<unsigned long long>(lat.n)).add("sched", rpc_sched);
        rec.add("paired_ratio_to", "raw_mpi_roundtrip_8B").add_summary("paired_ratio", ratio);
        add_provenance(rec);
        ctx.emit(rec);
        for (int r = 0; r < rounds; ++r)
            emit_round_row(ctx, "rpc", 0, r, rpc_ns[r], 2 * base[r], "raw_mpi_roundtrip_8B");
        w.add_row({"rpc (null call)", "0", fmt(lat.median, 1), fmt_pct(lat.spread), "-", fmt_ratio(ratio.median),
                   fmt(ratio.min, 2) + "-" + fmt(ratio.max, 2)});
    }
    ctx.print(w, "msg: weft over its mpi transport against raw MPI run in the same rounds (ping-pong: half round "
                 "trip over raw's; rpc: the call over raw's 8 B round trip)");

    table tt({"target", "what", "median", "range", "bound", ""}, "llrrrl");
    if (!ratio_8.empty())
        emit_target(ctx, tt, {"pingpong_8B_over_raw_mpi", "8 B half round trip / raw", 2.0, false}, summarize(ratio_8));
    if (!bw_ratio_1m.empty())
        emit_target(ctx, tt, {"bandwidth_1MiB_over_raw_mpi", "1 MiB bandwidth / raw", 0.9, true},
                    summarize(bw_ratio_1m));
    if (!rpc_ratios.empty())
        emit_target(ctx, tt, {"rpc_over_raw_roundtrip", "null RPC / raw 8 B round trip", 3.0, false},
                    summarize(rpc_ratios));
    if (tt.rows() > 0) ctx.print(tt, "msg: targets, medians over rounds of the paired ratios");
    if (pp && (ratio_8.empty() || bw_ratio_1m.empty()))
        ctx.say("(the 8 B and 1 MiB targets need 8 and 1M in --sizes)\n");
}

void run_lookup(context& ctx) {
    auto const& o = ctx.opts();
    int const rounds = static_cast<int>(o.integer("rounds"));
    long const iters = static_cast<long>(o.integer("iters"));
    char const* name = "LocalSum1";
    table t({"op", "transport", "workers", "bytes", "median ns", "min ns", "spread"}, "llrrrrr");
    for (int workers : {1, 2}) {
        with_inproc_job(ctx, workers, 2, [&](std::string const& policy) {
            weft_port_id_t p{};
            check(weft_net_port_create(&p, 1, 64), "weft_net_port_create");
            check(weft_net_name_register(name, p), "weft_net_name_register");
            std::vector<double> ns;
            for (int r = 0; r < rounds; ++r) {
                ns.push_back(on_node1_round(iters, [&] {
                    weft_port_id_t q{};
                    check(weft_net_name_lookup(name, &q, 0), "weft_net_name_lookup");
                }));
            }
            check(weft_net_port_destroy(p), "weft_net_port_destroy");
            emit_call_row(ctx, t, "lookup", "inproc", workers, std::strlen(name), ns, policy);
        });
    }
    ctx.print(t, "msg: name lookup from node 1 (an RPC to the naming server on node 0, inproc)");
}

bool always_built() { return true; }
std::string never_missing() { return {}; }

std::vector<op> const& ops() {
    static std::vector<op> const all = {
        {{"port_roundtrip"}, "inproc", always_built, never_missing, run_port_roundtrip},
        {{"rpc"}, "inproc", always_built, never_missing, run_rpc},
        {{"lookup"}, "inproc", always_built, never_missing, run_lookup},
        {{"pingpong", "rpc"}, "raw_mpi and mpi", mpi::built, mpi::not_built_reason, run_mpi_paired},
        {{"pingpong"}, "inproc", always_built, never_missing, run_weft_inproc_pingpong},
    };
    return all;
}

std::vector<std::string> op_names() {
    std::vector<std::string> names;
    for (op const& o : ops())
        for (auto const& n : o.names)
            if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    return names;
}

std::string joined_op_names() {
    std::string s;
    for (auto const& n : op_names()) s += (s.empty() ? "" : ",") + n;
    return s;
}

int run(context& ctx) {
    auto const& o = ctx.opts();
    if (o.flag("mpi-child") && o.string("child-transport") == "mpi-rpc")
        return pingpong::rpc_child(static_cast<int>(o.integer("rounds")), o.integer("iters"));
    if (o.flag("mpi-child") && o.string("child-transport") == "mpi")
        return pingpong::weft_child(pingpong::parse_sizes("sizes", o.list("sizes")),
                                    static_cast<int>(o.integer("rounds")), o.integer("iters"));
    if (o.flag("mpi-child"))
        return pingpong::child(pingpong::parse_sizes("sizes", o.list("sizes")), static_cast<int>(o.integer("rounds")),
                               o.integer("iters"));
    (void)pingpong::parse_sizes("sizes", o.list("sizes"));  // a bad --sizes is refused before anything runs
    std::vector<std::string> const wanted = o.list("ops");
    for (op const& p : ops()) {
        bool selected = false;
        for (auto const& w : wanted)
            selected = selected || std::find(p.names.begin(), p.names.end(), w) != p.names.end();
        if (!selected) continue;
        if (!p.built()) {
            std::string names;
            for (auto const& n : p.names) names += (names.empty() ? "" : ", ") + n;
            std::fprintf(stderr, "weft-bench msg: %s over %s: not run: %s\n", names.c_str(), p.transport,
                         p.not_built().c_str());
            continue;
        }
        p.run(ctx);
    }
    return 0;
}

registrar const reg{experiment{
    .name = "msg",
    .description = "message passing: same-node port round trip; ping-pong over raw MPI, weft's mpi and inproc, 8 B to 1 MiB",
    .details = "port_roundtrip over inproc: two weft threads on one worker, one port each on the same node; a\n"
               "round trip is a weft_net_send to the peer's port and a weft_net_recv on its own, where the peer\n"
               "waits blocked; latency_ns is the whole round trip (median over --rounds rounds of --iters).\n"
               "Each other operation of --ops between two nodes, for every size of --sizes. pingpong over raw_mpi: two\n"
               "ranks of an MPI job of this executable (mpiexec -n 2 weft-bench msg --mpi-child), MPI_Send and\n"
               "MPI_Recv back and forth; a round times --iters round trips (fewer above 4 KiB, halved per\n"
               "doubling) after a tenth as many unrecorded ones. Reported per size: latency_ns, the median over\n"
               "--rounds rounds of the half round trip, with its spread; bandwidth_mb_s = bytes / latency\n"
               "(10^6 B/s). Then a fit row: latency = alpha + beta * bytes by least squares over the sizes up to\n"
               "--fit-max-bytes. pingpong over mpi: the same between weft threads on two ranks, weft_net_send\n"
               "and weft_net_recv over WEFT_NET=mpi; rpc over mpi: a null call from rank 0 to a server on rank 1.\n"
               "The MPI jobs are paired: every round runs one job of each (raw first in even rounds, last in odd\n"
               "ones), and weft's rows carry paired_ratio, the median over rounds of weft / raw within a round,\n"
               "then the targets' rows (8 B <= 2x raw, 1 MiB bandwidth >= 0.9x raw, RPC <= 3x raw's 8 B round\n"
               "trip). pingpong over inproc: the same between two nodes of this process on one worker. Without MPI\n"
               "built in, the MPI operations say so and emit no rows.\n"
               "rpc over inproc: weft::rpc::call from node 1 to a one-thread server on node 0, null (bytes 0) and\n"
               "with an 8-byte argument and result (bytes 8); lookup: weft_net_name_lookup from node 1; both at 1\n"
               "and 2 workers, latency_ns the whole call (median over --rounds rounds of --iters). See docs/bench.md.",
    .options = {{.name = "ops", .kind = opt_kind::list, .metavar = "LIST", .default_value = joined_op_names(),
                 .help = "operations to measure", .choices = op_names()},
                {.name = "sizes", .kind = opt_kind::list, .metavar = "LIST",
                 .default_value = "8,32,128,512,2K,8K,32K,128K,512K,1M",
                 .help = "message sizes in bytes (K, M suffixes: x1024)"},
                {.name = "fit-max-bytes", .kind = opt_kind::size, .metavar = "B", .default_value = "64K",
                 .help = "the alpha/beta fit uses the sizes up to this", .min = 1, .max = 1 << 30},
                opt_iters(20000, "round trips per round up to 4 KiB (halved per doubling above)"),
                {.name = "mpi-child", .kind = opt_kind::flag,
                 .help = "internal: a rank of the ping-pong job (msg starts itself this way under mpiexec)"},
                {.name = "child-transport", .kind = opt_kind::string, .metavar = "T", .default_value = "raw_mpi",
                 .help = "internal: what the ping-pong child measures", .choices = {"raw_mpi", "mpi", "mpi-rpc"}},
                opt_rounds(5), opt_sched()},
    .run = run,
    .in_demo = true,
    .demo_args = {"--iters", "5000", "--rounds", "3"},
    .demo_order = 60,
}};

}  // namespace
}  // namespace weft::bench::msg
