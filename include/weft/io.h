/* weft/io.h — system calls that block only the calling weft thread.
 *
 * Each call has the C library's signature, result and errno. On a weft thread
 * it never holds the worker while it waits: a call on a descriptor that is not
 * ready (a socket, pipe, FIFO, eventfd, terminal...) parks the calling thread
 * until the kernel reports the descriptor ready (epoll) and the worker runs its
 * other threads meanwhile; a call with no readiness to wait for (waitpid, a
 * connect, a read of a regular file that misses the page cache) is carried out
 * by one of weft's helper kernel threads while the caller is parked. Anywhere
 * else (a kernel thread that is not a weft thread, before weft_init) each is
 * the plain C library call.
 *
 * Descriptors keep their semantics: a descriptor the program made blocking
 * still blocks the caller (returns data, EOF or an error, never a spurious
 * EAGAIN), with SO_RCVTIMEO / SO_SNDTIMEO honoured (EAGAIN when they expire,
 * as Linux returns); one the program set O_NONBLOCK returns EAGAIN as before.
 * weft never changes a descriptor's flags (fcntl(F_GETFL) shows what the
 * program set). weft_close on a descriptor other threads wait on wakes them
 * with EBADF.
 *
 * Under libweft-pthread the C library's names (read, write, recv, accept,
 * poll, select, epoll_wait, waitpid, close, ...) are these calls, and so are
 * the checked names _FORTIFY_SOURCE makes the compiler call (__read_chk,
 * __recv_chk, __recvfrom_chk, __poll_chk, __ppoll_chk) (docs/shim.md). */
#ifndef WEFT_IO_H
#define WEFT_IO_H

#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

WEFT_API ssize_t weft_read(int fd, void *buf, size_t count);
WEFT_API ssize_t weft_write(int fd, const void *buf, size_t count);
WEFT_API ssize_t weft_readv(int fd, const struct iovec *iov, int iovcnt);
WEFT_API ssize_t weft_writev(int fd, const struct iovec *iov, int iovcnt);
WEFT_API ssize_t weft_recv(int fd, void *buf, size_t len, int flags);
WEFT_API ssize_t weft_send(int fd, const void *buf, size_t len, int flags);
WEFT_API ssize_t weft_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from, socklen_t *fromlen);
WEFT_API ssize_t weft_sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
                             socklen_t tolen);
WEFT_API ssize_t weft_recvmsg(int fd, struct msghdr *msg, int flags);
WEFT_API ssize_t weft_sendmsg(int fd, const struct msghdr *msg, int flags);
WEFT_API int weft_accept(int fd, struct sockaddr *addr, socklen_t *addrlen);
WEFT_API int weft_accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags);
WEFT_API int weft_connect(int fd, const struct sockaddr *addr, socklen_t addrlen);
/* timeout_ms < 0: no timeout; 0: returns at once, as poll(2). */
WEFT_API int weft_poll(struct pollfd *fds, nfds_t nfds, int timeout_ms);
/* With a null sigmask as poll with the timeout's precision. With a sigmask
 * the call is made by a helper thread, with that mask, while the caller is
 * parked: a signal the mask lets through may then be taken by the helper and
 * end the call with EINTR, as it ends the call of a glibc thread. */
WEFT_API int weft_ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout, const sigset_t *sigmask);
/* As select(2): the sets hold the ready descriptors on return, and *timeout
 * the time not waited (as Linux leaves it). */
WEFT_API int weft_select(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, struct timeval *timeout);
/* sigmask as weft_ppoll's. */
WEFT_API int weft_pselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
                          const struct timespec *timeout, const sigset_t *sigmask);
/* On the program's own epoll instance: parks the caller until the instance
 * has events (the poller watches the instance itself). sigmask as
 * weft_ppoll's. */
WEFT_API int weft_epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout_ms);
WEFT_API int weft_epoll_pwait(int epfd, struct epoll_event *events, int maxevents, int timeout_ms,
                              const sigset_t *sigmask);
WEFT_API pid_t weft_waitpid(pid_t pid, int *status, int options);
WEFT_API int weft_close(int fd);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_IO_H */
