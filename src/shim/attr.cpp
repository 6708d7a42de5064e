// pthread_attr_*: the thread attributes, stored in thread_attr (attr.hpp).
// Every setter checks its value as glibc does (EINVAL for a value outside the
// valid set); what weft threads cannot honour is refused by pthread_create
// (thread.cpp), not here, so that a program may read back what it set.
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/runtime.hpp"
#include "shim/attr.hpp"
#include "shim/shim.hpp"

namespace weft::shim {

void init_attr(pthread_attr_t* a) {
    std::memset(a, 0, sizeof *a);
    auto* t = reinterpret_cast<thread_attr*>(a);
    t->magic = attr_magic;
    t->detach_state = PTHREAD_CREATE_JOINABLE;
    t->scope = PTHREAD_SCOPE_SYSTEM;
    t->inherit_sched = PTHREAD_INHERIT_SCHED;
    t->policy = SCHED_OTHER;
    t->stack_size = 0;  // the runtime's default
    t->guard_size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

std::size_t default_stack_size() {
    weft::detail::runtime* rt = weft::detail::g_rt;
    return rt != nullptr ? rt->cfg.stack_size : 64 * 1024;
}

}  // namespace weft::shim

using namespace weft::shim;

namespace {

constexpr std::size_t max_stack = std::size_t{1} << 30;  // weft's bound (weft_attr_setstacksize)

}  // namespace

extern "C" {

int pthread_attr_init(pthread_attr_t* a) {
    if (a == nullptr) return EINVAL;
    init_attr(a);
    return 0;
}

int pthread_attr_destroy(pthread_attr_t* a) {
    thread_attr* t = attr_of(a);
    if (t == nullptr) return EINVAL;
    t->magic = 0;
    return 0;
}

int pthread_attr_setstacksize(pthread_attr_t* a, size_t size) {
    thread_attr* t = attr_of(a);
    if (t == nullptr || size < static_cast<size_t>(PTHREAD_STACK_MIN) || size > max_stack) return EINVAL;
    t->stack_size = size;
    return 0;
}

int pthread_attr_getstacksize(const pthread_attr_t* a, size_t* size) {
    const thread_attr* t = attr_of(a);
    if (t == nullptr || size == nullptr) return EINVAL;
    *size = t->stack_size != 0 ? t->stack_size : default_stack_size();
    return 0;
}

int pthread_attr_setstack(pthread_attr_t* a, void* addr, size_t size) {
    thread_attr* t = attr_of(a);
    if (t == nullptr || size < static_cast<size_t>(PTHREAD_STACK_MIN) || size > max_stack) return EINVAL;
    t->stack_addr = addr;
    t->stack_size = size;
    return 0;
}

int pthread_attr_getstack(const pthread_attr_t* a, void** addr, size_t* size) {
    const thread_attr* t = attr_of(a);
    if (t == nullptr || addr == nullptr || size == nullptr) return EINVAL;
    *addr = t->stack_addr;
    *size = t->stack_size != 0 ? t->stack_size : default_stack_size();
    return 0;
}

// The obsolete form: addr is the stack's top on a downward-growing stack, as
// glibc takes it.
int pthread_attr_setstackaddr(pthread_attr_t* a, void* addr) {
    thread_attr* t = attr_of(a);
    if (t == nullptr) return EINVAL;
    t->stack_addr = addr;
    return 0;
}

int pthread_attr_getstackaddr(const pthread_attr_t* a, void** addr) {
    const thread_attr* t = attr_of(a);
    if (t == nullptr || addr == nullptr) return EINVAL;
    *addr = t->stack_addr;
    return 0;
}

int pthread_attr_setdetachstate(pthread_attr_t* a, int state) {
    thread_attr* t = attr_of(a);
    if (t == nullptr || (state != PTHREAD_CREATE_JOINABLE && state != PTHREAD_CREATE_DETACHED)) return EINVAL;
    t->detach_state = state;
    return 0;
}

int pthread_attr_getdetachstate(const pthread_attr_t* a, int* state) {
    const thread_attr* t = attr_of(a);
    if (t == nullptr || state == nullptr) return EINVAL;
    *state = t->detach_state;
    return 0;
}

// Kept and read back; every weft stack has one guard page whatever is asked
// (docs/shim.md).
int pthread_attr_setguardsize(pthread_attr_t* a, size_t size) {
    thread_attr* t = attr_of(a);
    if (t == nullptr) return EINVAL;
    t->guard_size = size;
    return 0;
}

int pthread_attr_getguardsize(const pthread_attr_t* a, size_t* size) {
    const thread_attr* t = attr_of(a);
    if (t == nullptr || size == nullptr) return EINVAL;
    *size = t->guard_size;
    return 0;
}

// PTHREAD_SCOPE_PROCESS is what weft threads are (they compete for the
// process's workers), so both scopes are accepted; glibc refuses PROCESS.
int pthread_attr_setscope(pthread_attr_t* a, int scope) {
    thread_attr* t = attr_of(a);
    if (t == nullptr || (scope != PTHREAD_SCOPE_SYSTEM && scope != PTHREAD_SCOPE_PROCESS)) return EINVAL;
    t->scope = scope;
    return 0;
}

int pthread_attr_getscope(const pthread_attr_t* a, int* scope) {
    const thread_attr* t = attr_of(a);
    if (t == nullptr || scope == nullptr) return EINVAL;
    *scope = t->scope;
    return 0;
}

int pthread_attr_setinheritsched(pthread_attr_t* a, int inherit) {
    thread_attr* t = attr_of(a);
    if (t == nullptr || (inherit != PTHREAD_INHERIT_SCHED && inherit != PTHREAD_EXPLICIT_SCHED)) return EINVAL;
    t->inherit_sched = inherit;
    return 0;
}

int pthread_attr_getinheritsched(const pthread_attr_t* a, int* inherit) {
    const thread_attr* t = attr_of(a);
    if (t == nullptr || inherit == nullptr) return EINVAL;
    *inherit = t->inherit_sched;
    return 0;
}

int pthread_attr_setschedpolicy(pthread_attr_t* a, int policy) {
    thread_attr* t = attr_of(a);
    if (t == nullptr || (policy != SCHED_OTHER && policy != SCHED_FIFO && policy != SCHED_RR)) return EINVAL;
    t->policy = policy;
    return 0;
}

int pthread_attr_getschedpolicy(const pthread_attr_t* a, int* policy) {
    const thread_attr* t = attr_of(a);
    if (t == nullptr || policy == nullptr) return EINVAL;
    *policy = t->policy;
    return 0;
}

// The priority is checked against the attribute's policy, as glibc does.
int pthread_attr_setschedparam(pthread_attr_t* a, const struct sched_param* p) {
    thread_attr* t = attr_of(a);
    if (t == nullptr || p == nullptr) return EINVAL;
    if (p->sched_priority < sched_get_priority_min(t->policy) || p->sched_priority > sched_get_priority_max(t->policy))
        return EINVAL;
    t->priority = p->sched_priority;
    return 0;
}

int pthread_attr_getschedparam(const pthread_attr_t* a, struct sched_param* p) {
    const thread_attr* t = attr_of(a);
    if (t == nullptr || p == nullptr) return EINVAL;
    std::memset(p, 0, sizeof *p);
    p->sched_priority = t->priority;
    return 0;
}

int pthread_attr_setaffinity_np(pthread_attr_t*, size_t, const cpu_set_t*) {
    return refuse("pthread_attr_setaffinity_np", "weft threads move between workers; affinity is not yet built",
                  ENOTSUP);
}
int pthread_attr_getaffinity_np(const pthread_attr_t*, size_t, cpu_set_t*) {
    return refuse("pthread_attr_getaffinity_np", "affinity is not yet built", ENOTSUP);
}
int pthread_attr_setsigmask_np(pthread_attr_t*, const sigset_t*) {
    return refuse("pthread_attr_setsigmask_np", "per-thread signal masks are not yet built", ENOTSUP);
}
int pthread_attr_getsigmask_np(const pthread_attr_t*, sigset_t*) {
    return refuse("pthread_attr_getsigmask_np", "per-thread signal masks are not yet built", ENOTSUP);
}
int pthread_getattr_default_np(pthread_attr_t*) {
    return refuse("pthread_getattr_default_np", "not yet built; WEFT_STACK_SIZE sets the default stack", ENOTSUP);
}
int pthread_setattr_default_np(const pthread_attr_t*) {
    return refuse("pthread_setattr_default_np", "not yet built; WEFT_STACK_SIZE sets the default stack", ENOTSUP);
}

}  // extern "C"
