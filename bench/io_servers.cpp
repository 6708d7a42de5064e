// weft-bench io: the thread-per-connection servers, on weft threads and on
// glibc threads (io_echo.hpp).
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>
#include <utility>
#include <vector>

#include <weft/io.h>
#include <weft/weft.h>

#include "harness.hpp"
#include "io_echo.hpp"

namespace weft::bench::io {
namespace {

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

void no_delay(int c) {
    int one = 1;
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

ssize_t plain_read(int fd, void* p, std::size_t n) { return read(fd, p, n); }

}  // namespace

server_run run_weft(int workers, int n, int requests, std::size_t size) {
    sockaddr_in addr;
    int ls = listen_loopback(&addr);
    client_process client = start_client(addr, n, requests, size);
    weft_config_t cfg{};
    cfg.workers = workers;
    check(weft_init(&cfg), "weft_init");
    server_run out;
    out.rss_before = rss_bytes();
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
                      no_delay(c);
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
    // The main weft thread waits for the client's report in weft_read, which
    // holds no worker.
    out.client = finish_client(client, weft_read, 0);
    if (!out.client.error.empty()) die("io: weft server, %d connections: %s", n, out.client.error.c_str());
    weft_thread_join(acc, nullptr);
    close(ls);
    check(weft_finalize(), "weft_finalize");
    return out;
}

server_run run_glibc(int n, int requests, std::size_t size) {
    sockaddr_in addr;
    int ls = listen_loopback(&addr);
    client_process client = start_client(addr, n, requests, size);
    server_run out;
    out.rss_before = rss_bytes();
    std::vector<std::thread> conns;
    std::thread acceptor([&] {
        for (int i = 0; i < n; ++i) {
            int c = accept(ls, nullptr, nullptr);
            if (c < 0) break;
            no_delay(c);
            conns.emplace_back([c, size] {
                echo(c, size, recv, send);
                close(c);
            });
        }
    });
    out.client = finish_client(client, plain_read, 0);
    if (!out.client.error.empty()) die("io: glibc server, %d connections: %s", n, out.client.error.c_str());
    acceptor.join();
    for (auto& t : conns) t.join();
    close(ls);
    return out;
}

}  // namespace weft::bench::io
