/* Conformance: select, pselect, ppoll, epoll_wait, epoll_pwait, and the
 * checked names a _FORTIFY_SOURCE build calls (__read_chk, __recv_chk,
 * __recvfrom_chk, __poll_chk, __ppoll_chk). Under the shim (run with one
 * worker) a thread that waits in one of them must block only itself: each
 * wait here ends only when main, on the same worker, has written. On glibc's
 * threads the same lines print. */
#define _GNU_SOURCE
#ifdef __OPTIMIZE__ /* glibc's checked calls need an optimizing compilation */
#undef _FORTIFY_SOURCE
#define _FORTIFY_SOURCE 2
#endif
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"

static int fds[2]; /* the waiter waits on fds[0]; main writes to fds[1] */
static volatile int waiting;
static volatile size_t one = 1; /* a length the compiler cannot see: the checked call, not the plain one */

enum how {
    by_select,
    by_pselect,
    by_pselect_mask,
    by_ppoll,
    by_ppoll_mask,
    by_epoll_wait,
    by_epoll_pwait,
    by_read_chk,
    by_recv_chk,
    by_recvfrom_chk,
    by_poll_chk,
    by_ppoll_chk,
    hows
};
static const char* const names[hows] = {
    "select",      "pselect",    "pselect with a mask", "ppoll",          "ppoll with a mask", "epoll_wait",
    "epoll_pwait", "__read_chk", "__recv_chk",          "__recvfrom_chk", "__poll_chk",        "__ppoll_chk"};

/* Waits for fds[0] the given way; 1 when it saw it ready (and took the byte). */
static void* waiter(void* arg) {
    enum how h = (enum how)(long)arg;
    int fd = fds[0];
    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(fd, &rd);
    struct pollfd p[1] = {{fd, POLLIN, 0}};
    struct timespec ten_s = {10, 0};
    sigset_t mask;
    sigemptyset(&mask);
    char buf[4];
    long ok = 0;
    int ep = -1;
    if (h == by_epoll_wait || h == by_epoll_pwait) {
        ep = epoll_create1(EPOLL_CLOEXEC);
        struct epoll_event ev = {EPOLLIN, {.fd = fd}};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0) return (void*)0;
    }
    struct epoll_event got = {0, {0}};
    waiting = 1;
    switch (h) {
    case by_select: ok = select(fd + 1, &rd, NULL, NULL, NULL) == 1 && FD_ISSET(fd, &rd); break;
    case by_pselect: ok = pselect(fd + 1, &rd, NULL, NULL, &ten_s, NULL) == 1 && FD_ISSET(fd, &rd); break;
    case by_pselect_mask: ok = pselect(fd + 1, &rd, NULL, NULL, NULL, &mask) == 1 && FD_ISSET(fd, &rd); break;
    case by_ppoll: ok = ppoll(p, 1, NULL, NULL) == 1 && p[0].revents == POLLIN; break;
    case by_ppoll_mask: ok = ppoll(p, 1, &ten_s, &mask) == 1 && p[0].revents == POLLIN; break;
    case by_epoll_wait: ok = epoll_wait(ep, &got, 1, -1) == 1 && got.data.fd == fd; break;
    case by_epoll_pwait: ok = epoll_pwait(ep, &got, 1, 10000, &mask) == 1 && got.data.fd == fd; break;
    case by_read_chk: return (void*)(long)(read(fd, buf, one) == 1);
    case by_recv_chk: return (void*)(long)(recv(fd, buf, one, 0) == 1);
    case by_recvfrom_chk: return (void*)(long)(recvfrom(fd, buf, one, 0, NULL, NULL) == 1);
    case by_poll_chk: ok = poll(p, one, -1) == 1 && p[0].revents == POLLIN; break;
    case by_ppoll_chk: ok = ppoll(p, one, NULL, NULL) == 1 && p[0].revents == POLLIN; break;
    default: break;
    }
    if (ep >= 0) close(ep);
    return (void*)(long)(ok && read(fd, buf, 1) == 1);
}

static void wait_for_waiter(void) {
    while (!waiting) sched_yield();
    struct timespec ts = {0, 5000000L}; /* the waiter is in its call now */
    nanosleep(&ts, NULL);
    waiting = 0;
}

int main(void) {
    for (int h = 0; h < hows; ++h) {
        /* A socket pair, so that recv and recvfrom apply too. */
        CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
        pthread_t t;
        CHECK_EQ(pthread_create(&t, NULL, waiter, (void*)(long)h), 0);
        wait_for_waiter();
        CHECK_EQ(write(fds[1], "x", 1), 1);
        void* rv = NULL;
        CHECK_EQ(pthread_join(t, &rv), 0);
        if (rv != (void*)1) fprintf(stderr, "io_wait: the wait in %s did not see its byte\n", names[h]);
        CHECK(rv == (void*)1);
        close(fds[0]);
        close(fds[1]);
    }

    /* Timeouts: nothing ready, the call returns 0 after its time; select
     * leaves the time not slept in its timeval (none). */
    CHECK_EQ(pipe2(fds, O_CLOEXEC), 0);
    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(fds[0], &rd);
    struct timeval tv = {0, 20000};
    CHECK_EQ(select(fds[0] + 1, &rd, NULL, NULL, &tv), 0);
    CHECK(!FD_ISSET(fds[0], &rd));
    CHECK(tv.tv_sec == 0 && tv.tv_usec == 0);
    struct pollfd p = {fds[0], POLLIN, 0};
    struct timespec ms20 = {0, 20000000L};
    CHECK_EQ(ppoll(&p, 1, &ms20, NULL), 0);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {EPOLLIN, {.fd = fds[0]}};
    CHECK_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev), 0);
    CHECK_EQ(epoll_wait(ep, &ev, 1, 20), 0);
    /* Errors, at once: a descriptor that is not open, a descriptor that is
     * no epoll instance. */
    int closed = fds[1];
    close(fds[1]);
    FD_ZERO(&rd);
    FD_SET(closed, &rd);
    errno = 0;
    CHECK_EQ(select(closed + 1, &rd, NULL, NULL, NULL), -1);
    CHECK_EQ(errno, EBADF);
    errno = 0;
    CHECK_EQ(epoll_wait(fds[0], &ev, 1, -1), -1);
    CHECK_EQ(errno, EINVAL);
    close(ep);
    close(fds[0]);

    printf("io_wait: %d checks passed\n", shim_checks);
    return 0;
}
