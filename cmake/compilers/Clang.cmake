# Flags for Clang (CMAKE_<LANG>_COMPILER_ID "Clang" or "AppleClang"). Same
# variables as cmake/compilers/GNU.cmake; see there for their meaning.

set(WEFT_WARNING_FLAGS
    -Wall
    -Wextra
    -Wformat=2
    -Wimplicit-fallthrough
    -Wvla
    -Wshadow-field-in-constructor
)

set(WEFT_CXX_WARNING_FLAGS
    -Wnon-virtual-dtor
    -Woverloaded-virtual
    -Wrange-loop-analysis
)

set(WEFT_STRICT_FLAGS
    -Werror
)

# See GNU.cmake: make UBSan findings fatal.
set(WEFT_SANITIZE_FLAGS
    -fno-sanitize-recover=all
)

# See GNU.cmake: stack probes (Clang >= 11 on x86-64; on AArch64 Clang probes
# every 4 KiB).
include(CheckCCompilerFlag)
check_c_compiler_flag(-fstack-clash-protection WEFT_HAVE_STACK_CLASH_PROTECTION)
if(WEFT_HAVE_STACK_CLASH_PROTECTION)
    set(WEFT_STACK_PROBE_FLAGS -fstack-clash-protection)
    set(WEFT_NO_STACK_PROBE_FLAGS -fno-stack-clash-protection)
else()
    set(WEFT_STACK_PROBE_FLAGS "")
    set(WEFT_NO_STACK_PROBE_FLAGS "")
endif()
