/* passthrough.S — __wrap_<name> for every function of interposed.def: a jump
 * to the C library's <name>, through the table real.cpp fills when the shim is
 * loaded (weft_shim_real). weft's runtime, linked into the shim with
 * --wrap=<name>, calls these; so does the shim, for work it leaves to the C
 * library (calls from kernel threads that are not weft threads, calls made
 * before the runtime is up). A jump, not a call, so that any signature and
 * any argument count passes untouched. */
#define SHIM_INDEX_BEGIN .set shim_index, 0
#if defined(__x86_64__)
/* The table is filled by a constructor; a library whose constructor runs
 * before the shim's (a sanitizer runtime, a library the program loads first)
 * may call in earlier: then the jump finds 0 and fills the table first
 * (weft_shim_fill_real), keeping the argument registers (%al included: the
 * vector-register count of a variadic call such as sem_open). */
#define SHIM_FN(name)                                   \
    .globl __wrap_##name;                               \
    .hidden __wrap_##name;                              \
    .type __wrap_##name, @function;                     \
__wrap_##name:                                          \
    cmpq $0, (weft_shim_real + 8 * shim_index)(%rip);   \
    je 1f;                                              \
    jmp *(weft_shim_real + 8 * shim_index)(%rip);       \
1:  call weft_shim_fill_real_saving_args;               \
    jmp *(weft_shim_real + 8 * shim_index)(%rip);       \
    .size __wrap_##name, . - __wrap_##name;             \
    .set shim_index, shim_index + 1;
#elif defined(__aarch64__)
#define SHIM_FN(name)                                   \
    .globl __wrap_##name;                               \
    .hidden __wrap_##name;                              \
    .type __wrap_##name, %function;                     \
__wrap_##name:                                          \
    adrp x16, weft_shim_real + 8 * shim_index;          \
    ldr x16, [x16, :lo12:weft_shim_real + 8 * shim_index]; \
    cbz x16, 1f;                                        \
    br x16;                                             \
1:  stp x29, x30, [sp, #-16]!;                          \
    bl weft_shim_fill_real_saving_args;                 \
    ldp x29, x30, [sp], #16;                            \
    adrp x16, weft_shim_real + 8 * shim_index;          \
    ldr x16, [x16, :lo12:weft_shim_real + 8 * shim_index]; \
    br x16;                                             \
    .size __wrap_##name, . - __wrap_##name;             \
    .set shim_index, shim_index + 1;
#else
#error "libweft-pthread: passthrough.S has no jump for this ISA (x86_64 and aarch64 only)"
#endif
    .text
    .p2align 4
    SHIM_INDEX_BEGIN
#include "interposed.def"

/* weft_shim_fill_real_saving_args: calls weft_shim_fill_real (real.cpp) and
 * returns with every argument register as it found them. */
    .text
#if defined(__x86_64__)
    .p2align 4
    .hidden weft_shim_fill_real_saving_args
    .type weft_shim_fill_real_saving_args, @function
weft_shim_fill_real_saving_args:
    pushq %rax
    pushq %rdi
    pushq %rsi
    pushq %rdx
    pushq %rcx
    pushq %r8
    pushq %r9
    subq $8, %rsp       /* entered at 16n (the __wrap_ jump's call came at 16n+8): */
    call weft_shim_fill_real  /* 7 pushes + 8 make the call at a 16-byte boundary */
    addq $8, %rsp
    popq %r9
    popq %r8
    popq %rcx
    popq %rdx
    popq %rsi
    popq %rdi
    popq %rax
    ret
    .size weft_shim_fill_real_saving_args, . - weft_shim_fill_real_saving_args
#elif defined(__aarch64__)
    .p2align 4
    .hidden weft_shim_fill_real_saving_args
    .type weft_shim_fill_real_saving_args, %function
weft_shim_fill_real_saving_args:
    stp x29, x30, [sp, #-80]!
    stp x0, x1, [sp, #16]
    stp x2, x3, [sp, #32]
    stp x4, x5, [sp, #48]
    stp x6, x7, [sp, #64]
    bl weft_shim_fill_real
    ldp x0, x1, [sp, #16]
    ldp x2, x3, [sp, #32]
    ldp x4, x5, [sp, #48]
    ldp x6, x7, [sp, #64]
    ldp x29, x30, [sp], #80
    ret
    .size weft_shim_fill_real_saving_args, . - weft_shim_fill_real_saving_args
#endif
    .section .note.GNU-stack, "", %progbits
