/* passthrough.S — __wrap_<name> for every function of interposed.def: a jump
 * to the C library's <name>, through the table real.cpp fills when the shim is
 * loaded (weft_shim_real). weft's runtime, linked into the shim with
 * --wrap=<name>, calls these; so does the shim, for work it leaves to the C
 * library (calls from kernel threads that are not weft threads, calls made
 * before the runtime is up). A jump, not a call, so that any signature and
 * any argument count passes untouched. */
#define SHIM_INDEX_BEGIN .set shim_index, 0
#if defined(__x86_64__)
#define SHIM_FN(name)                                   \
    .globl __wrap_##name;                               \
    .hidden __wrap_##name;                              \
    .type __wrap_##name, @function;                     \
__wrap_##name:                                          \
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
    .section .note.GNU-stack, "", %progbits
