// weft::arch — the portable context switch: POSIX ucontext (makecontext/swapcontext).
//
// Built instead of the assembly (context_asm.cpp + src/arch/<isa>/*.S) when the
// project is configured with WEFT_CONTEXT=ucontext, which defines
// WEFT_CONTEXT_UCONTEXT. It runs wherever glibc (or musl's libucontext) has
// makecontext, i.e. on ISAs weft has no assembly for, and it is the reference
// the assembly is checked against.
//
// Cost: glibc's swapcontext saves and restores the signal mask, i.e. makes one
// rt_sigprocmask system call per switch, and saves the whole FP environment:
// about 120 ns per switch here against about 12 for the assembly (figures and
// method in docs/design/stacks-and-context.md).
//
// Passing `arg`: swapcontext transfers nothing, so the switcher stores arg in
// the target context's `transfer` field and the resumed flow reads its own.
// Not a thread_local: the resumed flow may be running on a different kernel
// thread than the one that suspended it, and a compiler may keep a TLS address
// cached across the swapcontext call.
//
// Passing pointers to the fresh context: makecontext's extra arguments are
// ints, so the context and entry pointers travel as 32-bit halves (the portable
// way; glibc on 64-bit ISAs would accept a pointer, but POSIX does not promise it).
//
// The FP environment: glibc's getcontext/swapcontext save MXCSR and the x87
// environment (x86-64) or FPCR/FPSR (AArch64) in the ucontext, so the fallback
// keeps them per context like the assembly does; make_context's getcontext
// copies the creator's, as pthread_create does.
#if defined(WEFT_CONTEXT_UCONTEXT)

#include <ucontext.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "arch/context.hpp"

namespace weft::arch {

namespace {

std::uintptr_t join_halves(unsigned hi, unsigned lo) {
    return (static_cast<std::uintptr_t>(hi) << 32) | static_cast<std::uintptr_t>(lo);
}

void ucontext_trampoline(unsigned ctx_hi, unsigned ctx_lo, unsigned entry_hi, unsigned entry_lo) {
    auto* ctx = reinterpret_cast<context*>(join_halves(ctx_hi, ctx_lo));
    auto entry = reinterpret_cast<entry_fn>(join_halves(entry_hi, entry_lo));
    // The first switch_context to ctx stored its arg in ctx->transfer.
    entry(ctx->transfer);
    // entry must never return: there is no flow to return to.
    static const char msg[] = "weft: a context entry function returned\n";
    std::fwrite(msg, 1, sizeof msg - 1, stderr);
    std::abort();
}

}  // namespace

static_assert(sizeof(std::uintptr_t) <= 8, "pointers are passed as two 32-bit halves");

void make_context(context* ctx, void* stack_lo, std::size_t size, entry_fn entry) {
    // getcontext fails only for an invalid pointer; there is no error to return.
    if (getcontext(&ctx->uc) != 0) std::abort();
    ctx->uc.uc_stack.ss_sp = stack_lo;
    ctx->uc.uc_stack.ss_size = size;
    ctx->uc.uc_stack.ss_flags = 0;
    ctx->uc.uc_link = nullptr;  // entry never returns; if it did, the trampoline aborts
    ctx->transfer = nullptr;
    auto c = reinterpret_cast<std::uintptr_t>(ctx);
    auto e = reinterpret_cast<std::uintptr_t>(entry);
    makecontext(&ctx->uc, reinterpret_cast<void (*)()>(&ucontext_trampoline), 4,
                static_cast<unsigned>(c >> 32), static_cast<unsigned>(c & 0xffffffffu),
                static_cast<unsigned>(e >> 32), static_cast<unsigned>(e & 0xffffffffu));
}

void* switch_context(context* from, context* to, void* arg) {
    to->transfer = arg;
    if (swapcontext(&from->uc, &to->uc) != 0) std::abort();
    return from->transfer;
}

}  // namespace weft::arch

#endif  // WEFT_CONTEXT_UCONTEXT
