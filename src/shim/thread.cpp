// Threads: pthread_create/join/detach/exit/self/equal on weft threads.
//
// A pthread_t under the shim is a weft_thread_t (a number, not an address);
// both are one machine word. Every call that names a thread goes through weft
// (join: ESRCH for an unknown one), and every glibc function that would read a
// pthread_t as the address of glibc's thread descriptor is replaced here,
// either by weft's equivalent (names) or by a refusal naming what is not built.
#include <sched.h>
#include <signal.h>

#include <cerrno>
#include <cstring>

#include "arch/stack.hpp"
#include "core/dispatch.hpp"
#include "core/runtime.hpp"
#include "core/thread_api.hpp"
#include "core/ult.hpp"
#include "core/worker.hpp"
#include "shim/attr.hpp"
#include "shim/kernel_threads.hpp"
#include "shim/shim.hpp"
#include "shim/tls_block.hpp"
#include "shim/tls_check.hpp"

using namespace weft::shim;

static_assert(sizeof(pthread_t) == sizeof(weft_thread_t), "a weft_thread_t must fit in a pthread_t");

namespace {

weft_thread_t weft_of(pthread_t t) { return reinterpret_cast<weft_thread_t>(t); }

bool on_weft_thread() { return weft_thread_self() != WEFT_THREAD_NULL; }

// The calling weft thread's stack (lowest usable byte, usable size: as glibc
// reports a thread's stack) into a shim attribute.
int own_stack_attr(pthread_attr_t* attr) {
    weft::detail::worker* w = weft::detail::current_worker();
    if (w == nullptr || w->current == nullptr || w->current->stack.lo == nullptr) return ESRCH;
    init_attr(attr);
    thread_attr* t = attr_of(attr);
    t->stack_addr = w->current->stack.lo;
    t->stack_size = w->current->stack.size;
    t->guard_size = weft::arch::stack_guard_size();
    return 0;
}

// A kernel thread's attributes, read with glibc's functions into a glibc
// attribute and copied into a shim attribute.
int kernel_thread_attr(pthread_t thread, pthread_attr_t* attr) {
    pthread_attr_t k;
    if (int rc = real::pthread_getattr_np(thread, &k); rc != 0) return rc;
    void* addr = nullptr;
    size_t size = 0, guard = 0;
    int detach = PTHREAD_CREATE_JOINABLE;
    real::pthread_attr_getstack(&k, &addr, &size);
    real::pthread_attr_getguardsize(&k, &guard);
    real::pthread_attr_getdetachstate(&k, &detach);
    real::pthread_attr_destroy(&k);
    init_attr(attr);
    thread_attr* t = attr_of(attr);
    t->stack_addr = addr;
    t->stack_size = size;
    t->guard_size = guard;
    t->detach_state = detach;
    return 0;
}

}  // namespace

extern "C" {

int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*fn)(void*), void* arg) {
    if (thread == nullptr || fn == nullptr) return EINVAL;
    if (!ready()) {
        // Before the runtime is up (a constructor that runs before the
        // shim's): a kernel thread, with default attributes (the attribute is
        // the shim's, not glibc's). It keeps working after the runtime starts
        // (docs/shim.md, "Kernel threads that are not weft threads").
        if (attr != nullptr && attr_of(attr) == nullptr) return EINVAL;
        pthread_attr_t ka;
        real::pthread_attr_init(&ka);
        const thread_attr* t = attr_of(attr);
        if (t != nullptr && t->detach_state == PTHREAD_CREATE_DETACHED)
            real::pthread_attr_setdetachstate(&ka, PTHREAD_CREATE_DETACHED);
        if (t != nullptr && t->stack_size != 0) real::pthread_attr_setstacksize(&ka, t->stack_size);
        bool joinable = t == nullptr || t->detach_state != PTHREAD_CREATE_DETACHED;
        int slot = joinable ? reserve_kernel_thread() : -1;
        if (joinable && slot < 0) {
            real::pthread_attr_destroy(&ka);
            return refuse("pthread_create of a 65th joinable thread before the runtime started",
                          "the shim remembers 64 such kernel threads", EAGAIN);
        }
        int rc = real::pthread_create(thread, &ka, fn, arg);
        real::pthread_attr_destroy(&ka);
        if (slot >= 0) {
            if (rc == 0)
                fill_kernel_thread(slot, *thread);
            else
                free_kernel_thread(slot);
        }
        return rc;
    }
    weft_attr_t wa;
    if (attr != nullptr) {
        weft_attr_init(&wa);
        const thread_attr* t = attr_of(attr);
        if (t == nullptr) return EINVAL;
        if (t->stack_addr != nullptr)
            return refuse("pthread_create with a stack of the program's own (pthread_attr_setstack)",
                          "weft allocates every thread's stack; not yet built", EINVAL);
        if (t->inherit_sched == PTHREAD_EXPLICIT_SCHED && t->policy != SCHED_OTHER)
            return refuse("pthread_create with a real-time policy (SCHED_FIFO, SCHED_RR)",
                          "weft's scheduler decides the order of weft threads", EPERM);
        wa.stack_size = t->stack_size;
        wa.detach_state = t->detach_state == PTHREAD_CREATE_DETACHED ? WEFT_CREATE_DETACHED : WEFT_CREATE_JOINABLE;
    }
    report_shared_tls_once();  // only a program with a second thread shares anything
    errno_keeper keep;         // the policy may run the child first (ws)
    void* tp = nullptr;
    if (int rc = give_tls_block(&fn, &arg, &tp); rc != 0) return rc;
    weft_thread_t h;
    // No attribute: weft's defaults, without copying them through `wa`.
    int rc = weft::detail::create_with_thread_pointer(&h, attr != nullptr ? &wa : nullptr, fn, arg, tp);
    if (rc == 0)
        *thread = reinterpret_cast<pthread_t>(h);
    else
        drop_tls_block(fn, arg);
    return rc;
}

int pthread_join(pthread_t thread, void** retval) {
    cancel_point cp;
    if (forget_kernel_thread(thread)) return real::pthread_join(thread, retval);
    errno_keeper keep;
    return weft_thread_join(weft_of(thread), retval);
}

int pthread_tryjoin_np(pthread_t, void**) {
    return refuse("pthread_tryjoin_np", "weft has no non-blocking join yet", ENOTSUP);
}
int pthread_timedjoin_np(pthread_t, void**, const struct timespec*) {
    return refuse("pthread_timedjoin_np", "weft has no timed join yet", ENOTSUP);
}
int pthread_clockjoin_np(pthread_t, void**, clockid_t, const struct timespec*) {
    return refuse("pthread_clockjoin_np", "weft has no timed join yet", ENOTSUP);
}

int pthread_detach(pthread_t thread) {
    if (forget_kernel_thread(thread)) return real::pthread_detach(thread);
    return weft_thread_detach(weft_of(thread));
}

void pthread_exit(void* retval) {
    // A kernel thread that is not a weft thread (created before the shim, or
    // by another library's raw clone) ends as glibc ends it.
    if (!on_weft_thread()) real::pthread_exit(retval);
    exit_running_cleanup(retval);  // then thread_local destructors (cancel.cpp)
}

pthread_t pthread_self(void) {
    if (!ready()) return real::pthread_self();
    weft_thread_t self = weft_thread_self();
    return self != WEFT_THREAD_NULL ? reinterpret_cast<pthread_t>(self) : real::pthread_self();
}

int pthread_equal(pthread_t a, pthread_t b) { return a == b; }

int pthread_setname_np(pthread_t thread, const char* name) {
    if (name == nullptr) return EINVAL;
    if (std::strlen(name) >= 16) return ERANGE;  // glibc's limit (the kernel's 16-byte comm)
    return weft_thread_setname(weft_of(thread), name);
}

int pthread_getname_np(pthread_t thread, char* buf, size_t len) {
    if (buf == nullptr || len < 16) return ERANGE;
    return weft_thread_getname(weft_of(thread), buf, len);
}

int pthread_sigqueue(pthread_t, int, const union sigval) {
    return refuse("pthread_sigqueue", "a weft thread's pending signals carry no value; pthread_kill is built", ENOTSUP);
}
int pthread_setschedparam(pthread_t, int, const struct sched_param*) {
    return refuse("pthread_setschedparam", "weft's scheduler decides the order of weft threads", ENOTSUP);
}
int pthread_getschedparam(pthread_t thread, int* policy, struct sched_param* param) {
    if (policy == nullptr || param == nullptr) return EINVAL;
    if (weft_thread_id(weft_of(thread)) == 0) return ESRCH;
    *policy = SCHED_OTHER;  // what every weft thread runs as
    std::memset(param, 0, sizeof *param);
    return 0;
}
int pthread_setschedprio(pthread_t, int) {
    return refuse("pthread_setschedprio", "weft's scheduler decides the order of weft threads", ENOTSUP);
}
int pthread_setaffinity_np(pthread_t, size_t, const cpu_set_t*) {
    return refuse("pthread_setaffinity_np", "weft threads move between workers; affinity is not yet built", ENOTSUP);
}
int pthread_getaffinity_np(pthread_t, size_t, cpu_set_t*) {
    return refuse("pthread_getaffinity_np", "affinity is not yet built", ENOTSUP);
}
// The calling weft thread's own attributes (its stack, as a stack-scanning
// runtime or a guard-page check asks them), or a kernel thread's (glibc's,
// converted). Another weft thread's: refused.
int pthread_getattr_np(pthread_t thread, pthread_attr_t* attr) {
    if (attr == nullptr) return EINVAL;
    weft_thread_t self = weft_thread_self();
    bool is_self = self != WEFT_THREAD_NULL && weft_of(thread) == self;
    // Its own weft stack; main runs on the process's stack instead (but in the
    // child of fork(), main is the forking thread, on whatever stack it had).
    if (is_self && own_stack_attr(attr) == 0) return 0;
    if (is_self)
        thread = g_initial_kernel_thread;
    else if (weft_thread_id(weft_of(thread)) != 0)
        return refuse("pthread_getattr_np on another weft thread", "only the caller's own stack is known", ENOTSUP);
    return kernel_thread_attr(thread, attr);
}
int pthread_getcpuclockid(pthread_t, clockid_t*) {
    return refuse("pthread_getcpuclockid", "a weft thread has no CPU clock of its own", ENOTSUP);
}

}  // extern "C"
