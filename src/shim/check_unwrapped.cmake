# Fails the build if libweft-pthread.so imports a libstdc++ member that real.cpp
# replaces: weft's runtime would then reach the shim from inside libstdc++.so
# (CMakeLists.txt). Arguments: LIB, NM, WRAPPED (a ;-list of symbol names).
execute_process(COMMAND "${NM}" -D --undefined-only "${LIB}" OUTPUT_VARIABLE _undef RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "check_unwrapped: ${NM} -D failed on ${LIB}")
endif()
foreach(_sym IN LISTS WRAPPED)
    string(FIND "${_undef}" " ${_sym}" _at)
    if(NOT _at EQUAL -1)
        message(FATAL_ERROR "libweft-pthread.so imports ${_sym}: weft's runtime would call the shim through "
                            "libstdc++; add it to real.cpp and WEFT_SHIM_STDCXX_WRAPS (src/shim/CMakeLists.txt)")
    endif()
endforeach()
