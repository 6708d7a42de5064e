// The weft_ calls of weft/io.h that wait for any of several descriptors:
// poll, ppoll, select, pselect, and epoll_wait / epoll_pwait on the program's
// own epoll instance. Each tries without waiting, then parks the caller on one
// descriptor the poller watches (fd_wait.hpp) that is readable when one of
// the program's is ready: a private epoll set of them (poll, select), or the
// program's epoll instance itself (epoll_wait). docs/design/syscalls.md.
#include <sys/epoll.h>
#include <sys/select.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <ctime>
#include <vector>

#include "core/dispatch.hpp"
#include "core/interrupt.hpp"
#include "core/wait.hpp"
#include "io/fd_wait.hpp"
#include "io/offload.hpp"
#include "io/thread_errno.hpp"
#include "weft/io.h"

namespace weft::detail::io {

namespace {

bool on_weft_thread() { return current_worker() != nullptr; }

// What a wait below returns when it cannot park the caller (a descriptor
// number beyond the table, no epoll instance to spare): the caller hands its
// plain call to a helper thread, nothing having been changed yet.
constexpr int cannot_park = -2;

constexpr std::int64_t ns_per_s = 1'000'000'000;

// The absolute deadline of a relative timeout that starts now (0: none).
std::int64_t deadline_after(const timespec* t) {
    if (t == nullptr) return 0;
    return monotonic_ns() + std::int64_t(t->tv_sec) * ns_per_s + t->tv_nsec;
}

bool valid(const timespec* t) { return t == nullptr || (t->tv_sec >= 0 && t->tv_nsec >= 0 && t->tv_nsec < ns_per_s); }
bool zero(const timespec* t) { return t != nullptr && t->tv_sec == 0 && t->tv_nsec == 0; }

// Parks the caller until `fd` (which the poller can watch) is readable, then
// `try_now()` again, until it returns non-zero or the deadline passes (then
// the last try's result). try_now returns what the call returns: a count, 0
// for nothing ready, or -1 with errno set.
template <class Try>
int wait_until_ready(int fd, fd_entry* e, std::int64_t deadline, const char* what, Try try_now) {
    for (;;) {
        std::uint64_t seen = ready_count(e, for_read);
        int r = try_now();
        if (r != 0) return r;
        start_watching();
        int rc = wait_ready(fd, e, for_read, seen, deadline, what);
        if (rc == ETIMEDOUT) return try_now();
        if (rc == EINTR) {
            // Linux restarts none of these calls after a signal, SA_RESTART or
            // not; 0: no handler ran after all, so the wait goes on.
            rc = take_signals(false);
            if (rc == 0) continue;
        }
        if (rc == EBADF || rc == EINTR) {  // weft_close closed fd while the caller waited; a signal
            set_thread_errno(rc);
            return -1;
        }
        if (rc != 0) return cannot_park;
    }
}

// poll(2) with a deadline (0: none) on a weft thread.
int poll_parked(pollfd* fds, nfds_t nfds, std::int64_t deadline, const char* what) {
    int r = poll(fds, nfds, 0);
    if (r != 0) return r;
    // Nothing ready: a private epoll set (level-triggered) of the
    // descriptors, itself watched by the poller, readable when one of them is.
    int set = epoll_create1(EPOLL_CLOEXEC);
    fd_entry* e = set < 0 ? nullptr : entry_of(set);
    if (e == nullptr) {
        if (set >= 0) close(set);
        return cannot_park;
    }
    for (nfds_t i = 0; i < nfds; ++i) {
        if (fds[i].fd < 0) continue;
        epoll_event ev{};
        ev.events = static_cast<std::uint16_t>(fds[i].events);  // POLL* and EPOLL* bits agree on Linux
        ev.data.fd = fds[i].fd;
        (void)epoll_ctl(set, EPOLL_CTL_ADD, fds[i].fd, &ev);  // a file, a bad or repeated fd: poll reports it
    }
    r = wait_until_ready(set, e, deadline, what, [&] { return poll(fds, nfds, 0); });
    close(set);
    return r;
}

// What select(2) counts as ready in each set (the kernel's POLLIN_SET,
// POLLOUT_SET and POLLEX_SET).
constexpr short select_read = POLLIN | POLLRDNORM | POLLRDBAND | POLLHUP | POLLERR;
constexpr short select_write = POLLOUT | POLLWRNORM | POLLWRBAND | POLLERR;
constexpr short select_except = POLLPRI;

// select(2) with a deadline (0: none) on a weft thread, through poll_parked.
int select_parked(int nfds, fd_set* rd, fd_set* wr, fd_set* ex, std::int64_t deadline, const char* what) {
    std::vector<pollfd> p;
    for (int fd = 0; fd < nfds; ++fd) {
        short ev = 0;
        if (rd != nullptr && FD_ISSET(fd, rd)) ev |= POLLIN;
        if (wr != nullptr && FD_ISSET(fd, wr)) ev |= POLLOUT;
        if (ex != nullptr && FD_ISSET(fd, ex)) ev |= POLLPRI;
        if (ev != 0) p.push_back({fd, ev, 0});
    }
    int r = poll_parked(p.data(), p.size(), deadline, what);
    if (r < 0) return r;
    for (const pollfd& q : p)
        if ((q.revents & POLLNVAL) != 0) {  // select fails on a descriptor that is not open
            set_thread_errno(EBADF);
            return -1;
        }
    int count = 0;
    auto report = [&](fd_set* set, const pollfd& q, short bits) {
        if (set == nullptr || !FD_ISSET(q.fd, set)) return;
        if ((q.revents & bits) == 0) {
            FD_CLR(q.fd, set);
        } else {
            ++count;
        }
    };
    for (const pollfd& q : p) {
        report(rd, q, select_read);
        report(wr, q, select_write);
        report(ex, q, select_except);
    }
    return count;
}

// The program's epoll instance is readable while events wait in it.
int epoll_parked(int epfd, epoll_event* events, int maxevents, std::int64_t deadline, const char* what) {
    fd_entry* e = entry_of(epfd);
    if (e == nullptr) return cannot_park;
    return wait_until_ready(epfd, e, deadline, what, [&] { return epoll_wait(epfd, events, maxevents, 0); });
}

// The result of a parked call: errno as the caller had it unless the call
// failed (thread_errno.hpp: the caller may be on another kernel thread now).
template <class Plain>
int finish(int r, int saved, const char* what, Plain plain) {
    if (r == cannot_park) return offload(what, plain);
    if (r >= 0) set_thread_errno(saved);
    return r;
}

}  // namespace

}  // namespace weft::detail::io

using namespace weft::detail;
using namespace weft::detail::io;

extern "C" {

int weft_poll(struct pollfd* fds, nfds_t nfds, int timeout_ms) {
    auto plain = [&] { return poll(fds, nfds, timeout_ms); };
    if (!on_weft_thread() || timeout_ms == 0) return plain();
    int saved = thread_errno();
    std::int64_t deadline = timeout_ms < 0 ? 0 : monotonic_ns() + std::int64_t(timeout_ms) * 1'000'000;
    return finish(poll_parked(fds, nfds, deadline, "weft_poll"), saved, "weft_poll", plain);
}

int weft_ppoll(struct pollfd* fds, nfds_t nfds, const struct timespec* timeout, const sigset_t* sigmask) {
    auto plain = [&] { return ppoll(fds, nfds, timeout, sigmask); };
    // A bad timeout fails at once; a mask is applied by the kernel on a helper
    // thread, the only thread where it can be (docs/design/syscalls.md).
    if (!on_weft_thread() || zero(timeout) || !valid(timeout)) return plain();
    if (sigmask != nullptr) return offload("weft_ppoll", plain);
    int saved = thread_errno();
    return finish(poll_parked(fds, nfds, deadline_after(timeout), "weft_ppoll"), saved, "weft_ppoll", plain);
}

int weft_select(int nfds, fd_set* readfds, fd_set* writefds, fd_set* exceptfds, struct timeval* timeout) {
    auto plain = [&] { return select(nfds, readfds, writefds, exceptfds, timeout); };
    if (!on_weft_thread() || nfds < 0 || nfds > FD_SETSIZE) return plain();  // EINVAL at once, or beyond fd_set
    timespec t{};
    if (timeout != nullptr) {
        if (timeout->tv_sec < 0 || timeout->tv_usec < 0) return plain();  // EINVAL at once
        // Microseconds beyond a second carry into the seconds, as Linux's select takes them.
        t = {timeout->tv_sec + timeout->tv_usec / 1'000'000, timeout->tv_usec % 1'000'000 * 1000};
        if (zero(&t)) return plain();
    }
    int saved = thread_errno();
    std::int64_t deadline = deadline_after(timeout != nullptr ? &t : nullptr);
    int r = select_parked(nfds, readfds, writefds, exceptfds, deadline, "weft_select");
    if (r != cannot_park && timeout != nullptr) {
        // Linux's select leaves the time not slept in *timeout.
        std::int64_t left = deadline - monotonic_ns();
        if (left < 0) left = 0;
        timeout->tv_sec = static_cast<time_t>(left / ns_per_s);
        timeout->tv_usec = static_cast<suseconds_t>(left % ns_per_s / 1000);
    }
    return finish(r, saved, "weft_select", plain);
}

int weft_pselect(int nfds, fd_set* readfds, fd_set* writefds, fd_set* exceptfds, const struct timespec* timeout,
                 const sigset_t* sigmask) {
    auto plain = [&] { return pselect(nfds, readfds, writefds, exceptfds, timeout, sigmask); };
    if (!on_weft_thread() || nfds < 0 || nfds > FD_SETSIZE || zero(timeout) || !valid(timeout)) return plain();
    if (sigmask != nullptr) return offload("weft_pselect", plain);
    int saved = thread_errno();
    int r = select_parked(nfds, readfds, writefds, exceptfds, deadline_after(timeout), "weft_pselect");
    return finish(r, saved, "weft_pselect", plain);
}

int weft_epoll_wait(int epfd, struct epoll_event* events, int maxevents, int timeout_ms) {
    auto plain = [&] { return epoll_wait(epfd, events, maxevents, timeout_ms); };
    if (!on_weft_thread() || timeout_ms == 0) return plain();
    int saved = thread_errno();
    std::int64_t deadline = timeout_ms < 0 ? 0 : monotonic_ns() + std::int64_t(timeout_ms) * 1'000'000;
    return finish(epoll_parked(epfd, events, maxevents, deadline, "weft_epoll_wait"), saved, "weft_epoll_wait", plain);
}

int weft_epoll_pwait(int epfd, struct epoll_event* events, int maxevents, int timeout_ms, const sigset_t* sigmask) {
    if (sigmask == nullptr) return weft_epoll_wait(epfd, events, maxevents, timeout_ms);
    auto plain = [&] { return epoll_pwait(epfd, events, maxevents, timeout_ms, sigmask); };
    if (!on_weft_thread() || timeout_ms == 0) return plain();
    return offload("weft_epoll_pwait", plain);
}

}  // extern "C"
