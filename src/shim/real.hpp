// The C library's own definitions of the functions the shim replaces.
//
// real::name(args) calls the C library's `name` (through passthrough.S's
// __wrap_name and the table real.cpp fills), with the C library's prototype.
#pragma once

#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace weft::shim {

enum real_index : int {
#define SHIM_FN(name) real_##name,
#include "shim/interposed.def"
#undef SHIM_FN
    real_count
};

}  // namespace weft::shim

extern "C" void* weft_shim_real[weft::shim::real_count];

// What glibc's C pthread_cleanup_push/pop macros call; <pthread.h> declares
// them only for C compiled without exceptions (cancel.cpp defines them).
extern "C" {
void __pthread_register_cancel(__pthread_unwind_buf_t* buf);
void __pthread_unregister_cancel(__pthread_unwind_buf_t* buf);
void __pthread_register_cancel_defer(__pthread_unwind_buf_t* buf);
void __pthread_unregister_cancel_restore(__pthread_unwind_buf_t* buf);
[[noreturn]] void __pthread_unwind_next(__pthread_unwind_buf_t* buf);
// The checked calls _FORTIFY_SOURCE emits; glibc's headers declare them only
// in a fortified compilation (io.cpp defines them).
ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen);
ssize_t __recv_chk(int fd, void* buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void* buf, size_t n, size_t buflen, int flags, struct sockaddr* from,
                       socklen_t* fromlen);
int __poll_chk(struct pollfd* fds, nfds_t nfds, int timeout, size_t fdslen);
int __ppoll_chk(struct pollfd* fds, nfds_t nfds, const struct timespec* timeout, const sigset_t* ss, size_t fdslen);
[[noreturn]] void __chk_fail(void);
}

// One declaration per passthrough, typed like the C library's function (some
// of which glibc marks deprecated: naming them here is no use of them).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#define SHIM_FN(name) extern "C" decltype(::name) __wrap_##name;
#include "shim/interposed.def"
#undef SHIM_FN
#pragma GCC diagnostic pop

namespace weft::shim::real {
#define SHIM_FN(name) inline constexpr auto* name = &::__wrap_##name;
#include "shim/interposed.def"
#undef SHIM_FN
}  // namespace weft::shim::real
