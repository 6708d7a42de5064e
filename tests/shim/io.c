/* Conformance: read, write, recv, send, accept, connect, poll, waitpid and
 * close. Under the shim (run with one worker) a thread that waits in one of
 * them must block only itself: each wait here ends only when another thread
 * (on the same worker) has acted. On glibc's threads the same lines print. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static int pipe_fds[2];
static volatile int waiting;

static void* reader(void* a) {
    char buf[8] = {0};
    waiting = 1;
    ssize_t n = read(pipe_fds[0], buf, sizeof buf);
    *(ssize_t*)a = n == 5 && memcmp(buf, "hello", 5) == 0 ? n : -1;
    return NULL;
}

static void wait_for_waiter(void) {
    while (!waiting) sched_yield();
    struct timespec ts = {0, 5000000L}; /* the waiter is in its call now */
    nanosleep(&ts, NULL);
    waiting = 0;
}

static void* accept_echo(void* a) {
    int ls = *(int*)a;
    waiting = 1;
    int c = accept(ls, NULL, NULL);
    if (c < 0) return (void*)1;
    char buf[16];
    ssize_t n = recv(c, buf, sizeof buf, 0);
    if (n <= 0 || send(c, buf, (size_t)n, 0) != n) return (void*)2;
    close(c);
    return NULL;
}

static void* child_waiter(void* a) {
    int status = 0;
    waiting = 1;
    pid_t pid = *(pid_t*)a;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return (void*)1;
    return (void*)(long)WEXITSTATUS(status);
}

int main(void) {
    /* A read on an empty pipe waits until main writes. */
    CHECK_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
    int flags = fcntl(pipe_fds[0], F_GETFL);
    pthread_t t;
    ssize_t got = 0;
    CHECK_EQ(pthread_create(&t, NULL, reader, &got), 0);
    wait_for_waiter();
    CHECK_EQ(fcntl(pipe_fds[0], F_GETFL), flags); /* the program's flags, while it waits */
    CHECK_EQ(write(pipe_fds[1], "hello", 5), 5);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(got, 5);

    /* poll: a timeout, then EOF. */
    struct pollfd p = {pipe_fds[0], POLLIN, 0};
    CHECK_EQ(poll(&p, 1, 10), 0);
    CHECK_EQ(close(pipe_fds[1]), 0);
    CHECK_EQ(poll(&p, 1, -1), 1);
    char c;
    CHECK_EQ(read(pipe_fds[0], &c, 1), 0);
    CHECK_EQ(close(pipe_fds[0]), 0);

    /* An echo over loopback: the server thread waits in accept, then recv. */
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(ls >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    CHECK_EQ(bind(ls, (struct sockaddr*)&a, sizeof a), 0);
    CHECK_EQ(getsockname(ls, (struct sockaddr*)&a, &alen), 0);
    CHECK_EQ(listen(ls, 4), 0);
    CHECK_EQ(pthread_create(&t, NULL, accept_echo, &ls), 0);
    wait_for_waiter();
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(s >= 0);
    CHECK_EQ(connect(s, (struct sockaddr*)&a, sizeof a), 0);
    struct timespec ts = {0, 5000000L}; /* the server waits in recv now */
    nanosleep(&ts, NULL);
    CHECK_EQ(send(s, "ping", 4, 0), 4);
    char buf[8] = {0};
    CHECK_EQ(recv(s, buf, sizeof buf, MSG_WAITALL), 4);
    CHECK(memcmp(buf, "ping", 4) == 0);
    void* rv = (void*)9;
    CHECK_EQ(pthread_join(t, &rv), 0);
    CHECK(rv == NULL);
    CHECK_EQ(close(s), 0);
    CHECK_EQ(close(ls), 0);

    /* waitpid on a child that exits once main has written to it. */
    CHECK_EQ(pipe2(pipe_fds, O_CLOEXEC), 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) _exit(read(pipe_fds[0], &c, 1) == 1 ? c : 99);
    CHECK_EQ(pthread_create(&t, NULL, child_waiter, &pid), 0);
    wait_for_waiter();
    CHECK_EQ(write(pipe_fds[1], "\x05", 1), 1);
    CHECK_EQ(pthread_join(t, &rv), 0);
    CHECK_EQ((long)rv, 5);
    close(pipe_fds[0]);
    close(pipe_fds[1]);

    printf("io: %d checks passed\n", shim_checks);
    return 0;
}
