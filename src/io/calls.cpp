// The weft_ system calls of weft/io.h: try without blocking, park on the
// descriptor's readiness (fd_wait.hpp), or hand the call to a helper thread
// (offload.hpp). docs/design/syscalls.md tells which call takes which way.
#include "weft/io.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <vector>

#include "core/dispatch.hpp"
#include "core/interrupt.hpp"
#include "core/wait.hpp"
#include "io/fd_wait.hpp"
#include "io/offload.hpp"
#include "io/thread_errno.hpp"

namespace weft::detail::io {

namespace {

bool on_weft_thread() { return current_worker() != nullptr; }

// Whether the program made fd non-blocking: then a call that would block
// returns EAGAIN as it always did. Asked only when the call would block.
bool user_nonblocking(int fd) {
    int fl = fcntl(fd, F_GETFL);
    return fl >= 0 && (fl & O_NONBLOCK) != 0;
}

// The deadline SO_RCVTIMEO / SO_SNDTIMEO sets for a call on a socket that
// starts now (0: none, or not a socket).
std::int64_t socket_deadline(int fd, direction d) {
    timeval tv{};
    socklen_t len = sizeof tv;
    if (getsockopt(fd, SOL_SOCKET, d == for_read ? SO_RCVTIMEO : SO_SNDTIMEO, &tv, &len) != 0) return 0;
    if (tv.tv_sec == 0 && tv.tv_usec == 0) return 0;
    return monotonic_ns() + std::int64_t(tv.tv_sec) * 1'000'000'000 + std::int64_t(tv.tv_usec) * 1'000;
}

// What to do after a try that would block (EAGAIN): 0 to try again once fd
// is ready, or the errno the call returns (EAGAIN for a non-blocking
// descriptor or an expired SO_*TIMEO, EBADF when weft_close closed it, EINTR
// when a signal interrupted it and the call is not restarted), or -1
// when epoll cannot watch fd (a regular file): then the plain call goes to a
// helper thread. `deadline` is computed on the first wait of the call.
int await_ready(int fd, fd_entry* e, direction d, std::uint64_t seen, std::int64_t* deadline, const char* what) {
    start_watching();
    // O_NONBLOCK does not make a regular file's read return EAGAIN: such a
    // read that would wait for the disk goes to a helper.
    if (user_nonblocking(fd)) return epoll_refuses(fd) ? -1 : EAGAIN;
    if (*deadline < 0) *deadline = socket_deadline(fd, d);
    int rc = wait_ready(fd, e, d, seen, *deadline, what);
    if (rc == ETIMEDOUT) return EAGAIN;
    // Linux restarts a call on a socket with a timeout (SO_*TIMEO) never.
    if (rc == EINTR) return take_signals(*deadline == 0);
    if (rc == 0 || rc == EBADF) return rc;
    return -1;  // epoll would not take fd after all
}

// A call that moves one piece of data: try_call() makes it without blocking
// (MSG_DONTWAIT, RWF_NOWAIT), plain() as the program made it.
template <class Try, class Plain>
long ready_call(int fd, direction d, const char* what, Try try_call, Plain plain) {
    if (!on_weft_thread()) return plain();
    if (fd < 0) return plain();  // EBADF at once
    fd_entry* e = entry_of(fd);
    if (e == nullptr) return offload(what, plain);
    int saved = thread_errno();
    std::int64_t deadline = -1;
    for (;;) {
        std::uint64_t seen = ready_count(e, d);
        long r = try_call();
        if (r >= 0) {
            set_thread_errno(saved);
            return r;
        }
        if (thread_errno() == EOPNOTSUPP && d == for_read) return offload(what, plain);  // no RWF_NOWAIT for this file
        if (thread_errno() != EAGAIN) return r;
        int rc = await_ready(fd, e, d, seen, &deadline, what);
        if (rc < 0) return offload(what, plain);
        if (rc != 0) {
            set_thread_errno(rc);
            return -1;
        }
    }
}

// A write that blocks until all of `total` bytes are taken, as a blocking
// write to a pipe or a stream socket does: try_at(done) writes from byte
// `done` on without blocking. A failure after some bytes went returns the
// count written, as the kernel does for a timeout.
template <class TryAt, class Plain>
long write_all(int fd, std::size_t total, const char* what, TryAt try_at, Plain plain) {
    if (!on_weft_thread()) return plain();
    if (fd < 0) return plain();  // EBADF at once
    fd_entry* e = entry_of(fd);
    if (e == nullptr) return offload(what, plain);
    int saved = thread_errno();
    std::int64_t deadline = -1;
    std::size_t done = 0;
    for (;;) {
        std::uint64_t seen = ready_count(e, for_write);
        long r = try_at(done);
        if (r >= 0) {
            done += static_cast<std::size_t>(r);
            if (done >= total) break;
            continue;  // a partial write: the rest, once there is room
        }
        if (thread_errno() == EOPNOTSUPP && done == 0) return offload(what, plain);
        if (thread_errno() != EAGAIN) {
            if (done > 0) break;
            return -1;
        }
        int rc = await_ready(fd, e, for_write, seen, &deadline, what);
        if (rc < 0 && done == 0) return offload(what, plain);
        if (rc != 0) {
            if (done > 0) break;
            set_thread_errno(rc < 0 ? EAGAIN : rc);
            return -1;
        }
    }
    set_thread_errno(saved);
    return static_cast<long>(done);
}

// iov with its first `skip` bytes taken off.
std::vector<iovec> iov_after(const iovec* iov, int n, std::size_t skip) {
    std::vector<iovec> out;
    for (int i = 0; i < n; ++i) {
        if (skip >= iov[i].iov_len) {
            skip -= iov[i].iov_len;
            continue;
        }
        out.push_back({static_cast<char*>(iov[i].iov_base) + skip, iov[i].iov_len - skip});
        skip = 0;
    }
    return out;
}

std::size_t iov_bytes(const iovec* iov, int n) {
    std::size_t b = 0;
    for (int i = 0; i < n; ++i) b += iov[i].iov_len;
    return b;
}

bool is_listening(int fd) {
    int on = 0;
    socklen_t len = sizeof on;
    return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on != 0;
}

}  // namespace

}  // namespace weft::detail::io

using namespace weft::detail;
using namespace weft::detail::io;

extern "C" {

ssize_t weft_read(int fd, void* buf, size_t count) {
    iovec v{buf, count};
    return ready_call(
        fd, for_read, "weft_read", [&] { return preadv2(fd, &v, 1, -1, RWF_NOWAIT); },
        [&] { return read(fd, buf, count); });
}

ssize_t weft_readv(int fd, const struct iovec* iov, int iovcnt) {
    return ready_call(
        fd, for_read, "weft_readv", [&] { return preadv2(fd, iov, iovcnt, -1, RWF_NOWAIT); },
        [&] { return readv(fd, iov, iovcnt); });
}

ssize_t weft_write(int fd, const void* buf, size_t count) {
    return write_all(
        fd, count, "weft_write",
        [&](std::size_t done) {
            iovec v{const_cast<char*>(static_cast<const char*>(buf)) + done, count - done};
            return pwritev2(fd, &v, 1, -1, RWF_NOWAIT);
        },
        [&] { return write(fd, buf, count); });
}

ssize_t weft_writev(int fd, const struct iovec* iov, int iovcnt) {
    return write_all(
        fd, iov_bytes(iov, iovcnt), "weft_writev",
        [&](std::size_t done) {
            if (done == 0) return pwritev2(fd, iov, iovcnt, -1, RWF_NOWAIT);
            std::vector<iovec> rest = iov_after(iov, iovcnt, done);
            return pwritev2(fd, rest.data(), static_cast<int>(rest.size()), -1, RWF_NOWAIT);
        },
        [&] { return writev(fd, iov, iovcnt); });
}

ssize_t weft_recvfrom(int fd, void* buf, size_t len, int flags, struct sockaddr* from, socklen_t* fromlen) {
    auto plain = [&] { return recvfrom(fd, buf, len, flags, from, fromlen); };
    if ((flags & MSG_DONTWAIT) != 0) return plain();
    if ((flags & MSG_WAITALL) != 0 && on_weft_thread()) {
        // Until len bytes, EOF or an error, as the kernel's MSG_WAITALL.
        std::size_t done = 0;
        while (done < len) {
            ssize_t r = ready_call(
                fd, for_read, "weft_recv",
                [&] {
                    return recvfrom(fd, static_cast<char*>(buf) + done, len - done, flags | MSG_DONTWAIT, from,
                                    fromlen);
                },
                [&] { return recvfrom(fd, static_cast<char*>(buf) + done, len - done, flags, from, fromlen); });
            if (r < 0) return done > 0 ? static_cast<ssize_t>(done) : r;
            if (r == 0) break;
            done += static_cast<std::size_t>(r);
        }
        return static_cast<ssize_t>(done);
    }
    return ready_call(
        fd, for_read, "weft_recv", [&] { return recvfrom(fd, buf, len, flags | MSG_DONTWAIT, from, fromlen); }, plain);
}

ssize_t weft_recv(int fd, void* buf, size_t len, int flags) {
    return weft_recvfrom(fd, buf, len, flags, nullptr, nullptr);
}

ssize_t weft_recvmsg(int fd, struct msghdr* msg, int flags) {
    auto plain = [&] { return recvmsg(fd, msg, flags); };
    if ((flags & MSG_DONTWAIT) != 0) return plain();
    if ((flags & MSG_WAITALL) != 0) return on_weft_thread() ? offload("weft_recvmsg", plain) : plain();
    return ready_call(
        fd, for_read, "weft_recvmsg", [&] { return recvmsg(fd, msg, flags | MSG_DONTWAIT); }, plain);
}

ssize_t weft_sendto(int fd, const void* buf, size_t len, int flags, const struct sockaddr* to, socklen_t tolen) {
    auto plain = [&] { return sendto(fd, buf, len, flags, to, tolen); };
    if ((flags & MSG_DONTWAIT) != 0) return plain();
    return write_all(
        fd, len, "weft_send",
        [&](std::size_t done) {
            return sendto(fd, static_cast<const char*>(buf) + done, len - done, flags | MSG_DONTWAIT, to, tolen);
        },
        plain);
}

ssize_t weft_send(int fd, const void* buf, size_t len, int flags) {
    return weft_sendto(fd, buf, len, flags, nullptr, 0);
}

ssize_t weft_sendmsg(int fd, const struct msghdr* msg, int flags) {
    auto plain = [&] { return sendmsg(fd, msg, flags); };
    if ((flags & MSG_DONTWAIT) != 0) return plain();
    std::size_t total = iov_bytes(msg->msg_iov, static_cast<int>(msg->msg_iovlen));
    return write_all(
        fd, total, "weft_sendmsg",
        [&](std::size_t done) {
            if (done == 0) return sendmsg(fd, msg, flags | MSG_DONTWAIT);
            // The rest of a stream: ancillary data went with the first part.
            std::vector<iovec> rest = iov_after(msg->msg_iov, static_cast<int>(msg->msg_iovlen), done);
            msghdr m{};
            m.msg_iov = rest.data();
            m.msg_iovlen = rest.size();
            return sendmsg(fd, &m, flags | MSG_DONTWAIT);
        },
        plain);
}

int weft_accept4(int fd, struct sockaddr* addr, socklen_t* addrlen, int flags) {
    auto plain = [&] { return accept4(fd, addr, addrlen, flags); };
    if (!on_weft_thread() || fd < 0) return plain();
    fd_entry* e = entry_of(fd);
    if (e == nullptr || user_nonblocking(fd)) return e == nullptr ? offload("weft_accept", plain) : plain();
    int saved = thread_errno();
    std::int64_t deadline = -1;
    weft_mutex_lock(accept_lock(e));
    int r;
    for (;;) {
        std::uint64_t seen = ready_count(e, for_read);
        pollfd p{fd, POLLIN, 0};
        // A connection waits; or fd is no listening socket, and accept says
        // what is wrong at once.
        if (poll(&p, 1, 0) != 0 || !is_listening(fd)) {
            r = accept4(fd, addr, addrlen, flags);
            if (r >= 0) set_thread_errno(saved);
            break;
        }
        int rc = await_ready(fd, e, for_read, seen, &deadline, "weft_accept");
        if (rc != 0) {
            set_thread_errno(rc < 0 ? EINVAL : rc);
            r = -1;
            break;
        }
    }
    weft_mutex_unlock(accept_lock(e));
    return r;
}

int weft_accept(int fd, struct sockaddr* addr, socklen_t* addrlen) { return weft_accept4(fd, addr, addrlen, 0); }

int weft_connect(int fd, const struct sockaddr* addr, socklen_t addrlen) {
    auto plain = [&] { return connect(fd, addr, addrlen); };
    if (!on_weft_thread() || user_nonblocking(fd)) return plain();
    return offload("weft_connect", plain);
}

pid_t weft_waitpid(pid_t pid, int* status, int options) {
    auto plain = [&] { return waitpid(pid, status, options); };
    if (!on_weft_thread() || (options & WNOHANG) != 0) return plain();
    int saved = thread_errno();
    pid_t r = waitpid(pid, status, options | WNOHANG);
    if (r != 0) {
        if (r > 0) set_thread_errno(saved);
        return r;
    }
    return offload("weft_waitpid", plain);
}

int weft_close(int fd) {
    wake_closed(fd);
    return close(fd);
}

}  // extern "C"
