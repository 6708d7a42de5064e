// weft::arch — the machine context of a weft thread and the switch between two.
//
// This header is the only door to the ISA-specific code (Argobots' abtd_context.h).
// The assembly lives in src/arch/<isa>/switch_<isa>_<abi>_<binfmt>.S; the portable
// fallback (ucontext) is chosen at configure time with WEFT_CONTEXT=ucontext.
#pragma once

#include <cstddef>

#if defined(WEFT_CONTEXT_UCONTEXT)
#include <ucontext.h>
#endif

namespace weft::arch {

// The saved state of a suspended flow of control.
// asm build: only its stack pointer (callee-saved registers and FP control words
// are pushed on the flow's own stack; see docs/design/stacks-and-context.md for the
// frame layout). ucontext build: a full ucontext_t.
struct context {
#if defined(WEFT_CONTEXT_UCONTEXT)
    ucontext_t uc;
    // The arg of the switch that resumed this context, written by the switcher
    // just before swapcontext (a field, not a thread_local: the resumed flow may
    // be on another kernel thread than the one that suspended it).
    void* transfer = nullptr;
#else
    void* sp = nullptr;
#endif
};

// Entry of a fresh context: receives the `arg` of the first switch to it. Must
// never return (the thread ends by switching away for good).
using entry_fn = void (*)(void* arg);

// Prepares `ctx` so that the first switch_context(..., ctx, A) runs entry(A) on the
// stack [stack_lo, stack_lo + size). The stack must be 16-byte aligned at both ends.
void make_context(context* ctx, void* stack_lo, std::size_t size, entry_fn entry);

// Saves the current flow into *from and resumes *to. In the resumed flow,
// switch_context returns `arg` (or, for a fresh context, entry receives it).
// When the saved flow is resumed later, this call returns the arg of that switch.
void* switch_context(context* from, context* to, void* arg);

}  // namespace weft::arch
