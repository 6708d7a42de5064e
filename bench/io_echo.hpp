// weft-bench io: the echo experiment's parts (io.cpp runs them).
//
// The protocol: the client sends requests of `size` bytes on a connection,
// one outstanding; the server sends each back whole. A server ends a
// connection at EOF.
#pragma once

#include <netinet/in.h>
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace weft::bench::io {

struct client_result {
    double seconds = 0;                // the timed rounds
    double cpu_seconds = 0;            // the client's CPU time in them (1 CPU busy: cpu_seconds = seconds)
    double server_cpu_seconds = 0;     // the server process's CPU time in them, every thread
    std::vector<double> latencies_us;  // one per request of the timed rounds
    long rss_open = 0;                 // the server's resident bytes with every connection open and served once
    std::string error;
};

// A listening TCP socket on 127.0.0.1 (an ephemeral port, the largest
// backlog the kernel takes), its address in *addr.
int listen_loopback(sockaddr_in* addr);

// The client, in a child process of its own (so that neither process holds
// both ends of 10,000 connections against RLIMIT_NOFILE): started before the
// server runs, it connects in batches and serves each batch's first request
// before the next batch (the listen backlog never overflows), then runs
// `requests` timed rounds, one request on every connection per round.
struct client_process {
    pid_t pid = -1;
    int from_child = -1;  // the pipe the child reports on
};
client_process start_client(const sockaddr_in& addr, int n, int requests, std::size_t size);

// Reads the client's report to its end and reaps it. `read_fn` is the read
// the calling thread may block in (weft_read on a weft thread); `server` is
// the server's process (0: this one), whose resident memory is read when
// every connection is open and served once, and whose CPU time is counted
// over the timed rounds.
client_result finish_client(client_process c, ssize_t (*read_fn)(int, void*, std::size_t), pid_t server);

// The process's resident memory in bytes (pid 0: this process).
long rss_bytes(pid_t pid = 0);
// The process's CPU time in seconds, user and system, every thread (pid 0:
// this process, to the microsecond; another, from /proc to the clock tick).
double process_cpu_seconds(pid_t pid = 0);

struct server_run {
    client_result client;
    long rss_before = 0;
};

// The servers: each serves n connections of the echo protocol, with `workers`
// CPUs' worth of threads where the design has a choice.
server_run run_weft(int workers, int n, int requests, std::size_t size);
server_run run_glibc(int n, int requests, std::size_t size);
// An event loop on Boost.Asio (epoll): "" when it ran, else why it cannot.
std::string event_loop_unavailable();
server_run run_event_loop(int workers, int n, int requests, std::size_t size);
// A goroutine per connection, built from bench/io_echo.go with the Go
// toolchain at run time: "" when it can run, else why not.
std::string go_unavailable();
server_run run_go(int workers, int n, int requests, std::size_t size);

}  // namespace weft::bench::io
