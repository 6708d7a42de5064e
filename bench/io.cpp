// weft-bench io: a thread per connection that costs nothing (issue: system
// calls that block only the calling thread; docs/design/syscalls.md).
//
// An echo server over loopback (127.0.0.1 only) written two ways: a weft
// thread per connection with plain blocking calls (weft/io.h), and a glibc
// thread per connection. A client in the same process, on one kernel thread
// outside weft with its own epoll loop, opens --connections N connections and
// sends --requests requests of --size bytes on each, one outstanding per
// connection, every reply checked. Per server and N: requests per second,
// p50/p99 latency, and the growth of the process's resident memory while the
// connections are open. And the scenario compute_beside_blocked: a
// compute-bound weft thread timed alone and beside --blocked weft threads
// blocked in weft_read.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <weft/io.h>
#include <weft/weft.h>

#include "harness.hpp"

namespace weft::bench::io {
namespace {

long rss_bytes() {
    long pages = 0, resident = 0;
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    if (f == nullptr) return 0;
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

void raise_fd_limit() {
    rlimit r{};
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
        r.rlim_cur = r.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &r);
    }
}

int listen_loopback(sockaddr_in* addr) {
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (ls < 0) die("io: socket failed: %s", std::strerror(errno));
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    *addr = sockaddr_in{};
    addr->sin_family = AF_INET;
    addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof *addr;
    if (bind(ls, reinterpret_cast<sockaddr*>(addr), sizeof *addr) != 0 ||
        getsockname(ls, reinterpret_cast<sockaddr*>(addr), &len) != 0 || listen(ls, 4096) != 0)
        die("io: cannot listen on 127.0.0.1: %s", std::strerror(errno));
    return ls;
}

// The echo loop of one connection, with the given calls: requests of `size`
// bytes until EOF.
template <class Recv, class Send>
void echo(int c, std::size_t size, Recv recv_fn, Send send_fn) {
    std::vector<char> buf(size);
    for (;;) {
        ssize_t n = recv_fn(c, buf.data(), size, MSG_WAITALL);
        if (n <= 0) break;
        if (send_fn(c, buf.data(), static_cast<std::size_t>(n), 0) != n) break;
    }
}

struct client_result {
    double seconds = 0;
    std::vector<double> latencies_us;
    long rss_open = 0;  // resident bytes with every connection open and served once
    std::string error;
};

// The client: n connections, `requests` rounds of one request each, on this
// kernel thread with a non-blocking epoll loop.
client_result run_client(const sockaddr_in& addr, int n, int requests, std::size_t size) {
    client_result r;
    std::vector<int> socks(n, -1);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    for (int i = 0; i < n; ++i) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0 || connect(s, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
            r.error = std::string("connect failed: ") + std::strerror(errno);
            break;
        }
        int one = 1;
        setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        fcntl(s, F_SETFL, O_NONBLOCK);  // the client's own sockets
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u32 = static_cast<std::uint32_t>(i);
        epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);
        socks[i] = s;
    }
    std::vector<std::uint64_t> sent_at(n);
    std::vector<std::size_t> got(n);
    std::vector<char> req(size), rep(size);
    std::uint64_t start = now_ns();
    for (int round = 0; round < requests && r.error.empty(); ++round) {
        for (int i = 0; i < n; ++i) {
            std::snprintf(req.data(), size, "%d/%d", i, round);
            sent_at[i] = now_ns();
            got[i] = 0;
            if (send(socks[i], req.data(), size, 0) != static_cast<ssize_t>(size)) {
                r.error = "a request did not fit in the socket buffer";
                break;
            }
        }
        int pending = n;
        epoll_event evs[256];
        while (pending > 0 && r.error.empty()) {
            int k = epoll_wait(ep, evs, 256, 10'000);
            if (k <= 0) {
                r.error = "no reply within 10 s";
                break;
            }
            for (int j = 0; j < k; ++j) {
                int i = static_cast<int>(evs[j].data.u32);
                for (;;) {
                    ssize_t m = recv(socks[i], rep.data() + got[i], size - got[i], 0);
                    if (m <= 0) break;
                    got[i] += static_cast<std::size_t>(m);
                    if (got[i] == size) {
                        std::snprintf(req.data(), size, "%d/%d", i, round);
                        if (std::strcmp(req.data(), rep.data()) != 0) r.error = "a reply differs from its request";
                        r.latencies_us.push_back(double(now_ns() - sent_at[i]) / 1e3);
                        --pending;
                        break;
                    }
                }
            }
        }
        if (round == 0) r.rss_open = rss_bytes();
    }
    r.seconds = double(now_ns() - start) / 1e9;
    for (int s : socks)
        if (s >= 0) close(s);  // EOF ends each server thread
    close(ep);
    return r;
}

struct server_run {
    client_result client;
    long rss_before = 0;
};

server_run run_weft(int workers, int n, int requests, std::size_t size) {
    weft_config_t cfg{};
    cfg.workers = workers;
    check(weft_init(&cfg), "weft_init");
    server_run out;
    out.rss_before = rss_bytes();
    sockaddr_in addr;
    int ls = listen_loopback(&addr);
    struct acceptor_args {
        int ls, n;
        std::size_t size;
    } args{ls, n, size};
    weft_thread_t acc;
    check(weft_thread_create(
              &acc, nullptr,
              [](void* p) -> void* {
                  auto* a = static_cast<acceptor_args*>(p);
                  std::vector<weft_thread_t> ts;
                  for (int i = 0; i < a->n; ++i) {
                      int c = weft_accept(a->ls, nullptr, nullptr);
                      if (c < 0) break;
                      int one = 1;
                      setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                      auto* arg = new std::pair<int, std::size_t>(c, a->size);
                      weft_thread_t t;
                      check(weft_thread_create(
                                &t, nullptr,
                                [](void* q) -> void* {
                                    auto* cs = static_cast<std::pair<int, std::size_t>*>(q);
                                    echo(cs->first, cs->second, weft_recv, weft_send);
                                    weft_close(cs->first);
                                    delete cs;
                                    return nullptr;
                                },
                                arg),
                            "weft_thread_create");
                      ts.push_back(t);
                  }
                  for (weft_thread_t t : ts) weft_thread_join(t, nullptr);
                  return nullptr;
              },
              &args),
          "weft_thread_create");
    // The client is a kernel thread outside weft; the main weft thread waits
    // for it on a weft semaphore, not in a join that would hold worker 0.
    weft_sem_t done;
    check(weft_sem_init(&done, 0), "weft_sem_init");
    std::thread client([&] {
        out.client = run_client(addr, n, requests, size);
        weft_sem_post(&done);
    });
    weft_sem_wait(&done);
    client.join();
    weft_thread_join(acc, nullptr);
    close(ls);
    weft_sem_destroy(&done);
    check(weft_finalize(), "weft_finalize");
    return out;
}

server_run run_glibc(int n, int requests, std::size_t size) {
    server_run out;
    out.rss_before = rss_bytes();
    sockaddr_in addr;
    int ls = listen_loopback(&addr);
    std::vector<std::thread> conns;
    std::thread acceptor([&] {
        for (int i = 0; i < n; ++i) {
            int c = accept(ls, nullptr, nullptr);
            if (c < 0) break;
            int one = 1;
            setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            conns.emplace_back([c, size] {
                echo(c, size, recv, send);
                close(c);
            });
        }
    });
    out.client = run_client(addr, n, requests, size);
    acceptor.join();
    for (auto& t : conns) t.join();
    close(ls);
    return out;
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
double compute_beside_blocked(int workers, int blocked, std::uint64_t iters, int rounds) {
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
    return summarize(ratios).median;
}

int run(context& ctx) {
    const auto& o = ctx.opts();
    raise_fd_limit();
    const int requests = static_cast<int>(o.integer("requests"));
    const auto size = static_cast<std::size_t>(o.integer("size"));
    const int workers = static_cast<int>(o.integer("workers"));
    table t({"server", "connections", "requests/s", "p50 us", "p99 us", "rss MiB"}, "ll");
    for (const std::string& conn_text : o.list("connections")) {
        int n = std::atoi(conn_text.c_str());
        if (n <= 0) die("io: --connections takes positive counts, got '%s'", conn_text.c_str());
        for (const std::string& server : o.list("servers")) {
            ctx.progress("%s server, %d connections", server.c_str(), n);
            server_run run = server == "weft" ? run_weft(workers, n, requests, size) : run_glibc(n, requests, size);
            if (!run.client.error.empty())
                die("io: %s server, %d connections: %s", server.c_str(), n, run.client.error.c_str());
            summary lat = summarize(run.client.latencies_us);
            std::vector<double> sorted = run.client.latencies_us;
            std::sort(sorted.begin(), sorted.end());
            double p99 = sorted.empty() ? 0 : sorted[std::min(sorted.size() - 1, sorted.size() * 99 / 100)];
            double rps = double(run.client.latencies_us.size()) / run.client.seconds;
            long rss = std::max(0L, run.client.rss_open - run.rss_before);
            json_object rec = ctx.record();
            rec.add("server", server).add("connections", n).add("requests_per_s", rps).add("p50_us", lat.median);
            rec.add("p99_us", p99).add("rss_bytes", rss).add("requests", static_cast<long>(sorted.size()));
            ctx.emit(rec);
            t.add_row({server, std::to_string(n), fmt_sig(rps), fmt_sig(lat.median), fmt_sig(p99),
                       fmt(double(rss) / 1048576.0, 1)});
        }
    }
    ctx.print(t, "echo over loopback: one client kernel thread (epoll), one request outstanding per connection");
    const int blocked = static_cast<int>(o.integer("blocked"));
    if (blocked > 0) {
        double ratio = compute_beside_blocked(workers, blocked, static_cast<std::uint64_t>(o.integer("compute")),
                                              static_cast<int>(o.integer("rounds")));
        json_object rec = ctx.record();
        rec.add("scenario", "compute_beside_blocked").add("blocked_threads", blocked).add("speed_ratio", ratio);
        ctx.emit(rec);
        ctx.say("compute beside %d weft threads blocked in weft_read: %.3f of its speed alone (target >= 0.90)\n",
                blocked, ratio);
    }
    return 0;
}

registrar const reg{experiment{
    .name = "io",
    .description = "a thread per connection: an echo server over loopback, weft threads vs glibc threads; "
                   "compute beside threads blocked in read",
    .details = "Servers (--servers): weft, a weft thread per connection using weft_accept/weft_recv/weft_send\n"
               "(blocking calls that block only the calling thread); glibc, a kernel thread per connection with\n"
               "the C library's calls. The client, in the same process on one kernel thread outside weft, opens\n"
               "--connections N connections to 127.0.0.1, then --requests rounds: one request of --size bytes on\n"
               "every connection, waiting for every reply (checked) before the next round. Reported per server\n"
               "and N: requests_per_s, p50_us, p99_us (request to reply), rss_bytes (the process's resident\n"
               "memory with every connection open, less before the server started). Then compute_beside_blocked:\n"
               "a compute-bound weft thread timed alone and beside --blocked weft threads blocked in weft_read\n"
               "(speed_ratio = alone / beside, median of --rounds). See docs/bench.md.",
    .options = {{.name = "connections",
                 .kind = opt_kind::list,
                 .metavar = "N,...",
                 .default_value = "100,1000",
                 .help = "connection counts"},
                {.name = "servers",
                 .kind = opt_kind::list,
                 .metavar = "S,...",
                 .default_value = "weft,glibc",
                 .help = "servers to run",
                 .choices = {"weft", "glibc"}},
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
                opt_workers(2),
                opt_rounds(3)},
    .run = run,
    .in_demo = false,
}};

}  // namespace
}  // namespace weft::bench::io
