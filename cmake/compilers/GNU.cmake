# Flags for GCC (CMAKE_<LANG>_COMPILER_ID "GNU"). Included by the top-level
# CMakeLists.txt; sets variables only, the targets pick them up through
# weft_apply_warnings() in cmake/WeftHelpers.cmake.
#
#   WEFT_WARNING_FLAGS      C and C++: always on for weft's own targets
#   WEFT_CXX_WARNING_FLAGS  C++ only
#   WEFT_STRICT_FLAGS       added when WEFT_STRICT=ON
#   WEFT_SANITIZE_FLAGS     added (compile and link) when WEFT_SANITIZE is set,
#                           after -fsanitize=<list> -fno-omit-frame-pointer
# (The stack-probe flags, WEFT_STACK_PROBE_FLAGS, are checked for once, for
# any compiler, in the top-level CMakeLists.txt.)

set(WEFT_WARNING_FLAGS
    -Wall
    -Wextra
    -Wformat=2
    -Wimplicit-fallthrough
    -Wvla
)

set(WEFT_CXX_WARNING_FLAGS
    -Wnon-virtual-dtor
    -Woverloaded-virtual
)

# GCC 12 warns on every use of std::hardware_destructive_interference_size
# (the value may change with -mtune); we use it on purpose, for cache-line
# alignment of per-worker state that never crosses an ABI boundary.
if(CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12)
    list(APPEND WEFT_CXX_WARNING_FLAGS -Wno-interference-size)
endif()

# -Werror, minus the GCC diagnostics known for false positives that depend on
# the optimisation level and on sanitizer instrumentation (they come from the
# middle end after inlining, fire at -O1 in sanitizer builds or -O3 in release
# builds, often inside libstdc++, on code that is fine; GCC bugs 105329, 105651,
# 106199 and friends). They still print as warnings.
set(WEFT_STRICT_FLAGS
    -Werror
    -Wno-error=maybe-uninitialized
    -Wno-error=array-bounds
    -Wno-error=stringop-overflow
    -Wno-error=stringop-overread
    -Wno-error=restrict
    -Wno-error=free-nonheap-object
)
# GCC 12 warns (-Wtsan) that TSan does not model std::atomic_thread_fence. That is
# worth seeing (a fence-based protocol is invisible to TSan: src/base/primitives.hpp
# should give TSan an equivalent it understands), but it is a property of the
# sanitizer, not a defect of the code, so it does not fail a strict build.
if(CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12)
    list(APPEND WEFT_STRICT_FLAGS -Wno-error=tsan)
endif()

# UBSan findings must fail the test that triggers them, not scroll by:
# without this, UBSan prints and the program goes on (and exits 0).
set(WEFT_SANITIZE_FLAGS
    -fno-sanitize-recover=all
)
