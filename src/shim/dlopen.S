/* dlopen.S — the shim's dlopen and dlmopen: each notes that a module may be
 * loaded from now on (weft_shim_module_loaded, which tls_block.cpp reads:
 * until then it copies the static TLS images into a reused block itself) and
 * jumps to the C library's (__wrap_<name>, passthrough.S). A jump, not a
 * call: the C library's dlopen takes its caller, whose RUNPATH and namespace
 * apply, from the return address, which stays the program's. */
#if defined(__x86_64__)
#define NOTE_AND_JUMP(name)                             \
    .globl name;                                        \
    .type name, @function;                              \
    .p2align 4;                                         \
name:                                                   \
    movb $1, weft_shim_module_loaded(%rip);             \
    jmp __wrap_##name;                                  \
    .size name, . - name;
#elif defined(__aarch64__)
#define NOTE_AND_JUMP(name)                             \
    .globl name;                                        \
    .type name, %function;                              \
    .p2align 4;                                         \
name:                                                   \
    adrp x16, weft_shim_module_loaded;                  \
    mov w17, #1;                                        \
    strb w17, [x16, :lo12:weft_shim_module_loaded];     \
    b __wrap_##name;                                    \
    .size name, . - name;
#else
#error "libweft-pthread: dlopen.S is written for x86_64 and aarch64 only"
#endif
    .text
NOTE_AND_JUMP(dlopen)
NOTE_AND_JUMP(dlmopen)
    .section .note.GNU-stack, "", %progbits
