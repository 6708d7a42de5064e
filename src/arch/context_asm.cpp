// weft::arch — make_context for the assembly switch (x86-64 SysV, AArch64 AAPCS64).
//
// A fresh context is a stack whose top holds exactly the frame that
// switch_context leaves behind when it suspends a flow (see the frame pictures
// in src/arch/<isa>/switch_*.S), with the "return address" pointing at the ISA's
// trampoline and the entry function in a callee-saved register. The first
// switch to it therefore needs no special case: switch_context pops the frame
// and returns into the trampoline, which calls entry(arg).
//
// The FP control state of the new context is copied from the creator, as
// pthread_create does ("the new thread inherits the floating-point environment
// of the calling thread", POSIX), so a program that set a rounding mode before
// creating threads sees it in all of them.
#if !defined(WEFT_CONTEXT_UCONTEXT)

#include <cstdint>
#include <cstring>

#include "arch/context.hpp"

extern "C" void weft_arch_context_trampoline();

namespace weft::arch {

#if defined(__x86_64__)

void make_context(context* ctx, void* stack_lo, std::size_t size, entry_fn entry) {
    std::uintptr_t top = (reinterpret_cast<std::uintptr_t>(stack_lo) + size) & ~std::uintptr_t{15};
    // From the top down: two zero words (what lies "above" the outermost frame
    // reads as a null return address and a null frame pointer), the return
    // address into the trampoline, then the seven words switch_context pops.
    // After the pops and the `ret`, rsp = top - 16: 16-byte aligned, so the
    // trampoline's `call` enters entry with rsp = 8 (mod 16) as the ABI says.
    auto* frame = reinterpret_cast<std::uint64_t*>(top - 80);
    std::uint32_t mxcsr;
    std::uint16_t fpcw;
    asm volatile("stmxcsr %0" : "=m"(mxcsr));
    asm volatile("fnstcw %0" : "=m"(fpcw));
    frame[0] = std::uint64_t{mxcsr} | (std::uint64_t{fpcw} << 32);
    frame[1] = 0;                                            // r15
    frame[2] = 0;                                            // r14
    frame[3] = 0;                                            // r13
    frame[4] = reinterpret_cast<std::uint64_t>(entry);       // r12: called by the trampoline
    frame[5] = 0;                                            // rbx
    frame[6] = 0;                                            // rbp: ends the frame-pointer chain
    frame[7] = reinterpret_cast<std::uint64_t>(&weft_arch_context_trampoline);
    frame[8] = 0;
    frame[9] = 0;
    ctx->sp = frame;
}

#elif defined(__aarch64__)

void make_context(context* ctx, void* stack_lo, std::size_t size, entry_fn entry) {
    std::uintptr_t top = (reinterpret_cast<std::uintptr_t>(stack_lo) + size) & ~std::uintptr_t{15};
    // From the top down: a zero frame record {fp = 0, lr = 0} (the AAPCS64 end
    // of the frame chain), then the 176-byte frame switch_context pops. After
    // the pops sp = top - 16, 16-byte aligned as AArch64 requires at all times.
    auto* frame = reinterpret_cast<std::uint64_t*>(top - 16 - 176);
    std::memset(frame, 0, 16 + 176);
    std::uint64_t fpcr;
    asm volatile("mrs %0, fpcr" : "=r"(fpcr));
    frame[0] = reinterpret_cast<std::uint64_t>(entry);  // x19: called by the trampoline
    frame[10] = 0;                                      // x29 (fp): ends the frame chain
    frame[11] = reinterpret_cast<std::uint64_t>(&weft_arch_context_trampoline);  // x30 (lr)
    frame[20] = fpcr;
    ctx->sp = frame;
}

#else
#error "weft: no assembly context switch for this ISA; configure with WEFT_CONTEXT=ucontext"
#endif

}  // namespace weft::arch

#endif  // !WEFT_CONTEXT_UCONTEXT
