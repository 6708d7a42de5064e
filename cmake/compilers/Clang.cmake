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
