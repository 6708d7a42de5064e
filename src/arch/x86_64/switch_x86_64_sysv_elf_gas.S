/*
 * weft::arch::switch_context for x86-64, System V ABI, ELF, GNU as.
 *
 *   void* switch_context(context* from, context* to, void* arg);
 *                        %rdi           %rsi         %rdx      -> %rax
 *
 * What is saved, and why only this: the call is an ordinary function call, so
 * the caller has already spilled every caller-saved register it needs. What is
 * left is the callee-saved set of the ABI -- rbx, rbp, r12-r15 -- plus the two
 * control words the ABI also makes callee-saved: MXCSR (SSE rounding mode and
 * exception masks; bits 0-5, the sticky status flags, ride along) and the x87
 * control word (x87 precision/rounding). They are pushed on the suspended
 * flow's own stack, so a context is a single word: the stack pointer.
 *
 * Frame of a suspended flow (what from->sp / to->sp point at):
 *
 *     sp+0   MXCSR (4 bytes) | x87 control word (2 bytes) | pad
 *     sp+8   r15
 *     sp+16  r14
 *     sp+24  r13
 *     sp+32  r12      (fresh context: the entry function)
 *     sp+40  rbx
 *     sp+48  rbp      (fresh context: 0, ends the frame-pointer chain)
 *     sp+56  return address   (fresh context: weft_arch_context_trampoline)
 *
 * make_context (context_asm.cpp) writes this same frame for a fresh context, so
 * the first switch to it "returns" into the trampoline, which calls entry(arg).
 *
 * The control words are loaded only when they differ from the current ones:
 * LDMXCSR and FLDCW are microcoded (several uops, ~5-7 cycles latency, and they
 * order later FP work behind them) while a compare of two words in registers is
 * one predictable branch. Almost every program runs every thread with the same
 * FP environment, so the loads are almost never executed.
 *
 * CFI: both stacks have the same frame shape at every instruction, so the CFI
 * below stays true across the stack-pointer exchange: a profiler or debugger
 * that stops anywhere in here unwinds into whichever flow owns the stack.
 *
 * CET: endbr64 (a NOP on older CPUs) makes the function a valid indirect-call
 * target under IBT. Shadow stacks (SHSTK) are NOT supported: the `ret` below
 * returns to an address pushed on another stack, which a shadow stack would
 * refuse. The GNU property note therefore claims IBT only; the linker then
 * drops SHSTK for the whole program, which is the truthful outcome.
 */

#if !defined(WEFT_CONTEXT_UCONTEXT)

    .text

    .globl  _ZN4weft4arch14switch_contextEPNS0_7contextES2_Pv
    .hidden _ZN4weft4arch14switch_contextEPNS0_7contextES2_Pv
    .type   _ZN4weft4arch14switch_contextEPNS0_7contextES2_Pv, @function
    .p2align 4
_ZN4weft4arch14switch_contextEPNS0_7contextES2_Pv:
    .cfi_startproc
    endbr64
    pushq   %rbp
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %rbp, 0
    pushq   %rbx
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %rbx, 0
    pushq   %r12
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r12, 0
    pushq   %r13
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r13, 0
    pushq   %r14
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r14, 0
    pushq   %r15
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r15, 0
    subq    $8, %rsp
    .cfi_adjust_cfa_offset 8
    stmxcsr (%rsp)
    fnstcw  4(%rsp)
    /* Keep the current control words in registers for the compare below.
     * Each load matches one store exactly, so both are store-forwarded. */
    movl    (%rsp), %r8d
    movzwl  4(%rsp), %r9d

    /* The exchange. */
    movq    %rsp, (%rdi)
    movq    (%rsi), %rsp

    /* Control words of the resumed flow, loaded only if they differ (the
     * compare includes MXCSR's sticky flags, so they stay per flow). */
    cmpl    (%rsp), %r8d
    jne     .Lload_mxcsr
.Lmxcsr_done:
    cmpw    4(%rsp), %r9w
    jne     .Lload_fpcw
.Lfpcw_done:
    .cfi_remember_state
    addq    $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq    %r15
    .cfi_adjust_cfa_offset -8
    .cfi_restore %r15
    popq    %r14
    .cfi_adjust_cfa_offset -8
    .cfi_restore %r14
    popq    %r13
    .cfi_adjust_cfa_offset -8
    .cfi_restore %r13
    popq    %r12
    .cfi_adjust_cfa_offset -8
    .cfi_restore %r12
    popq    %rbx
    .cfi_adjust_cfa_offset -8
    .cfi_restore %rbx
    popq    %rbp
    .cfi_adjust_cfa_offset -8
    .cfi_restore %rbp
    movq    %rdx, %rax              /* the resumed flow receives arg */
    ret

    /* Cold paths, out of the straight line; same frame as at the jumps. */
    .cfi_restore_state
.Lload_mxcsr:
    ldmxcsr (%rsp)
    jmp     .Lmxcsr_done
.Lload_fpcw:
    fldcw   4(%rsp)
    jmp     .Lfpcw_done
    .cfi_endproc
    .size   _ZN4weft4arch14switch_contextEPNS0_7contextES2_Pv, .-_ZN4weft4arch14switch_contextEPNS0_7contextES2_Pv


/*
 * First code of a fresh context, reached by switch_context's `ret`.
 *   %rax = arg of the first switch, %r12 = entry, %rbp = 0,
 *   %rsp = 16-byte aligned (make_context guarantees it).
 * entry is *jumped* to, with a return address pushed by hand, not called:
 * a call would push the trampoline onto the CPU's return-stack predictor,
 * where it stays (entry never returns) and shifts every later prediction by
 * one, so the first return of the flow this one switches back to
 * mispredicts (weft_thread_create's, under ws; weft_thread_join's, under
 * fifo). Measured (perf stat): 3.1 -> 2.0 branch misses per create+join
 * under fifo, 61 -> 55.5 ns under ws.
 * The pushed address is .Lentry_returned, inside this function, whose
 * `.cfi_undefined %rip` marks the outermost frame: libgcc's unwinder, gdb and
 * perf stop here instead of walking into whatever lies above the stack top.
 * entry must never return; if it does, ud2 traps (SIGILL) right here, which
 * is far easier to diagnose than a return into garbage.
 */
    .globl  weft_arch_context_trampoline
    .hidden weft_arch_context_trampoline
    .type   weft_arch_context_trampoline, @function
    .p2align 4
weft_arch_context_trampoline:
    .cfi_startproc
    .cfi_undefined %rip
    movq    %rax, %rdi
    leaq    .Lentry_returned(%rip), %r11
    pushq   %r11
    .cfi_adjust_cfa_offset 8
    jmpq    *%r12
.Lentry_returned:
    ud2
    .cfi_endproc
    .size   weft_arch_context_trampoline, .-weft_arch_context_trampoline

#if defined(__CET__) && (__CET__ & 1)
    .section .note.gnu.property, "a"
    .p2align 3
    .long   4                       /* name size */
    .long   16                      /* descriptor size */
    .long   5                       /* NT_GNU_PROPERTY_TYPE_0 */
    .asciz  "GNU"
    .long   0xc0000002              /* GNU_PROPERTY_X86_FEATURE_1_AND */
    .long   4
    .long   1                       /* IBT only; see the header comment */
    .p2align 3
#endif

#endif /* !WEFT_CONTEXT_UCONTEXT */

    .section .note.GNU-stack, "", @progbits
