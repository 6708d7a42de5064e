// weft-bench io: a thread per connection that costs nothing (issue: system
// calls that block only the calling thread; docs/design/syscalls.md).
//
// An echo server over loopback (127.0.0.1 only) written four ways
// (io_echo.hpp): a weft thread per connection with plain blocking calls
// (weft/io.h), a glibc thread per connection, an event loop on Boost.Asio, and
// a goroutine per connection in Go when Go is installed. A client in a
// process of its own opens N connections and sends bounded requests, every
// reply checked. Rounds interleave the servers; per server and N the medians
// over rounds of requests per second, p50/p99 latency and the server's
// resident memory, and per round the paired ratios the targets bound. And the
// scenario compute_beside_blocked: a compute-bound weft thread timed alone and
// beside --blocked weft threads blocked in weft_read.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <weft/io.h>
#include <weft/weft.h>

#include "harness.hpp"
#include "io_echo.hpp"
#include "io_placement.hpp"

namespace weft::bench::io {
namespace {

void raise_fd_limit() {
    rlimit r{};
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
        r.rlim_cur = r.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &r);
    }
}

// Busy work whose result the compiler cannot drop.
std::uint64_t compute(std::uint64_t iters) {
    std::uint64_t x = 88172645463325252ull;
    for (std::uint64_t i = 0; i < iters; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

double time_compute_thread(std::uint64_t iters) {
    struct arg_t {
        std::uint64_t iters, out;
    } a{iters, 0};
    std::uint64_t t0 = now_ns();
    weft_thread_t t;
    check(weft_thread_create(
              &t, nullptr,
              [](void* p) -> void* {
                  auto* q = static_cast<arg_t*>(p);
                  q->out = compute(q->iters);
                  return nullptr;
              },
              &a),
          "weft_thread_create");
    weft_thread_join(t, nullptr);
    if (a.out == 0) die("io: compute returned 0");
    return double(now_ns() - t0);
}

// The compute-bound thread alone, then beside `blocked` weft threads blocked
// in weft_read (on pipes nobody writes until the end): speed ratio = alone / beside.
std::vector<double> compute_beside_blocked(int workers, int blocked, std::uint64_t iters, int rounds) {
    weft_config_t cfg{};
    cfg.workers = workers;
    check(weft_init(&cfg), "weft_init");
    std::vector<double> ratios;
    for (int r = 0; r < rounds; ++r) {
        double alone = time_compute_thread(iters);
        std::vector<int> fds(2 * blocked);
        std::vector<weft_thread_t> ts(blocked);
        for (int i = 0; i < blocked; ++i) {
            if (pipe2(&fds[2 * i], O_CLOEXEC) != 0) die("io: pipe2 failed: %s", std::strerror(errno));
            check(weft_thread_create(
                      &ts[i], nullptr,
                      [](void* p) -> void* {
                          char c;
                          return weft_read(static_cast<int>(reinterpret_cast<std::intptr_t>(p)), &c, 1) == 1 ? nullptr
                                                                                                             : p;
                      },
                      reinterpret_cast<void*>(static_cast<std::intptr_t>(fds[2 * i]))),
                  "weft_thread_create");
        }
        for (int i = 0; i < 16; ++i) weft_thread_yield();  // let the readers reach their reads
        double beside = time_compute_thread(iters);
        for (int i = 0; i < blocked; ++i)
            if (weft_write(fds[2 * i + 1], "x", 1) != 1) die("io: releasing a reader failed");
        for (int i = 0; i < blocked; ++i) {
            void* res = nullptr;
            weft_thread_join(ts[i], &res);
            if (res != nullptr) die("io: a blocked reader did not get its byte");
            close(fds[2 * i]);
            close(fds[2 * i + 1]);
        }
        ratios.push_back(alone / beside);
    }
    check(weft_finalize(), "weft_finalize");
    return ratios;
}

struct figures {
    double rps = 0, p50 = 0, p99 = 0, rss = 0;
    // The client's CPU time over the timed rounds' wall time: near 1, the
    // client (one thread) is what limits the rate, not the server.
    double client_cpu = 0;
    // The server process's CPU time per request (us): what the server
    // spends, which a loaded machine's waits do not inflate as they do the
    // rate.
    double server_cpu_us = 0;
};

figures measure(const server_run& run) {
    std::vector<double> sorted = run.client.latencies_us;
    std::sort(sorted.begin(), sorted.end());
    figures f;
    if (!sorted.empty()) {
        f.p50 = sorted[sorted.size() / 2];
        f.p99 = sorted[std::min(sorted.size() - 1, sorted.size() * 99 / 100)];
    }
    f.rps = run.client.seconds > 0 ? double(sorted.size()) / run.client.seconds : 0;
    f.rss = double(std::max(0L, run.client.rss_open - run.rss_before));
    f.client_cpu = run.client.seconds > 0 ? run.client.cpu_seconds / run.client.seconds : 0;
    f.server_cpu_us = sorted.empty() ? 0 : run.client.server_cpu_seconds * 1e6 / double(sorted.size());
    return f;
}

server_run run_server(const std::string& server, int workers, int n, int requests, std::size_t size,
                      const placement& where) {
    placement::scope on_cpus(where);
    if (server == "weft") return run_weft(workers, n, requests, size);
    if (server == "glibc") return run_glibc(n, requests, size);
    if (server == "event_loop") return run_event_loop(workers, n, requests, size);
    return run_go(workers, n, requests, size);
}

// {"experiment":"io","target":NAME,"connections":N,"value":..,"bound":..,"met":..}:
// value is the median over rounds of a paired ratio.
void emit_target(context& ctx, table& t, const char* name, int n, const std::vector<double>& per_round, double bound,
                 bool at_least, const char* what) {
    if (per_round.empty()) return;
    json_object fields;
    if (n > 0) fields.add("connections", n);
    weft::bench::emit_target(ctx, t, {name, what, bound, at_least}, summarize(per_round), fields);
}

int run(context& ctx) {
    const auto& o = ctx.opts();
    raise_fd_limit();
    const int requests = static_cast<int>(o.integer("requests"));
    const auto size = static_cast<std::size_t>(o.integer("size"));
    const int workers = static_cast<int>(o.integer("workers"));
    const int rounds = static_cast<int>(o.integer("rounds"));
    std::vector<std::string> servers;
    for (const std::string& s : o.list("servers")) {
        std::string why = s == "event_loop" ? event_loop_unavailable() : s == "go" ? go_unavailable() : "";
        if (why.empty())
            servers.push_back(s);
        else
            ctx.say("io: the %s server is skipped: %s\n", s.c_str(), why.c_str());
    }
    std::vector<int> counts;
    for (const std::string& text : o.list("connections")) {
        int n = std::atoi(text.c_str());
        if (n <= 0) die("io: --connections takes positive counts, got '%s'", text.c_str());
        counts.push_back(n);
    }
    placement const where(o.flag("pin-client") ? workers : -1);
    if (o.flag("pin-client") && !where.pinned())
        ctx.say("io: --pin-client needs --workers + 1 CPUs: the client and the server share them\n");
    table t({"server", "connections", "requests/s", "p50 us", "p99 us", "rss MiB", "server CPU us/req", "client CPU"},
            "ll");
    table tt({"target", "what", "median", "range", "bound", ""}, "llrrrl");
    for (int n : counts) {
        std::map<std::string, std::vector<figures>> per_server;  // one per round, rounds interleaved
        for (int r = 0; r < rounds; ++r)
            for (const std::string& s : servers) {
                ctx.progress("%s server, %d connections, round %d/%d", s.c_str(), n, r + 1, rounds);
                per_server[s].push_back(measure(run_server(s, workers, n, requests, size, where)));
            }
        for (const std::string& s : servers) {
            const auto& fs = per_server[s];
            auto med = [&](double figures::*m) {
                std::vector<double> v;
                for (const figures& f : fs) v.push_back(f.*m);
                return summarize(v).median;
            };
            double rps = med(&figures::rps), p50 = med(&figures::p50), p99 = med(&figures::p99);
            double rss = med(&figures::rss), client_cpu = med(&figures::client_cpu);
            double server_cpu = med(&figures::server_cpu_us);
            json_object rec = ctx.record();
            rec.add("server", s).add("connections", n).add("requests_per_s", rps).add("p50_us", p50);
            rec.add("p99_us", p99)
                .add("rss_bytes", static_cast<long>(rss))
                .add("server_cpu_us_per_request", server_cpu);
            rec.add("client_cpu_share", client_cpu).add("client_pinned", where.pinned());
            ctx.emit(rec);
            t.add_row({s, std::to_string(n), fmt_sig(rps), fmt_sig(p50), fmt_sig(p99), fmt(rss / 1048576.0, 1),
                       fmt_sig(server_cpu), fmt(client_cpu, 2)});
        }
        // Paired ratios, a round's weft run against the same round's peer.
        auto ratios = [&](const char* peer, double figures::*m) {
            std::vector<double> v;
            if (per_server.count("weft") == 0 || per_server.count(peer) == 0) return v;
            const auto &w = per_server["weft"], &p = per_server[peer];
            for (std::size_t i = 0; i < w.size() && i < p.size(); ++i)
                if (p[i].*m > 0) v.push_back(w[i].*m / p[i].*m);
            return v;
        };
        if (n == 1000)
            emit_target(ctx, tt, "throughput_vs_event_loop", n, ratios("event_loop", &figures::rps), 0.90, true,
                        "weft's requests/s / the event loop's, 1,000 connections");
        if (n == 10000)
            emit_target(ctx, tt, "throughput_vs_glibc", n, ratios("glibc", &figures::rps), 2.0, true,
                        "weft's requests/s / glibc threads', 10,000 connections");
        if (n == 1000 || n == 10000)
            emit_target(ctx, tt, "p99_vs_event_loop", n, ratios("event_loop", &figures::p99), 1.25, false,
                        n == 1000 ? "weft's p99 / the event loop's, 1,000 connections"
                                  : "weft's p99 / the event loop's, 10,000 connections");
    }
    ctx.print(t,
              "echo over loopback: a client process (epoll), one request outstanding per connection; "
              "medians over rounds");
    const int blocked = static_cast<int>(o.integer("blocked"));
    if (blocked > 0) {
        ctx.progress("compute beside %d blocked weft threads", blocked);
        std::vector<double> per_round =
            compute_beside_blocked(workers, blocked, static_cast<std::uint64_t>(o.integer("compute")), rounds);
        double ratio = summarize(per_round).median;
        json_object rec = ctx.record();
        rec.add("scenario", "compute_beside_blocked").add("blocked_threads", blocked).add("speed_ratio", ratio);
        ctx.emit(rec);
        emit_target(ctx, tt, "compute_beside_blocked", 0, per_round, 0.90, true,
                    "compute speed beside blocked weft threads / alone");
    }
    ctx.print(tt, "targets (issue: system calls that block only the calling thread)");
    return 0;
}

registrar const reg{experiment{
    .name = "io",
    .description = "a thread per connection: an echo server over loopback, weft threads vs glibc threads, an "
                   "event loop (Boost.Asio) and goroutines; compute beside threads blocked in read",
    .details = "Servers (--servers): weft, a weft thread per connection using weft_accept/weft_recv/weft_send\n"
               "(blocking calls that block only the calling thread); glibc, a kernel thread per connection with\n"
               "the C library's calls; event_loop, Boost.Asio's io_context on --workers threads; go, a goroutine\n"
               "per connection (bench/io_echo.go, built with `go` from PATH or /usr/local/go/bin at run time,\n"
               "GOMAXPROCS=--workers; skipped with the reason when Go is missing). The client, a process of its\n"
               "own, opens --connections N connections to 127.0.0.1 in batches of 500, each batch's first\n"
               "request served before the next (untimed), then --requests timed rounds: one request of --size\n"
               "bytes on every connection, every reply checked before the next round. --rounds rounds, the\n"
               "servers interleaved in each. Reported per server and N, medians over rounds: requests_per_s,\n"
               "p50_us, p99_us (request to reply), rss_bytes (the server's resident memory with every connection\n"
               "open, less before it started). Targets: paired ratios per round against the event loop and\n"
               "glibc, medians. Then compute_beside_blocked: a compute-bound weft thread timed alone and beside\n"
               "--blocked weft threads blocked in weft_read (speed_ratio = alone / beside, median of --rounds).\n"
               "See docs/bench.md.",
    .options = {{.name = "connections",
                 .kind = opt_kind::list,
                 .metavar = "N,...",
                 .default_value = "100,1000,10000",
                 .help = "connection counts"},
                {.name = "servers",
                 .kind = opt_kind::list,
                 .metavar = "S,...",
                 .default_value = "weft,glibc,event_loop,go",
                 .help = "servers to run",
                 .choices = {"weft", "glibc", "event_loop", "go"}},
                {.name = "requests",
                 .kind = opt_kind::integer,
                 .metavar = "N",
                 .default_value = "20",
                 .help = "requests per connection",
                 .min = 1,
                 .max = 1'000'000},
                {.name = "size",
                 .kind = opt_kind::integer,
                 .metavar = "BYTES",
                 .default_value = "64",
                 .help = "bytes per request",
                 .min = 16,
                 .max = 65536},
                {.name = "blocked",
                 .kind = opt_kind::integer,
                 .metavar = "N",
                 .default_value = "1000",
                 .help = "weft threads blocked in read beside the compute thread (0: skip)",
                 .min = 0,
                 .max = 100'000},
                {.name = "compute",
                 .kind = opt_kind::integer,
                 .metavar = "ITERS",
                 .default_value = "200000000",
                 .help = "iterations of the compute thread",
                 .min = 1,
                 .max = 1e12},
                {.name = "pin-client",
                 .kind = opt_kind::flag,
                 .help = "the client on a CPU of its own, every server on --workers others (needs --workers + 1 "
                         "CPUs)"},
                opt_workers(2),
                opt_rounds(3)},
    .run = run,
    .in_demo = true,
    // Without go: its first `go build` compiles the standard library (about 40 s cold).
    .demo_args = {"--connections", "100,1000", "--servers", "weft,glibc,event_loop", "--requests", "5", "--rounds", "1",
                  "--blocked", "1000", "--compute", "100000000"},
    .demo_order = 55,
}};

}  // namespace
}  // namespace weft::bench::io
