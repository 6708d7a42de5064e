// weft::arch — the thread pointer: the register through which compiled code
// reaches thread-local storage (%fs base on x86-64, tpidr_el0 on AArch64).
//
// A weft thread may carry a thread pointer of its own (ult::tp, set by
// libweft-pthread, which gives each thread a TLS block); the core writes it at
// the switches where it changes (core/dispatch.hpp). Reading it needs no
// system call: x86-64's TLS ABI keeps the thread pointer's own value in the
// first word it points to (Drepper, "ELF Handling For Thread-Local Storage"),
// and AArch64 user space reads tpidr_el0 directly.
#pragma once

namespace weft::arch {

// The calling kernel thread's thread pointer now.
void* thread_pointer();

// Makes `tp` the calling kernel thread's thread pointer: `wrfsbase` where the
// kernel lets user space write the %fs base (AT_HWCAP2 bit 1, FSGSBASE), else
// the arch_prctl(ARCH_SET_FS) system call; `msr tpidr_el0` on AArch64.
void set_thread_pointer(void* tp);

// True when set_thread_pointer is one instruction, not a system call.
bool thread_pointer_write_is_instruction();

}  // namespace weft::arch
