// weft-bench msg: message passing between two nodes, one row per operation,
// transport and message size.
//
// An operation is an entry of `ops()` below: a name (what --ops selects), the
// transport it runs over, whether this build has it, and a function that
// measures it and emits its rows. Its rows all have the shape
//     {"experiment":"msg","op":OP,"transport":T,"bytes":B,"latency_ns":..,"bandwidth_mb_s":..}
// with latency the median over rounds of the half round trip and bandwidth
// bytes / latency (MB = 10^6 bytes), so that operations over different
// transports line up by size. Operations:
//   pingpong (raw_mpi)  MPI_Send / MPI_Recv between two ranks of an MPI job of
//                       this executable (pingpong.hpp): the baseline that any
//                       weft transport over MPI is measured against. After its
//                       size rows, a fit row: alpha and beta of
//                       latency = alpha + beta * bytes over the sizes up to
//                       --fit-max-bytes (the costs the PDE model uses).
//   pingpong (mpi)      the same ping-pong between weft threads on two ranks
//                       over weft's mpi transport (weft_net_send/recv, one
//                       worker per rank), in an MPI job of its own started
//                       right after the raw one (pingpong_weft.cpp).
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

struct op {
    char const* name;
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

void run_raw_mpi_pingpong(context& ctx) {
    auto const& o = ctx.opts();
    std::vector<std::size_t> const sizes = pingpong::parse_sizes("sizes", o.list("sizes"));
    int const rounds = static_cast<int>(o.integer("rounds"));
    ctx.progress("raw MPI ping-pong: mpiexec -n 2 (%s, %s), %zu sizes x %d rounds", mpi::launcher().c_str(),
                 mpi::flavor().c_str(), sizes.size(), rounds);
    std::vector<pingpong::point> const pts = pingpong::measure("msg", sizes, rounds, o.integer("iters"));
    table t({"op", "transport", "bytes", "latency ns", "spread", "MB/s"});
    for (auto const& p : pts) emit_size_row(ctx, t, "pingpong", "raw_mpi", p.bytes, summarize(p.half_rtt_ns));
    auto const max_fit = static_cast<std::size_t>(o.integer("fit-max-bytes"));
    pingpong::fit const f = pingpong::fit_alpha_beta(pts, max_fit);
    json_object rec = ctx.record();
    rec.add("op", "pingpong").add("transport", "raw_mpi").add("fit", true).add("alpha_ns", f.alpha_ns);
    rec.add("beta_ns_per_byte", f.beta_ns_per_byte).add("fit_max_bytes", static_cast<unsigned long long>(max_fit));
    rec.add("fit_points", static_cast<unsigned long long>(f.points)).add("mpi", mpi::flavor());
    add_provenance(rec);
    ctx.emit(rec);
    ctx.print(t, "msg: half round trip (median over rounds) and bandwidth");
    ctx.say("fit over sizes <= %zu B: latency = %.1f ns + %.4f ns/B * bytes (alpha, beta; %zu points)\n", max_fit,
            f.alpha_ns, f.beta_ns_per_byte, f.points);
}

void emit_points(context& ctx, char const* transport, std::vector<pingpong::point> const& pts, char const* title) {
    table t({"op", "transport", "bytes", "latency ns", "spread", "MB/s"});
    for (auto const& p : pts) emit_size_row(ctx, t, "pingpong", transport, p.bytes, summarize(p.half_rtt_ns));
    ctx.print(t, title);
}

void run_weft_mpi_pingpong(context& ctx) {
    auto const& o = ctx.opts();
    std::vector<std::size_t> const sizes = pingpong::parse_sizes("sizes", o.list("sizes"));
    int const rounds = static_cast<int>(o.integer("rounds"));
    ctx.progress("weft ping-pong over WEFT_NET=mpi: mpiexec -n 2, %zu sizes x %d rounds", sizes.size(), rounds);
    std::vector<pingpong::point> const pts = pingpong::measure(
        "msg", sizes, rounds, o.integer("iters"), {"--child-transport", "mpi"}, "the weft ping-pong over mpi");
    emit_points(ctx, "mpi", pts, "msg: weft threads on two ranks (transport mpi): half round trip and bandwidth");
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

// A null RPC from rank 0 to a server thread on rank 1 over weft's mpi
// transport, in an MPI job of its own (pingpong::rpc_child).
void run_weft_mpi_rpc(context& ctx) {
    auto const& o = ctx.opts();
    int const rounds = static_cast<int>(o.integer("rounds"));
    long const iters = static_cast<long>(o.integer("iters"));
    ctx.progress("rpc over WEFT_NET=mpi: mpiexec -n 2, %d rounds of %ld calls", rounds, iters);
    std::string const out =
        mpi::run(2, {"msg", "--mpi-child", "--child-transport", "mpi-rpc", "--rounds", std::to_string(rounds),
                     "--iters", std::to_string(iters)},
                 "the RPC job over mpi");
    std::vector<double> ns;
    for (std::string const& line : mpi::lines_tagged(out, "rpc")) {
        int round = 0;
        double v = 0;
        if (std::sscanf(line.c_str(), "%d %lf", &round, &v) != 2) die("rpc child: bad line '%s'", line.c_str());
        ns.push_back(v);
    }
    std::vector<std::string> const sched = mpi::lines_tagged(out, "rpcsched");
    if (static_cast<int>(ns.size()) != rounds || sched.size() != 1)
        die("rpc child: %zu of %d rounds reported; its output: %s", ns.size(), rounds, out.c_str());
    table t({"op", "transport", "workers", "bytes", "median ns", "min ns", "spread"}, "llrrrrr");
    emit_call_row(ctx, t, "rpc", "mpi", 1, 0, ns, sched.front());
    ctx.print(t, "msg: RPC round trip over weft's mpi transport, rank 0 calling a server thread on rank 1");
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
        {"port_roundtrip", "inproc", always_built, never_missing, run_port_roundtrip},
        {"rpc", "inproc", always_built, never_missing, run_rpc},
        {"rpc", "mpi", mpi::built, mpi::not_built_reason, run_weft_mpi_rpc},
        {"lookup", "inproc", always_built, never_missing, run_lookup},
        {"pingpong", "raw_mpi", mpi::built, mpi::not_built_reason, run_raw_mpi_pingpong},
        {"pingpong", "mpi", mpi::built, mpi::not_built_reason, run_weft_mpi_pingpong},
        {"pingpong", "inproc", always_built, never_missing, run_weft_inproc_pingpong},
    };
    return all;
}

std::vector<std::string> op_names() {
    std::vector<std::string> names;
    for (op const& o : ops())
        if (std::find(names.begin(), names.end(), o.name) == names.end()) names.emplace_back(o.name);
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
        for (auto const& w : wanted) selected = selected || w == p.name;
        if (!selected) continue;
        if (!p.built()) {
            std::fprintf(stderr, "weft-bench msg: %s over %s: not run: %s\n", p.name, p.transport,
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
               "and weft_net_recv over WEFT_NET=mpi (a second job, right after the raw one); pingpong over\n"
               "inproc: the same between two nodes of this process on one worker. Without MPI built in, the MPI\n"
               "operations say so and emit no rows.\n"
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
