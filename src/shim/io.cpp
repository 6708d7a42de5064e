// The C library's blocking system calls, on a weft thread, block only that
// thread: each is weft/io.h's call of the same name (which, on a kernel
// thread that is not a weft thread, is the C library's). Calls made before
// the runtime is up go to the C library.
#include <weft/io.h>

#include "shim/real.hpp"
#include "shim/shim.hpp"
#include "shim/signals.hpp"

using namespace weft::shim;

namespace {

// The end of a blocking call is a delivery point (signals.hpp): a signal
// routed to the thread as its wait ended runs its handler before the call
// returns, as the kernel runs it on the way back from the call.
template <class T>
T delivered(T r) {
    if (weft::detail::ult* u = self_ult(); u != nullptr) deliver_pending_signals(u);
    return r;
}

}  // namespace

extern "C" {

ssize_t read(int fd, void* buf, size_t n) {
    return ready() ? delivered(weft_read(fd, buf, n)) : real::read(fd, buf, n);
}

ssize_t write(int fd, const void* buf, size_t n) {
    return ready() ? delivered(weft_write(fd, buf, n)) : real::write(fd, buf, n);
}

ssize_t readv(int fd, const struct iovec* iov, int n) {
    return ready() ? delivered(weft_readv(fd, iov, n)) : real::readv(fd, iov, n);
}

ssize_t writev(int fd, const struct iovec* iov, int n) {
    return ready() ? delivered(weft_writev(fd, iov, n)) : real::writev(fd, iov, n);
}

ssize_t recv(int fd, void* buf, size_t n, int flags) {
    return ready() ? delivered(weft_recv(fd, buf, n, flags)) : real::recv(fd, buf, n, flags);
}

ssize_t send(int fd, const void* buf, size_t n, int flags) {
    return ready() ? delivered(weft_send(fd, buf, n, flags)) : real::send(fd, buf, n, flags);
}

ssize_t recvfrom(int fd, void* buf, size_t n, int flags, struct sockaddr* from, socklen_t* fromlen) {
    return ready() ? delivered(weft_recvfrom(fd, buf, n, flags, from, fromlen))
                   : real::recvfrom(fd, buf, n, flags, from, fromlen);
}

ssize_t sendto(int fd, const void* buf, size_t n, int flags, const struct sockaddr* to, socklen_t tolen) {
    return ready() ? delivered(weft_sendto(fd, buf, n, flags, to, tolen)) : real::sendto(fd, buf, n, flags, to, tolen);
}

ssize_t recvmsg(int fd, struct msghdr* msg, int flags) {
    return ready() ? delivered(weft_recvmsg(fd, msg, flags)) : real::recvmsg(fd, msg, flags);
}

ssize_t sendmsg(int fd, const struct msghdr* msg, int flags) {
    return ready() ? delivered(weft_sendmsg(fd, msg, flags)) : real::sendmsg(fd, msg, flags);
}

int accept(int fd, struct sockaddr* addr, socklen_t* len) {
    return ready() ? delivered(weft_accept(fd, addr, len)) : real::accept(fd, addr, len);
}

int accept4(int fd, struct sockaddr* addr, socklen_t* len, int flags) {
    return ready() ? delivered(weft_accept4(fd, addr, len, flags)) : real::accept4(fd, addr, len, flags);
}

int connect(int fd, const struct sockaddr* addr, socklen_t len) {
    return ready() ? delivered(weft_connect(fd, addr, len)) : real::connect(fd, addr, len);
}

int poll(struct pollfd* fds, nfds_t n, int timeout_ms) {
    return ready() ? delivered(weft_poll(fds, n, timeout_ms)) : real::poll(fds, n, timeout_ms);
}

int ppoll(struct pollfd* fds, nfds_t n, const struct timespec* timeout, const sigset_t* mask) {
    if (!ready()) return real::ppoll(fds, n, timeout, mask);
    call_mask m(mask);
    return delivered(weft_ppoll(fds, n, timeout, m.applied() ? nullptr : mask));
}

int select(int n, fd_set* rd, fd_set* wr, fd_set* ex, struct timeval* timeout) {
    return ready() ? delivered(weft_select(n, rd, wr, ex, timeout)) : real::select(n, rd, wr, ex, timeout);
}

int pselect(int n, fd_set* rd, fd_set* wr, fd_set* ex, const struct timespec* timeout, const sigset_t* mask) {
    if (!ready()) return real::pselect(n, rd, wr, ex, timeout, mask);
    call_mask m(mask);
    return delivered(weft_pselect(n, rd, wr, ex, timeout, m.applied() ? nullptr : mask));
}

int epoll_wait(int epfd, struct epoll_event* events, int max, int timeout_ms) {
    return ready() ? delivered(weft_epoll_wait(epfd, events, max, timeout_ms))
                   : real::epoll_wait(epfd, events, max, timeout_ms);
}

int epoll_pwait(int epfd, struct epoll_event* events, int max, int timeout_ms, const sigset_t* mask) {
    if (!ready()) return real::epoll_pwait(epfd, events, max, timeout_ms, mask);
    call_mask m(mask);
    return delivered(weft_epoll_pwait(epfd, events, max, timeout_ms, m.applied() ? nullptr : mask));
}

pid_t waitpid(pid_t pid, int* status, int options) {
    return ready() ? delivered(weft_waitpid(pid, status, options)) : real::waitpid(pid, status, options);
}

pid_t wait(int* status) { return ready() ? delivered(weft_waitpid(-1, status, 0)) : real::wait(status); }

int close(int fd) { return ready() ? weft_close(fd) : real::close(fd); }

// The checked names: glibc's checks (a length beyond the buffer the compiler
// knows ends the program in __chk_fail), then the calls above.
ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen) {
    if (n > buflen) __chk_fail();
    return ready() ? delivered(weft_read(fd, buf, n)) : real::read(fd, buf, n);
}

ssize_t __recv_chk(int fd, void* buf, size_t n, size_t buflen, int flags) {
    if (n > buflen) __chk_fail();
    return ready() ? delivered(weft_recv(fd, buf, n, flags)) : real::recv(fd, buf, n, flags);
}

ssize_t __recvfrom_chk(int fd, void* buf, size_t n, size_t buflen, int flags, struct sockaddr* from,
                       socklen_t* fromlen) {
    if (n > buflen) __chk_fail();
    return ready() ? delivered(weft_recvfrom(fd, buf, n, flags, from, fromlen))
                   : real::recvfrom(fd, buf, n, flags, from, fromlen);
}

int __poll_chk(struct pollfd* fds, nfds_t n, int timeout_ms, size_t fdslen) {
    if (fdslen / sizeof *fds < n) __chk_fail();
    return ready() ? delivered(weft_poll(fds, n, timeout_ms)) : real::poll(fds, n, timeout_ms);
}

int __ppoll_chk(struct pollfd* fds, nfds_t n, const struct timespec* timeout, const sigset_t* mask, size_t fdslen) {
    if (fdslen / sizeof *fds < n) __chk_fail();
    return ppoll(fds, n, timeout, mask);
}

}  // extern "C"
