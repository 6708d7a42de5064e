// weft::arch — reading and writing the thread pointer (thread_pointer.hpp).
#include "arch/thread_pointer.hpp"

#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>

#if defined(__x86_64__)
#include <asm/prctl.h>
#endif

namespace weft::arch {

#if defined(__x86_64__)

namespace {
// AT_HWCAP2 bit 1: the kernel has set CR4.FSGSBASE, so wrfsbase does not fault.
constexpr unsigned long hwcap2_fsgsbase = 1UL << 1;
const bool g_fsgsbase = (getauxval(AT_HWCAP2) & hwcap2_fsgsbase) != 0;
}  // namespace

void* thread_pointer() {
    void* tp;
    asm volatile("mov %%fs:0, %0" : "=r"(tp));
    return tp;
}

void set_thread_pointer(void* tp) {
    if (g_fsgsbase) [[likely]] {
        // "memory": no access through the old thread pointer may move past it.
        asm volatile("wrfsbase %0" : : "r"(tp) : "memory");
        return;
    }
    syscall(SYS_arch_prctl, ARCH_SET_FS, tp);
}

bool thread_pointer_write_is_instruction() { return g_fsgsbase; }

#elif defined(__aarch64__)

void* thread_pointer() {
    void* tp;
    asm volatile("mrs %0, tpidr_el0" : "=r"(tp));
    return tp;
}

void set_thread_pointer(void* tp) { asm volatile("msr tpidr_el0, %0" : : "r"(tp) : "memory"); }

bool thread_pointer_write_is_instruction() { return true; }

#else

// Elsewhere no ult has a thread pointer of its own (libweft-pthread gives
// blocks on x86-64 only), so the switch never writes one.
void* thread_pointer() { return nullptr; }

void set_thread_pointer(void*) {
    static const char msg[] = "weft: no thread pointer write on this architecture (src/arch/thread_pointer.cpp)\n";
    (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
    std::abort();
}

bool thread_pointer_write_is_instruction() { return false; }

#endif

}  // namespace weft::arch
