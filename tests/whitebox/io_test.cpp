// Class: requirement. weft/io.h: a system call that would block blocks only
// the calling weft thread (docs/design/syscalls.md). Every test runs under
// each policy on 1 worker (Serial: nothing but a weft call hands the worker
// to another thread, so a call that held its worker would hang the test until
// the watchdog reports it) and on 2 (Concurrent, run under TSan too).
// Descriptors keep their blocking semantics: data, EOF or an error, never a
// spurious EAGAIN; flags as the program set them; timeouts; close.
#include "weft/io.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "core/interrupt.hpp"
#include "core/wait.hpp"
#include "io/fd_wait.hpp"
#include "io/sleep.hpp"
#include "support/weft_test.hpp"

namespace {

// errno of the kernel thread the test runs on now: a weft call that parked may
// resume the test on another worker, and the compiler may keep errno's
// address from before the call (glibc's __errno_location is const).
[[gnu::noinline]] int errno_now() { return errno; }
[[gnu::noinline]] void clear_errno() { errno = 0; }

class Io : public wt::runtime_fixture {
protected:
    void TearDown() override {
        for (int fd : fds_) close(fd);
        wt::runtime_fixture::TearDown();
    }
    // A pipe whose ends the test closes at the end (unless it set them to -1).
    void make_pipe(int p[2]) {
        ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
        keep(p[0]);
        keep(p[1]);
    }
    void make_socketpair(int s[2]) {
        ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s), 0);
        keep(s[0]);
        keep(s[1]);
    }
    void keep(int fd) { fds_.push_back(fd); }
    void forget(int fd) {
        for (int& f : fds_)
            if (f == fd) f = -1;
    }

private:
    std::vector<int> fds_;
};

INSTANTIATE_TEST_SUITE_P(Serial, Io, ::testing::ValuesIn(wt::rt_params({1})), wt::rt_param_name);
INSTANTIATE_TEST_SUITE_P(Concurrent, Io, ::testing::ValuesIn(wt::rt_params({2})), wt::rt_param_name);

// A reader waits in weft_read on an empty pipe; the writer is another weft
// thread, which on one worker runs only if the reader's wait left the worker.
TEST_P(Io, read_waits_while_the_writer_runs) {
    int p[2];
    make_pipe(p);
    std::atomic<bool> reading{false};
    char got[4] = {};
    ssize_t n = -2;
    weft_thread_t r = wt::go([&] {
        reading = true;
        n = weft_read(p[0], got, sizeof got);
    });
    weft_thread_t w = wt::go([&] {
        ASSERT_TRUE(wt::yield_until([&] { return reading.load(); }));
        wt::settle();  // the reader is in its read now (one worker: parked)
        EXPECT_EQ(weft_write(p[1], "abc", 3), 3);
    });
    wt::join(r);
    wt::join(w);
    EXPECT_EQ(n, 3);
    EXPECT_STREQ(got, "abc");
}

// The program's flags stay as it set them while a thread waits, and after.
TEST_P(Io, descriptor_flags_are_the_programs) {
    int p[2];
    make_pipe(p);
    int before = fcntl(p[0], F_GETFL);
    std::atomic<bool> reading{false};
    int during = -1;
    weft_thread_t r = wt::go([&] {
        reading = true;
        char c;
        EXPECT_EQ(weft_read(p[0], &c, 1), 1);
    });
    ASSERT_TRUE(wt::yield_until([&] { return reading.load(); }));
    wt::settle();
    during = fcntl(p[0], F_GETFL);
    EXPECT_EQ(weft_write(p[1], "x", 1), 1);
    wt::join(r);
    EXPECT_EQ(during, before);
    EXPECT_EQ(fcntl(p[0], F_GETFL), before);
    EXPECT_EQ(before & O_NONBLOCK, 0);
}

// A descriptor the program made non-blocking still returns EAGAIN.
TEST_P(Io, nonblocking_descriptor_returns_eagain) {
    int p[2];
    make_pipe(p);
    ASSERT_EQ(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
    char c;
    clear_errno();
    EXPECT_EQ(weft_read(p[0], &c, 1), -1);
    EXPECT_EQ(errno_now(), EAGAIN);
    int s[2];
    make_socketpair(s);
    clear_errno();
    EXPECT_EQ(weft_recv(s[0], &c, 1, MSG_DONTWAIT), -1);
    EXPECT_EQ(errno_now(), EAGAIN);
}

// A write to a full pipe waits (only the writer) until all of it is taken, as
// a blocking write does; the reader gets every byte in order.
TEST_P(Io, write_to_a_full_pipe_waits_and_writes_everything) {
    int p[2];
    make_pipe(p);
    ASSERT_GT(fcntl(p[1], F_SETPIPE_SZ, 4096), 0);
    constexpr std::size_t total = 256 * 1024;
    std::vector<unsigned char> out(total), in(total);
    for (std::size_t i = 0; i < total; ++i) out[i] = static_cast<unsigned char>(i * 7 + 1);
    ssize_t wrote = -2;
    weft_thread_t w = wt::go([&] { wrote = weft_write(p[1], out.data(), total); });
    weft_thread_t r = wt::go([&] {
        std::size_t got = 0;
        while (got < total) {
            ssize_t k = weft_read(p[0], in.data() + got, total - got);
            ASSERT_GT(k, 0);
            got += static_cast<std::size_t>(k);
        }
    });
    wt::join(w);
    wt::join(r);
    EXPECT_EQ(wrote, static_cast<ssize_t>(total));
    EXPECT_EQ(in, out);
}

// EOF reaches a waiting reader as 0.
TEST_P(Io, eof_ends_the_wait_with_zero) {
    int p[2];
    make_pipe(p);
    std::atomic<bool> reading{false};
    ssize_t n = -2;
    weft_thread_t r = wt::go([&] {
        reading = true;
        char c;
        n = weft_read(p[0], &c, 1);
    });
    ASSERT_TRUE(wt::yield_until([&] { return reading.load(); }));
    wt::settle();
    ASSERT_EQ(close(p[1]), 0);
    forget(p[1]);
    wt::join(r);
    EXPECT_EQ(n, 0);
}

// Errors come back as the C library's.
TEST_P(Io, errors_are_the_c_librarys) {
    char c;
    clear_errno();
    EXPECT_EQ(weft_read(-1, &c, 1), -1);
    EXPECT_EQ(errno_now(), EBADF);
    int p[2];
    make_pipe(p);
    clear_errno();
    EXPECT_EQ(weft_recv(p[0], &c, 1, 0), -1);
    EXPECT_EQ(errno_now(), ENOTSOCK);
    int d = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(d, 0);
    keep(d);
    clear_errno();
    EXPECT_EQ(weft_read(d, &c, 1), -1);
    EXPECT_EQ(errno_now(), EISDIR);
    clear_errno();
    EXPECT_EQ(weft_accept(p[0], nullptr, nullptr), -1);
    EXPECT_EQ(errno_now(), ENOTSOCK);
}

// A regular file reads as usual (epoll cannot watch it: a miss of the page
// cache goes to a helper thread).
TEST_P(Io, regular_file_reads) {
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    keep(fd);
    char head[4] = {};
    EXPECT_EQ(weft_read(fd, head, 4), 4);
    EXPECT_EQ(std::memcmp(head,
                          "\x7f"
                          "ELF",
                          4),
              0);
}

// A read of a regular file that misses the page cache, on a descriptor with
// O_NONBLOCK: Linux waits for the disk (O_NONBLOCK means nothing to a regular
// file), so the call returns the data, never EAGAIN, though its RWF_NOWAIT
// try would block and the program made the descriptor non-blocking.
TEST_P(Io, nonblocking_regular_file_read_that_misses_the_cache_returns_data) {
    char path[] = "weft_io_test_XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    unlink(path);
    keep(fd);
    std::vector<char> data(1 << 20, 'w');
    ASSERT_EQ(write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
    ASSERT_EQ(fsync(fd), 0);
    ASSERT_EQ(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
    ASSERT_EQ(lseek(fd, 0, SEEK_SET), 0);
    // Dropped from the cache (its pages are clean after fsync); a file system
    // that keeps them (tmpfs) or has no RWF_NOWAIT cannot show the case.
    ASSERT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    char probe[16];
    iovec v{probe, sizeof probe};
    if (preadv2(fd, &v, 1, 1 << 19, RWF_NOWAIT) >= 0 || errno != EAGAIN)
        GTEST_SKIP() << "the file system kept the file's pages or has no RWF_NOWAIT";
    ASSERT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    std::vector<char> got(4096);
    clear_errno();
    EXPECT_EQ(weft_read(fd, got.data(), got.size()), static_cast<ssize_t>(got.size())) << std::strerror(errno_now());
    EXPECT_EQ(got[0], 'w');
    EXPECT_EQ(got.back(), 'w');
}

// SO_RCVTIMEO ends a receive with EAGAIN, as Linux does; the worker ran
// another thread meanwhile.
TEST_P(Io, socket_receive_timeout) {
    int s[2];
    make_socketpair(s);
    timeval tv{0, 50'000};
    ASSERT_EQ(setsockopt(s[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    std::atomic<bool> done{false};
    std::atomic<int> beats{0};
    ssize_t n = -2;
    int err = 0;
    weft_thread_t r = wt::go([&] {
        char c;
        n = weft_recv(s[0], &c, 1, 0);
        err = errno_now();
        done = true;
    });
    weft_thread_t other = wt::go([&] {
        while (!done.load()) {
            beats.fetch_add(1);
            weft_sleep_ns(1'000'000);
        }
    });
    wt::join(r);
    wt::join(other);
    EXPECT_EQ(n, -1);
    EXPECT_EQ(err, EAGAIN);
    EXPECT_GT(beats.load(), 0);
}

// poll: its timeout, and a wait that a write on another thread ends.
TEST_P(Io, poll_times_out_and_wakes) {
    int p[2];
    make_pipe(p);
    pollfd f{p[0], POLLIN, 0};
    EXPECT_EQ(weft_poll(&f, 1, 20), 0);
    EXPECT_EQ(f.revents, 0);
    std::atomic<bool> polling{false};
    int n = -2;
    pollfd g[2] = {{p[0], POLLIN, 0}, {-1, POLLIN, 0}};
    weft_thread_t r = wt::go([&] {
        polling = true;
        n = weft_poll(g, 2, -1);
    });
    ASSERT_TRUE(wt::yield_until([&] { return polling.load(); }));
    wt::settle();
    EXPECT_EQ(weft_write(p[1], "x", 1), 1);
    wt::join(r);
    EXPECT_EQ(n, 1);
    EXPECT_EQ(g[0].revents, POLLIN);
    EXPECT_EQ(g[1].revents, 0);
}

// The calls that wait for any of several descriptors: each waits (on one
// worker: parked) until another weft thread writes, and reports the one ready.
TEST_P(Io, select_pselect_and_ppoll_wait_while_the_writer_runs) {
    enum how {
        by_select,
        by_pselect,
        by_pselect_mask,
        by_ppoll,
        by_ppoll_mask
    };
    for (how h : {by_select, by_pselect, by_pselect_mask, by_ppoll, by_ppoll_mask}) {
        int p[2];
        make_pipe(p);
        std::atomic<bool> waiting{false};
        int n = -2;
        bool seen = false;
        weft_thread_t r = wt::go([&] {
            fd_set rd;
            FD_ZERO(&rd);
            FD_SET(p[0], &rd);
            pollfd f{p[0], POLLIN, 0};
            timespec ten_s{10, 0};
            sigset_t none;
            sigemptyset(&none);
            waiting = true;
            switch (h) {
            case by_select: n = weft_select(p[0] + 1, &rd, nullptr, nullptr, nullptr); break;
            case by_pselect: n = weft_pselect(p[0] + 1, &rd, nullptr, nullptr, &ten_s, nullptr); break;
            case by_pselect_mask: n = weft_pselect(p[0] + 1, &rd, nullptr, nullptr, nullptr, &none); break;
            case by_ppoll: n = weft_ppoll(&f, 1, nullptr, nullptr); break;
            case by_ppoll_mask: n = weft_ppoll(&f, 1, &ten_s, &none); break;
            }
            seen = h == by_ppoll || h == by_ppoll_mask ? f.revents == POLLIN : FD_ISSET(p[0], &rd);
        });
        ASSERT_TRUE(wt::yield_until([&] { return waiting.load(); }));
        wt::settle();
        EXPECT_EQ(weft_write(p[1], "x", 1), 1);
        wt::join(r);
        EXPECT_EQ(n, 1) << "call " << h;  // no SCOPED_TRACE: its stack is per kernel thread
        EXPECT_TRUE(seen) << "call " << h;
    }
}

// select: the sets keep only what is ready (a readable and a writable end
// counted apart), its timeout and the time left, and a descriptor that is
// not open.
TEST_P(Io, select_sets_timeout_and_errors) {
    int p[2], q[2];
    make_pipe(p);
    make_pipe(q);
    EXPECT_EQ(weft_write(q[1], "x", 1), 1);
    fd_set rd, wr;
    FD_ZERO(&rd);
    FD_ZERO(&wr);
    FD_SET(p[0], &rd);
    FD_SET(q[0], &rd);
    FD_SET(p[1], &wr);
    int top = std::max({p[0], p[1], q[0]}) + 1;
    EXPECT_EQ(weft_select(top, &rd, &wr, nullptr, nullptr), 2);
    EXPECT_FALSE(FD_ISSET(p[0], &rd));
    EXPECT_TRUE(FD_ISSET(q[0], &rd));
    EXPECT_TRUE(FD_ISSET(p[1], &wr));
    FD_ZERO(&rd);
    FD_SET(p[0], &rd);
    timeval tv{0, 20'000};
    EXPECT_EQ(weft_select(p[0] + 1, &rd, nullptr, nullptr, &tv), 0);
    EXPECT_FALSE(FD_ISSET(p[0], &rd));
    EXPECT_EQ(tv.tv_sec, 0);
    EXPECT_EQ(tv.tv_usec, 0);
    timespec ms20{0, 20'000'000};
    pollfd f{p[0], POLLIN, 0};
    EXPECT_EQ(weft_ppoll(&f, 1, &ms20, nullptr), 0);
    int closed = dup(p[0]);
    ASSERT_GE(closed, 0);
    close(closed);
    FD_ZERO(&rd);
    FD_SET(closed, &rd);
    clear_errno();
    EXPECT_EQ(weft_select(closed + 1, &rd, nullptr, nullptr, nullptr), -1);
    EXPECT_EQ(errno_now(), EBADF);
    timeval bad{0, -1};
    clear_errno();
    EXPECT_EQ(weft_select(p[0] + 1, &rd, nullptr, nullptr, &bad), -1);
    EXPECT_EQ(errno_now(), EINVAL);
}

// epoll_wait on the program's own epoll instance: it waits (parked) until a
// descriptor in the set is ready; its timeout; an instance closed by
// weft_close during the wait; a descriptor that is no epoll instance.
TEST_P(Io, epoll_wait_on_the_programs_instance) {
    int p[2];
    make_pipe(p);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    ASSERT_GE(ep, 0);
    keep(ep);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = p[0];
    ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev), 0);
    EXPECT_EQ(weft_epoll_wait(ep, &ev, 1, 20), 0);
    for (bool with_mask : {false, true}) {
        std::atomic<bool> waiting{false};
        int n = -2;
        epoll_event got{};
        weft_thread_t r = wt::go([&] {
            sigset_t none;
            sigemptyset(&none);
            waiting = true;
            n = with_mask ? weft_epoll_pwait(ep, &got, 1, 10'000, &none) : weft_epoll_wait(ep, &got, 1, -1);
        });
        ASSERT_TRUE(wt::yield_until([&] { return waiting.load(); }));
        wt::settle();
        EXPECT_EQ(weft_write(p[1], "x", 1), 1);
        wt::join(r);
        EXPECT_EQ(n, 1) << "with a mask: " << with_mask;
        EXPECT_EQ(got.data.fd, p[0]) << "with a mask: " << with_mask;
        char c;
        EXPECT_EQ(weft_read(p[0], &c, 1), 1);
    }
    clear_errno();
    EXPECT_EQ(weft_epoll_wait(p[0], &ev, 1, -1), -1);
    EXPECT_EQ(errno_now(), EINVAL);
    // weft_close of the instance ends a wait on it with EBADF.
    std::atomic<bool> waiting{false};
    int n = -2, err = 0;
    weft_thread_t r = wt::go([&] {
        waiting = true;
        n = weft_epoll_wait(ep, &ev, 1, -1);
        err = errno_now();
    });
    ASSERT_TRUE(wt::yield_until(
        [&] { return waiting.load() && weft::detail::io::has_waiters(ep, weft::detail::io::for_read); }));
    EXPECT_EQ(weft_close(ep), 0);
    forget(ep);
    wt::join(r);
    EXPECT_EQ(n, -1);
    EXPECT_EQ(err, EBADF);
}

// Signals (core/interrupt.hpp): the hooks a signal-delivering layer installs,
// here a test's: take() counts its calls and answers as a handler with or
// without SA_RESTART would, or (no_handler) as when the signal went to
// another thread; pending() says whether a signal is already the caller's.
namespace sig {
std::atomic<int> taken{0};
std::atomic<bool> restart{false};
std::atomic<bool> no_handler{false};
std::atomic<bool> pending{false};
const weft::detail::signal_hooks hooks{[] { return pending.load(); },
                                       [] {
                                           ++taken;
                                           if (no_handler.load()) return -1;
                                           return restart.load() ? 0 : EINTR;
                                       }};
struct installed {
    explicit installed(bool with_restart) {
        taken = 0;
        restart = with_restart;
        no_handler = false;
        pending = false;
        weft::detail::set_signal_hooks(&hooks);
    }
    ~installed() { weft::detail::set_signal_hooks(nullptr); }
};
}  // namespace sig

// A signal for a thread parked in read, recv, accept or poll: without
// SA_RESTART the call fails with EINTR; with it read, recv and accept resume
// (and then get their data) while poll fails all the same, as Linux has it;
// a socket with SO_RCVTIMEO is never restarted.
TEST_P(Io, a_signal_interrupts_a_parked_call) {
    enum call {
        by_read,
        by_recv,
        by_recv_timed,
        by_accept,
        by_poll
    };
    for (bool with_restart : {false, true})
        for (call c : {by_read, by_recv, by_recv_timed, by_accept, by_poll}) {
            sig::installed hooks(with_restart);
            int s[2];
            make_socketpair(s);
            int ls = -1;
            sockaddr_in a{};
            if (c == by_accept) {
                ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                ASSERT_GE(ls, 0);
                keep(ls);
                a.sin_family = AF_INET;
                a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                socklen_t alen = sizeof a;
                ASSERT_EQ(bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
                ASSERT_EQ(getsockname(ls, reinterpret_cast<sockaddr*>(&a), &alen), 0);
                ASSERT_EQ(listen(ls, 4), 0);
            }
            if (c == by_recv_timed) {
                timeval tv{30, 0};
                ASSERT_EQ(setsockopt(s[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
            }
            std::atomic<weft::detail::ult*> who{nullptr};
            long n = -2;
            int err = 0;
            weft_thread_t r = wt::go([&] {
                who = weft::detail::current_ult();
                char buf[4];
                pollfd f{s[0], POLLIN, 0};
                switch (c) {
                case by_read: n = weft_read(s[0], buf, sizeof buf); break;
                case by_recv:
                case by_recv_timed: n = weft_recv(s[0], buf, sizeof buf, 0); break;
                case by_accept:
                    n = weft_accept(ls, nullptr, nullptr);
                    if (n >= 0) close(static_cast<int>(n));
                    break;
                case by_poll: n = weft_poll(&f, 1, -1); break;
                }
                err = errno_now();
            });
            int watched = c == by_accept ? ls : s[0];
            auto parked = [&] {
                return who.load() != nullptr && weft::detail::io::has_waiters(watched, weft::detail::io::for_read);
            };
            // Once the call is in its wait (parked, or about to park: then it
            // sees the interrupt before it parks).
            ASSERT_TRUE(
                wt::yield_until([&] { return who.load() != nullptr && weft::detail::interrupt_wait(who.load()); }));
            bool resumes = with_restart && c != by_recv_timed && c != by_poll;
            if (resumes) {
                ASSERT_TRUE(wt::yield_until([&] { return sig::taken.load() == 1 && parked(); }));
                int client = -1;
                if (c == by_accept) {
                    client = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                    ASSERT_EQ(weft_connect(client, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
                } else {
                    EXPECT_EQ(weft_write(s[1], "abc", 3), 3);
                }
                wt::join(r);
                if (client >= 0) close(client);
                EXPECT_GE(n, 0) << "call " << c << " with SA_RESTART";
            } else {
                wt::join(r);
                EXPECT_EQ(n, -1) << "call " << c << (with_restart ? " with" : " without") << " SA_RESTART";
                EXPECT_EQ(err, EINTR) << "call " << c << (with_restart ? " with" : " without") << " SA_RESTART";
            }
            EXPECT_EQ(sig::taken.load(), 1) << "call " << c;  // the handler ran once, on the thread
        }
}

// A signal already the caller's when it would park (routed just before):
// the call does not park. And a thread in no wait is not interrupted.
TEST_P(Io, a_pending_signal_stops_the_wait_before_it_parks) {
    sig::installed hooks(false);
    int p[2];
    make_pipe(p);
    sig::pending = true;
    char c;
    clear_errno();
    EXPECT_EQ(weft_read(p[0], &c, 1), -1);
    EXPECT_EQ(errno_now(), EINTR);
    EXPECT_EQ(sig::taken.load(), 1);
    sig::pending = false;
    EXPECT_FALSE(weft::detail::interrupt_wait(weft::detail::current_ult()));
}

// A wait taken out for a signal that no handler then ran for (another thread
// took it, or it is ignored now): nothing was delivered, so the call goes on
// and returns its data, poll included (no spurious EINTR).
TEST_P(Io, an_interrupt_without_a_handler_lets_the_call_go_on) {
    for (bool by_poll : {false, true}) {
        sig::installed hooks(false);
        sig::no_handler = true;
        int p[2];
        make_pipe(p);
        std::atomic<weft::detail::ult*> who{nullptr};
        long n = -2;
        weft_thread_t r = wt::go([&] {
            who = weft::detail::current_ult();
            char c;
            pollfd f{p[0], POLLIN, 0};
            n = by_poll ? weft_poll(&f, 1, -1) : weft_read(p[0], &c, 1);
        });
        ASSERT_TRUE(wt::yield_until([&] { return who.load() != nullptr && weft::detail::interrupt_wait(who.load()); }));
        // After the take the call goes on (back in its wait, or about to be):
        // the data ends it.
        ASSERT_TRUE(wt::yield_until([&] { return sig::taken.load() == 1; }));
        EXPECT_EQ(weft_write(p[1], "z", 1), 1);
        wt::join(r);
        EXPECT_EQ(n, 1) << (by_poll ? "poll" : "read");
    }
}

// interrupt_one takes out the first waiting thread its choice accepts, and
// only that one; with none accepted it reports false.
TEST_P(Io, interrupt_one_ends_the_wait_of_the_chosen_thread_only) {
    sig::installed hooks(false);
    int p[2][2];
    make_pipe(p[0]);
    make_pipe(p[1]);
    std::atomic<weft::detail::ult*> who[2]{nullptr, nullptr};
    long n[2] = {-2, -2};
    int err[2] = {0, 0};
    weft_thread_t r[2];
    for (int i = 0; i < 2; ++i)
        r[i] = wt::go([&, i] {
            who[i] = weft::detail::current_ult();
            char c;
            n[i] = weft_read(p[i][0], &c, 1);
            err[i] = errno_now();
        });
    ASSERT_TRUE(wt::yield_until([&] {
        return weft::detail::io::has_waiters(p[0][0], weft::detail::io::for_read) &&
               weft::detail::io::has_waiters(p[1][0], weft::detail::io::for_read);
    }));
    auto is = [](weft::detail::ult* t, void* arg) { return t == static_cast<weft::detail::ult*>(arg); };
    EXPECT_FALSE(weft::detail::interrupt_one([](weft::detail::ult*, void*) { return false; }, nullptr));
    EXPECT_TRUE(weft::detail::interrupt_one(is, who[1].load()));
    wt::join(r[1]);
    EXPECT_EQ(n[1], -1);
    EXPECT_EQ(err[1], EINTR);
    EXPECT_TRUE(weft::detail::io::has_waiters(p[0][0], weft::detail::io::for_read));  // still reading
    EXPECT_EQ(weft_write(p[0][1], "a", 1), 1);
    wt::join(r[0]);
    EXPECT_EQ(n[0], 1);
    EXPECT_EQ(sig::taken.load(), 1);
}

// sleep_until: 0 at its deadline; EINTR, well before it, when a signal ends
// it; and when the interrupt had no handler, on to its deadline.
TEST_P(Io, sleep_until_ends_at_its_deadline_or_at_a_signal) {
    sig::installed hooks(false);
    std::int64_t t0 = weft::detail::monotonic_ns();
    EXPECT_EQ(weft::detail::io::sleep_until(t0 + 20'000'000), 0);
    EXPECT_GE(weft::detail::monotonic_ns(), t0 + 20'000'000);
    for (bool handler : {true, false}) {
        sig::no_handler = !handler;
        sig::taken = 0;
        std::atomic<weft::detail::ult*> who{nullptr};
        int rc = -2;
        std::int64_t deadline = weft::detail::monotonic_ns() + (handler ? 60'000'000'000 : 200'000'000);
        weft_thread_t r = wt::go([&] {
            who = weft::detail::current_ult();
            rc = weft::detail::io::sleep_until(deadline);
        });
        ASSERT_TRUE(wt::yield_until([&] { return who.load() != nullptr && weft::detail::interrupt_wait(who.load()); }));
        wt::join(r);
        EXPECT_EQ(sig::taken.load(), 1);
        if (handler) {
            EXPECT_EQ(rc, EINTR);
            EXPECT_LT(weft::detail::monotonic_ns(), deadline);
        } else {
            EXPECT_EQ(rc, 0);
            EXPECT_GE(weft::detail::monotonic_ns(), deadline);
        }
    }
}

// accept, connect, send and recv over loopback, server and client on the
// same worker; and two threads receiving on one shared socket.
TEST_P(Io, accept_connect_and_a_shared_socket) {
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(ls, 0);
    keep(ls);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    socklen_t alen = sizeof a;
    ASSERT_EQ(getsockname(ls, reinterpret_cast<sockaddr*>(&a), &alen), 0);
    ASSERT_EQ(listen(ls, 16), 0);
    int conn = -1;
    std::atomic<int> got_bytes{0};
    std::string got;
    weft_mutex_t m = WEFT_MUTEX_INITIALIZER;
    weft_thread_t server = wt::go([&] {
        conn = weft_accept(ls, nullptr, nullptr);
        ASSERT_GE(conn, 0);
        // Two receivers on one socket: each byte reaches exactly one.
        auto recv1 = [&] {
            char c;
            ssize_t k = weft_recv(conn, &c, 1, 0);
            ASSERT_EQ(k, 1);
            weft_mutex_lock(&m);
            got.push_back(c);
            weft_mutex_unlock(&m);
            got_bytes.fetch_add(1);
        };
        weft_thread_t a1 = wt::go(recv1);
        weft_thread_t a2 = wt::go(recv1);
        wt::join(a1);
        wt::join(a2);
    });
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(c, 0);
    keep(c);
    ASSERT_EQ(weft_connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    wt::settle();  // both receivers wait now, unless the accept has not been served yet
    EXPECT_EQ(weft_send(c, "p", 1, 0), 1);
    ASSERT_TRUE(wt::yield_until([&] { return got_bytes.load() >= 1; }));
    EXPECT_EQ(weft_send(c, "q", 1, 0), 1);
    wt::join(server);
    keep(conn);
    EXPECT_EQ(got.size(), 2u);
    EXPECT_NE(got.find('p'), std::string::npos);
    EXPECT_NE(got.find('q'), std::string::npos);
}

// The vectored and message calls: writev to a full pipe writes every byte
// (its rest after a partial write from the right place), readv gathers;
// sendmsg/recvmsg and sendto/recvfrom over a socket pair, the receiver
// waiting; recv with MSG_WAITALL waits for all it asked for.
TEST_P(Io, vectored_and_message_calls) {
    int p[2];
    make_pipe(p);
    ASSERT_GT(fcntl(p[1], F_SETPIPE_SZ, 4096), 0);
    std::vector<char> a(10'000, 'a'), b(20'000, 'b');
    iovec out[2] = {{a.data(), a.size()}, {b.data(), b.size()}};
    ssize_t wrote = -2;
    weft_thread_t w = wt::go([&] { wrote = weft_writev(p[1], out, 2); });
    std::vector<char> got(a.size() + b.size());
    std::size_t have = 0;
    while (have < got.size()) {
        iovec in[2] = {{got.data() + have, 1}, {got.data() + have + 1, got.size() - have - 1}};
        ssize_t k = weft_readv(p[0], in, 2);
        ASSERT_GT(k, 0);
        have += static_cast<std::size_t>(k);
    }
    wt::join(w);
    EXPECT_EQ(wrote, static_cast<ssize_t>(got.size()));
    EXPECT_EQ(std::string(got.data(), a.size()), std::string(a.size(), 'a'));
    EXPECT_EQ(std::string(got.data() + a.size(), b.size()), std::string(b.size(), 'b'));

    int s[2];
    make_socketpair(s);
    std::atomic<bool> receiving{false};
    char buf[16] = {};
    ssize_t n = -2;
    weft_thread_t r = wt::go([&] {
        receiving = true;
        iovec v{buf, sizeof buf};
        msghdr m{};
        m.msg_iov = &v;
        m.msg_iovlen = 1;
        n = weft_recvmsg(s[0], &m, 0);
    });
    ASSERT_TRUE(wt::yield_until([&] { return receiving.load(); }));
    wt::settle();
    char msg[] = "hi";
    iovec v{msg, 2};
    msghdr m{};
    m.msg_iov = &v;
    m.msg_iovlen = 1;
    EXPECT_EQ(weft_sendmsg(s[1], &m, 0), 2);
    wt::join(r);
    EXPECT_EQ(n, 2);
    EXPECT_STREQ(buf, "hi");

    char all[6] = {};
    n = -2;
    receiving = false;
    r = wt::go([&] {
        receiving = true;
        n = weft_recvfrom(s[0], all, 6, MSG_WAITALL, nullptr, nullptr);
    });
    ASSERT_TRUE(wt::yield_until([&] { return receiving.load(); }));
    EXPECT_EQ(weft_sendto(s[1], "abc", 3, 0, nullptr, 0), 3);
    wt::settle();
    EXPECT_EQ(weft_send(s[1], "def", 3, 0), 3);
    wt::join(r);
    EXPECT_EQ(n, 6);
    EXPECT_EQ(std::string(all, 6), "abcdef");
}

// Several threads read one pipe (a shared descriptor): each byte written
// reaches exactly one of them, and every reader ends.
TEST_P(Io, shared_pipe_readers_each_get_one_byte) {
    int p[2];
    make_pipe(p);
    constexpr int readers = 8;
    std::atomic<int> sum{0};
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < readers; ++i)
        ts.push_back(wt::go([&] {
            char c;
            if (weft_read(p[0], &c, 1) == 1) sum.fetch_add(c - '0');
        }));
    wt::settle();
    for (int i = 1; i <= readers; ++i) {
        char c = static_cast<char>('0' + i);
        EXPECT_EQ(weft_write(p[1], &c, 1), 1);
        weft_thread_yield();
    }
    for (weft_thread_t t : ts) wt::join(t);
    EXPECT_EQ(sum.load(), readers * (readers + 1) / 2);
}

// weft_close on a descriptor another thread waits on wakes it with EBADF.
TEST_P(Io, close_during_a_wait_wakes_the_waiter_with_ebadf) {
    int s[2];
    make_socketpair(s);
    std::atomic<bool> reading{false};
    ssize_t n = -2;
    int err = 0;
    weft_thread_t r = wt::go([&] {
        reading = true;
        char c;
        n = weft_read(s[0], &c, 1);
        err = errno_now();
    });
    // Closed only once the reader is parked: its read no longer uses the
    // descriptor (and close does not race its last use of it).
    ASSERT_TRUE(wt::yield_until(
        [&] { return reading.load() && weft::detail::io::has_waiters(s[0], weft::detail::io::for_read); }));
    EXPECT_EQ(weft_close(s[0]), 0);
    forget(s[0]);
    wt::join(r);
    EXPECT_EQ(n, -1);
    EXPECT_EQ(err, EBADF);
}

// waitpid waits for a child that exits only once another weft thread of the
// same worker has written to it.
TEST_P(Io, waitpid_waits_while_others_run) {
    int p[2];
    make_pipe(p);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        char c;
        _exit(read(p[0], &c, 1) == 1 ? c : 99);
    }
    std::atomic<bool> waiting{false};
    int status = -1;
    pid_t r = -2;
    weft_thread_t w = wt::go([&] {
        waiting = true;
        r = weft_waitpid(child, &status, 0);
    });
    ASSERT_TRUE(wt::yield_until([&] { return waiting.load(); }));
    wt::settle();
    EXPECT_EQ(weft_write(p[1], "\x07", 1), 1);
    wt::join(w);
    EXPECT_EQ(r, child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 7);
}

// A compute-bound thread runs to its end beside many threads parked in
// reads; then each reader gets its byte.
TEST_P(Io, compute_beside_many_blocked_readers) {
    constexpr int readers = 64;
    std::vector<int> rd(readers), wr(readers);
    for (int i = 0; i < readers; ++i) {
        int p[2];
        make_pipe(p);
        rd[i] = p[0];
        wr[i] = p[1];
    }
    std::atomic<int> got{0};
    std::vector<weft_thread_t> ts;
    for (int i = 0; i < readers; ++i)
        ts.push_back(wt::go([&, i] {
            char c;
            if (weft_read(rd[i], &c, 1) == 1 && c == 'a' + i % 26) got.fetch_add(1);
        }));
    std::uint64_t sum = 0;
    weft_thread_t compute = wt::go([&] {
        for (std::uint64_t i = 0; i < 10'000'000; ++i) sum += i ^ (sum >> 3);
    });
    wt::join(compute);
    EXPECT_NE(sum, 0u);
    EXPECT_EQ(got.load(), 0);
    for (int i = 0; i < readers; ++i) {
        char c = static_cast<char>('a' + i % 26);
        EXPECT_EQ(weft_write(wr[i], &c, 1), 1);
    }
    for (weft_thread_t t : ts) wt::join(t);
    EXPECT_EQ(got.load(), readers);
}

// A kernel thread that is not a weft thread gets the plain call.
TEST_P(Io, outside_a_weft_thread_the_call_is_plain) {
    int p[2];
    make_pipe(p);
    ssize_t n = -2;
    {
        wt::kthread k([&] {
            char c;
            n = weft_read(p[0], &c, 1);
        });
        wt::settle();
        EXPECT_EQ(weft_write(p[1], "z", 1), 1);
    }
    EXPECT_EQ(n, 1);
}

// The one weft thread parked in a read, every worker idle: no deadlock report
// (the kernel, here a child process's write a second later, ends the wait).
TEST_P(Io, a_long_kernel_wait_is_no_deadlock) {
    int p[2];
    make_pipe(p);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        struct timespec ts {
            1, 0
        };
        nanosleep(&ts, nullptr);
        _exit(write(p[1], "d", 1) == 1 ? 0 : 1);
    }
    char c = 0;
    EXPECT_EQ(weft_read(p[0], &c, 1), 1);
    EXPECT_EQ(c, 'd');
    int status = 0;
    EXPECT_EQ(weft_waitpid(child, &status, 0), child);
}

}  // namespace
