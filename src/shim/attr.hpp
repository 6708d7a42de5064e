// pthread_attr_t under the shim: the attribute a weft thread is created with,
// kept inside glibc's 56 bytes.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <cstdint>

namespace weft::shim {

struct thread_attr {
    std::uint32_t magic;  // attr_magic once pthread_attr_init ran
    int detach_state;     // PTHREAD_CREATE_JOINABLE / DETACHED
    int scope;            // PTHREAD_SCOPE_SYSTEM / PROCESS
    int inherit_sched;    // PTHREAD_INHERIT_SCHED / EXPLICIT_SCHED
    int policy;           // SCHED_OTHER / FIFO / RR
    int priority;         // sched_param.sched_priority
    std::size_t stack_size;
    std::size_t guard_size;
    void* stack_addr;     // set by pthread_attr_setstack: refused at create
};
static_assert(sizeof(thread_attr) <= sizeof(pthread_attr_t), "thread_attr must fit in glibc's pthread_attr_t");
static_assert(alignof(thread_attr) <= alignof(pthread_attr_t));

inline constexpr std::uint32_t attr_magic = 0x77656674;  // "weft"

// The attribute behind a pthread_attr_t*, or nullptr if it was not initialised
// with pthread_attr_init (EINVAL for the caller).
inline thread_attr* attr_of(pthread_attr_t* a) {
    auto* t = reinterpret_cast<thread_attr*>(a);
    return a != nullptr && t->magic == attr_magic ? t : nullptr;
}
inline const thread_attr* attr_of(const pthread_attr_t* a) { return attr_of(const_cast<pthread_attr_t*>(a)); }

// pthread_attr_init's work, for the shim's own use: the shim is linked with
// --wrap=pthread_attr_init (CMakeLists.txt), so a call by that name from its
// own code would reach glibc's.
void init_attr(pthread_attr_t* a);

// The stack size of a thread created without a size: weft's default
// (WEFT_STACK_SIZE, 64 KiB unless set).
std::size_t default_stack_size();

}  // namespace weft::shim
