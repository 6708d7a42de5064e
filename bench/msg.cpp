// weft-bench msg — message passing between weft threads (src/net,
// docs/design/net.md).
//
//   port_roundtrip   ns per round trip of a small message between two weft
//                    threads on one worker, each blocked in weft_net_recv on
//                    its own port of the same node: a send, a wake-up and a
//                    switch each way (the hand-off path: the sender copies
//                    straight into the waiting receiver's buffer).
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "harness.hpp"
#include "weft/weft.h"

namespace weft::bench::msg {
namespace {

struct pingpong {
    weft_port_id_t mine;
    weft_port_id_t peer;
    long iters;
};

void* echo(void* a) {
    auto* p = static_cast<pingpong*>(a);
    std::int64_t v = 0;
    for (long i = 0; i < p->iters; ++i) {
        check(weft_net_recv(p->mine, &v, sizeof v, nullptr, WEFT_NET_FOREVER), "weft_net_recv");
        check(weft_net_send(p->peer, 0, &v, sizeof v), "weft_net_send");
    }
    return nullptr;
}

// One timed round: iters round trips; ns per round trip.
double roundtrip_round(long iters) {
    weft_port_id_t a{}, b{};
    check(weft_net_port_create(&a, 4, 256), "weft_net_port_create");
    check(weft_net_port_create(&b, 4, 256), "weft_net_port_create");
    pingpong other{b, a, iters};
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

int run(context& ctx) {
    int rounds = int(ctx.opts().integer("rounds"));
    long iters = long(ctx.opts().integer("iters"));
    std::string sched = ctx.opts().string("sched");
    weft_config_t cfg{};
    cfg.workers = 1;
    cfg.sched = sched.empty() ? nullptr : sched.c_str();
    cfg.adapt = "off";
    check(weft_init(&cfg), "weft_init");
    weft_net_config_t ncfg{};
    ncfg.nodes = 1;
    ncfg.transport = "inproc";
    check(weft_net_init(&ncfg), "weft_net_init");
    std::string policy = weft_sched_name();
    std::vector<double> samples;
    for (int r = 0; r < rounds; ++r) samples.push_back(roundtrip_round(iters));
    check(weft_net_finalize(), "weft_net_finalize");
    check(weft_finalize(), "weft_finalize");

    summary const s = summarize(samples);
    json_object rec = ctx.record();
    rec.add("op", "port_roundtrip").add("ns", s.median).add("min_ns", s.min).add("max_ns", s.max)
        .add("spread", s.spread).add("rounds", rounds).add("iters", iters).add("sched", policy).add("workers", 1)
        .add("bytes", 8);
    add_provenance(rec);
    ctx.emit(rec);
    table t({"op", "median ns", "min ns", "max ns", "spread"}, "lrrrr");
    t.add_row({"port_roundtrip", fmt(s.median, 1), fmt(s.min, 1), fmt(s.max, 1), fmt_pct(s.spread)});
    ctx.print(t, "msg: round trip of an 8-byte message between two weft threads on one worker (same node)");
    return 0;
}

registrar const reg{experiment{
    .name = "msg",
    .description = "message passing: same-node port round trip between two weft threads on one worker",
    .details = "port_roundtrip: two weft threads on one worker, one port each on the same node (inproc); each\n"
               "round trip is a weft_net_send to the peer's port and a weft_net_recv on its own, where the peer\n"
               "waits blocked. Reported: ns per round trip, median over --rounds rounds of --iters round trips.\n"
               "See docs/design/net.md.",
    .options = {opt_rounds(7), opt_iters(200000), opt_sched()},
    .run = run,
}};

}  // namespace
}  // namespace weft::bench::msg
