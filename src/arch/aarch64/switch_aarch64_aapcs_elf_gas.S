/*
 * weft::arch::switch_context for AArch64, AAPCS64, ELF, GNU as.
 *
 *   void* switch_context(context* from, context* to, void* arg);
 *                        x0             x1           x2        -> x0
 *
 * What is saved: the AAPCS64 callee-saved set -- x19-x28, the frame pointer
 * x29, the link register x30 (our return address), the low 64 bits of v8-v15
 * (d8-d15; the upper halves are caller-saved) -- plus FPCR (rounding mode,
 * flush-to-zero, default-NaN), which the ABI treats as callee-saved thread
 * state. FPSR (the sticky exception flags) is not saved, as in glibc's
 * swapcontext: the flags are cumulative and cheap to lose, and reading them is
 * another system-register access on the hot path. x18 (platform register) is
 * left alone.
 *
 * Frame of a suspended flow (sp is 16-byte aligned, as AArch64 requires):
 *
 *     sp+0    x19 x20     (fresh context: x19 = entry)
 *     sp+16   x21 x22
 *     sp+32   x23 x24
 *     sp+48   x25 x26
 *     sp+64   x27 x28
 *     sp+80   x29 x30     (fresh context: 0, weft_arch_context_trampoline)
 *     sp+96   d8  d9
 *     sp+112  d10 d11
 *     sp+128  d12 d13
 *     sp+144  d14 d15
 *     sp+160  FPCR, pad
 *
 * FPCR is written only when it differs from the current value: MSR FPCR is a
 * context-synchronising write on many cores (tens of cycles), while a compare
 * is one predictable branch.
 *
 * BTI/PAC: `bti c` (a hint, a NOP before Armv8.5) lets switch_context be a
 * target of indirect calls under BTI. The trampoline is entered only by `ret`,
 * which BTI does not check. Return addresses saved here are the callers' own
 * (already signed, if they sign them), so PAC needs nothing from this file.
 */

#if !defined(WEFT_CONTEXT_UCONTEXT)

    .text

    .globl  _ZN4weft4arch14switch_contextEPNS0_7contextES2_Pv
    .hidden _ZN4weft4arch14switch_contextEPNS0_7contextES2_Pv
    .type   _ZN4weft4arch14switch_contextEPNS0_7contextES2_Pv, %function
    .p2align 4
_ZN4weft4arch14switch_contextEPNS0_7contextES2_Pv:
    .cfi_startproc
    hint    #34                     /* bti c */
    sub     sp, sp, #176
    .cfi_def_cfa_offset 176
    stp     x19, x20, [sp, #0]
    stp     x21, x22, [sp, #16]
    stp     x23, x24, [sp, #32]
    stp     x25, x26, [sp, #48]
    stp     x27, x28, [sp, #64]
    stp     x29, x30, [sp, #80]
    .cfi_offset x19, -176
    .cfi_offset x20, -168
    .cfi_offset x21, -160
    .cfi_offset x22, -152
    .cfi_offset x23, -144
    .cfi_offset x24, -136
    .cfi_offset x25, -128
    .cfi_offset x26, -120
    .cfi_offset x27, -112
    .cfi_offset x28, -104
    .cfi_offset x29, -96
    .cfi_offset x30, -88
    stp     d8,  d9,  [sp, #96]
    stp     d10, d11, [sp, #112]
    stp     d12, d13, [sp, #128]
    stp     d14, d15, [sp, #144]
    .cfi_offset d8,  -80
    .cfi_offset d9,  -72
    .cfi_offset d10, -64
    .cfi_offset d11, -56
    .cfi_offset d12, -48
    .cfi_offset d13, -40
    .cfi_offset d14, -32
    .cfi_offset d15, -24
    mrs     x9, fpcr
    str     x9, [sp, #160]

    /* The exchange. */
    mov     x10, sp
    str     x10, [x0]
    ldr     x10, [x1]
    mov     sp, x10

    ldr     x10, [sp, #160]
    cmp     x9, x10
    b.ne    .Lload_fpcr
.Lfpcr_done:
    ldp     x19, x20, [sp, #0]
    ldp     x21, x22, [sp, #16]
    ldp     x23, x24, [sp, #32]
    ldp     x25, x26, [sp, #48]
    ldp     x27, x28, [sp, #64]
    ldp     x29, x30, [sp, #80]
    ldp     d8,  d9,  [sp, #96]
    ldp     d10, d11, [sp, #112]
    ldp     d12, d13, [sp, #128]
    ldp     d14, d15, [sp, #144]
    .cfi_remember_state
    add     sp, sp, #176
    .cfi_def_cfa_offset 0
    .cfi_restore x19
    .cfi_restore x20
    .cfi_restore x21
    .cfi_restore x22
    .cfi_restore x23
    .cfi_restore x24
    .cfi_restore x25
    .cfi_restore x26
    .cfi_restore x27
    .cfi_restore x28
    .cfi_restore x29
    .cfi_restore x30
    .cfi_restore d8
    .cfi_restore d9
    .cfi_restore d10
    .cfi_restore d11
    .cfi_restore d12
    .cfi_restore d13
    .cfi_restore d14
    .cfi_restore d15
    mov     x0, x2                  /* the resumed flow receives arg */
    ret

    .cfi_restore_state
.Lload_fpcr:
    msr     fpcr, x10
    b       .Lfpcr_done
    .cfi_endproc
    .size   _ZN4weft4arch14switch_contextEPNS0_7contextES2_Pv, .-_ZN4weft4arch14switch_contextEPNS0_7contextES2_Pv


/*
 * First code of a fresh context, reached by switch_context's `ret`.
 *   x0 = arg of the first switch, x19 = entry, x29 = 0, sp 16-byte aligned.
 * entry is entered with `br`, its return address set by hand, not with `blr`:
 * a call would leave the trampoline on the return-address predictor for good
 * (entry never returns), shifting later predictions by one (see the x86-64
 * file: one mispredicted return less per thread). x16 is the register BTI
 * lets a `br` use to land on a function's `bti c`.
 * x30 = .Lentry_returned, inside this function, whose `.cfi_undefined x30`
 * marks the outermost frame, so unwinders and debuggers stop here. entry must
 * never return; if it does, `brk` traps (SIGTRAP).
 */
    .globl  weft_arch_context_trampoline
    .hidden weft_arch_context_trampoline
    .type   weft_arch_context_trampoline, %function
    .p2align 4
weft_arch_context_trampoline:
    .cfi_startproc
    .cfi_undefined x30
    adr     x30, .Lentry_returned
    mov     x16, x19
    br      x16
.Lentry_returned:
    brk     #0x3e8
    .cfi_endproc
    .size   weft_arch_context_trampoline, .-weft_arch_context_trampoline

#if defined(__ARM_FEATURE_BTI_DEFAULT) || defined(__ARM_FEATURE_PAC_DEFAULT)
    .section .note.gnu.property, "a"
    .p2align 3
    .long   4                       /* name size */
    .long   16                      /* descriptor size */
    .long   5                       /* NT_GNU_PROPERTY_TYPE_0 */
    .asciz  "GNU"
    .long   0xc0000000              /* GNU_PROPERTY_AARCH64_FEATURE_1_AND */
    .long   4
#if defined(__ARM_FEATURE_BTI_DEFAULT) && defined(__ARM_FEATURE_PAC_DEFAULT)
    .long   3                       /* BTI | PAC */
#elif defined(__ARM_FEATURE_BTI_DEFAULT)
    .long   1                       /* BTI */
#else
    .long   2                       /* PAC */
#endif
    .p2align 3
#endif

#endif /* !WEFT_CONTEXT_UCONTEXT */

    .section .note.GNU-stack, "", %progbits
