// weft-bench io: the echo client, in a child process (io_echo.hpp).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "harness.hpp"
#include "io_echo.hpp"
#include "io_placement.hpp"

namespace weft::bench::io {
namespace {

// Connections opened before their first request is served: far below the
// listen backlog (net.core.somaxconn, 4,096 by default), so no SYN is dropped
// and no connect waits for a retransmission.
constexpr int connect_batch = 500;

// What the child writes on its pipe: one byte when every connection is open
// and served once ('o'; 'x' when it failed before), then the report.
struct report_head {
    double seconds;
    double cpu_seconds;
    std::uint64_t latencies;
    std::uint32_t error_len;
};

bool write_all(int fd, const void* p, std::size_t n) {
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        c += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}

struct client {
    std::vector<int> socks;
    int ep = -1;
    std::size_t size;
    std::vector<std::uint64_t> sent_at;
    std::vector<std::size_t> got;
    std::vector<char> req, rep;
    std::string error;

    explicit client(std::size_t sz) : size(sz), req(sz), rep(sz) { ep = epoll_create1(EPOLL_CLOEXEC); }

    void fill(int i, int round) {
        std::memset(req.data(), 0, size);
        std::snprintf(req.data(), size, "%d/%d", i, round);
    }

    bool connect_one(const sockaddr_in& addr) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0 || connect(s, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
            error = std::string("connect failed: ") + std::strerror(errno);
            if (s >= 0) close(s);
            return false;
        }
        int one = 1;
        setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        fcntl(s, F_SETFL, O_NONBLOCK);  // the client's own sockets
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u32 = static_cast<std::uint32_t>(socks.size());
        epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);
        socks.push_back(s);
        sent_at.push_back(0);
        got.push_back(0);
        return true;
    }

    // One request on each connection in [from, to), every reply checked;
    // latencies appended to `lat` unless null.
    void round_trip(int from, int to, int round, std::vector<double>* lat) {
        for (int i = from; i < to; ++i) {
            fill(i, round);
            sent_at[i] = now_ns();
            got[i] = 0;
            if (send(socks[i], req.data(), size, 0) != static_cast<ssize_t>(size)) {
                error = "a request did not fit in the socket buffer";
                return;
            }
        }
        int pending = to - from;
        epoll_event evs[256];
        while (pending > 0 && error.empty()) {
            int k = epoll_wait(ep, evs, 256, 10'000);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) {
                error = "no reply within 10 s";
                return;
            }
            for (int j = 0; j < k; ++j) {
                int i = static_cast<int>(evs[j].data.u32);
                for (;;) {
                    ssize_t m = recv(socks[i], rep.data() + got[i], size - got[i], 0);
                    if (m == 0) error = "the server closed a connection";
                    if (m <= 0) break;
                    got[i] += static_cast<std::size_t>(m);
                    if (got[i] < size) continue;
                    fill(i, round);
                    if (std::memcmp(req.data(), rep.data(), size) != 0) error = "a reply differs from its request";
                    if (lat != nullptr) lat->push_back(double(now_ns() - sent_at[i]) / 1e3);
                    --pending;
                    break;
                }
            }
        }
    }
};

[[noreturn]] void client_main(int out, const sockaddr_in& addr, int n, int requests, std::size_t size) {
    client c(size);
    c.socks.reserve(n);
    for (int from = 0; from < n && c.error.empty(); from += connect_batch) {
        int to = std::min(n, from + connect_batch);
        for (int i = from; i < to && c.error.empty(); ++i) c.connect_one(addr);
        if (c.error.empty()) c.round_trip(from, to, 0, nullptr);
    }
    char mark = c.error.empty() ? 'o' : 'x';
    bool ok = write_all(out, &mark, 1);
    if (ok && c.error.empty()) {
        char go = 0;  // the server has measured its memory
        ok = read(out, &go, 1) == 1;
    }
    std::vector<double> lat;
    lat.reserve(static_cast<std::size_t>(n) * requests);
    double const cpu_start = process_cpu_seconds();
    std::uint64_t start = now_ns();
    for (int round = 1; round <= requests && c.error.empty() && ok; ++round) c.round_trip(0, n, round, &lat);
    report_head h{double(now_ns() - start) / 1e9, process_cpu_seconds() - cpu_start, lat.size(),
                  static_cast<std::uint32_t>(c.error.size())};
    ok = ok && write_all(out, &h, sizeof h) && write_all(out, lat.data(), lat.size() * sizeof(double)) &&
         write_all(out, c.error.data(), c.error.size());
    // Exit closes every connection: EOF ends each server thread.
    _exit(ok ? 0 : 1);
}

bool read_exact(ssize_t (*read_fn)(int, void*, std::size_t), int fd, void* p, std::size_t n) {
    char* c = static_cast<char*>(p);
    while (n > 0) {
        ssize_t r = read_fn(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        c += r;
        n -= static_cast<std::size_t>(r);
    }
    return true;
}

}  // namespace

int listen_loopback(sockaddr_in* addr) {
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (ls < 0) die("io: socket failed: %s", std::strerror(errno));
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    *addr = sockaddr_in{};
    addr->sin_family = AF_INET;
    addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof *addr;
    // The kernel caps the backlog at net.core.somaxconn.
    if (bind(ls, reinterpret_cast<sockaddr*>(addr), sizeof *addr) != 0 ||
        getsockname(ls, reinterpret_cast<sockaddr*>(addr), &len) != 0 || listen(ls, 65535) != 0)
        die("io: cannot listen on 127.0.0.1: %s", std::strerror(errno));
    return ls;
}

client_process start_client(const sockaddr_in& addr, int n, int requests, std::size_t size) {
    // A socket pair, not a pipe: the child also waits for the server's
    // go-ahead after the memory is measured.
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        die("io: socketpair failed: %s", std::strerror(errno));
    std::fflush(nullptr);
    int const cpu = client_cpu();
    pid_t pid = fork();
    if (pid < 0) die("io: fork of the client failed: %s", std::strerror(errno));
    if (pid == 0) {
        close(sv[0]);
        if (cpu >= 0) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            (void)sched_setaffinity(0, sizeof one, &one);  // the placement's choice; floating if refused
        }
        client_main(sv[1], addr, n, requests, size);
    }
    close(sv[1]);
    return {pid, sv[0]};
}

namespace {

// The first line of /proc/<pid>/<name> (pid 0: this process), "" if unreadable.
std::string proc_line(pid_t pid, const char* name) {
    char path[64];
    if (pid == 0)
        std::snprintf(path, sizeof path, "/proc/self/%s", name);
    else
        std::snprintf(path, sizeof path, "/proc/%d/%s", static_cast<int>(pid), name);
    std::FILE* f = std::fopen(path, "r");
    if (f == nullptr) return "";
    char line[1024];
    bool const got = std::fgets(line, sizeof line, f) != nullptr;
    std::fclose(f);
    return got ? line : "";
}

}  // namespace

double process_cpu_seconds(pid_t pid) {
    if (pid == 0) {  // to the microsecond
        rusage ru{};
        getrusage(RUSAGE_SELF, &ru);
        auto sec = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
        return sec(ru.ru_utime) + sec(ru.ru_stime);
    }
    std::string const line = proc_line(pid, "stat");
    // After the command's closing parenthesis: state is field 3, utime 14, stime 15.
    std::size_t const close_paren = line.rfind(')');
    unsigned long utime = 0, stime = 0;
    if (close_paren == std::string::npos ||
        std::sscanf(line.c_str() + close_paren + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime,
                    &stime) != 2)
        return 0;
    return double(utime + stime) / double(sysconf(_SC_CLK_TCK));
}

long rss_bytes(pid_t pid) {
    long pages = 0, resident = 0;
    if (std::sscanf(proc_line(pid, "statm").c_str(), "%ld %ld", &pages, &resident) != 2) return 0;
    return resident * sysconf(_SC_PAGESIZE);
}

client_result finish_client(client_process c, ssize_t (*read_fn)(int, void*, std::size_t), pid_t server) {
    client_result r;
    char mark = 0;
    bool ok = read_exact(read_fn, c.from_child, &mark, 1);
    double server_cpu_start = 0;
    if (ok && mark == 'o') {
        r.rss_open = rss_bytes(server);
        server_cpu_start = process_cpu_seconds(server);
        char go = 1;
        ok = write_all(c.from_child, &go, 1);
    }
    report_head h{};
    ok = ok && read_exact(read_fn, c.from_child, &h, sizeof h);
    if (ok) {
        r.server_cpu_seconds = process_cpu_seconds(server) - server_cpu_start;
        r.seconds = h.seconds;
        r.cpu_seconds = h.cpu_seconds;
        r.latencies_us.resize(h.latencies);
        r.error.resize(h.error_len);
        ok = read_exact(read_fn, c.from_child, r.latencies_us.data(), h.latencies * sizeof(double)) &&
             read_exact(read_fn, c.from_child, r.error.data(), h.error_len);
    }
    close(c.from_child);
    wait_child(c.pid);
    if (!ok && r.error.empty()) r.error = "the client process ended without its report";
    return r;
}

}  // namespace weft::bench::io
