// weft-bench io: the event-loop server, on Boost.Asio (epoll underneath):
// what a server author picks today for many connections on few threads
// (io_echo.hpp).
#include "io_echo.hpp"

#include <utility>  // before Asio: Boost 1.74's awaitable.hpp uses std::exchange without it

#if __has_include(<boost/asio.hpp>)
#include <boost/asio.hpp>
#define WEFT_BENCH_HAVE_ASIO 1
#else
#define WEFT_BENCH_HAVE_ASIO 0
#endif

#include <unistd.h>

#include <memory>
#include <thread>
#include <vector>

#include "harness.hpp"

namespace weft::bench::io {

#if WEFT_BENCH_HAVE_ASIO
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

// One connection: read a whole request, write it back, again until EOF.
struct session : std::enable_shared_from_this<session> {
    tcp::socket sock;
    std::vector<char> buf;
    session(tcp::socket s, std::size_t size) : sock(std::move(s)), buf(size) {}

    void read_request() {
        asio::async_read(sock, asio::buffer(buf),
                         [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                             if (!ec) self->write_reply();
                         });
    }
    void write_reply() {
        asio::async_write(sock, asio::buffer(buf),
                          [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                              if (!ec) self->read_request();
                          });
    }
};

void accept_next(tcp::acceptor& acc, int* left, std::size_t size) {
    if (*left == 0) return;
    acc.async_accept([&acc, left, size](boost::system::error_code ec, tcp::socket s) {
        if (ec) return;
        s.set_option(tcp::no_delay(true));
        std::make_shared<session>(std::move(s), size)->read_request();
        --*left;
        accept_next(acc, left, size);
    });
}

ssize_t plain_read(int fd, void* p, std::size_t n) { return read(fd, p, n); }

}  // namespace

std::string event_loop_unavailable() { return ""; }

// One io_context run by `workers` threads (Asio's multi-threaded event loop):
// the same CPUs as weft's workers. Accepts run on the loop too (one
// outstanding accept, serialised by the acceptor's handler chain).
server_run run_event_loop(int workers, int n, int requests, std::size_t size) {
    sockaddr_in addr;
    int ls = listen_loopback(&addr);
    client_process client = start_client(addr, n, requests, size);
    server_run out;
    out.rss_before = rss_bytes();
    asio::io_context ctx(workers);
    tcp::acceptor acc(ctx, tcp::v4(), ls);
    int left = n;
    accept_next(acc, &left, size);
    std::vector<std::thread> loop;
    // run() returns once every connection has ended and the accepts are done.
    for (int i = 0; i < workers; ++i) loop.emplace_back([&ctx] { ctx.run(); });
    out.client = finish_client(client, plain_read, 0);
    if (!out.client.error.empty()) die("io: event_loop server, %d connections: %s", n, out.client.error.c_str());
    for (auto& t : loop) t.join();
    return out;  // acc closes ls
}
#else
std::string event_loop_unavailable() { return "Boost.Asio's headers (libboost-dev) are not installed"; }
server_run run_event_loop(int, int, int, std::size_t) { die("io: the event_loop server is not built"); }
#endif

}  // namespace weft::bench::io
