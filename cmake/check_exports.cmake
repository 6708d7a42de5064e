# check_exports.cmake — the ABI fence of libweft.so (ctest: conformance.abi.exported_symbols).
#
#   cmake -DLIBRARY=<libweft.so> -DHEADER_DIR=<include/weft> -DNM=<nm> -P check_exports.cmake
#
# Fails when
#   - a function declared WEFT_API in include/weft/*.h is not exported (not marked
#     WEFT_API in its definition, misspelt, or missing its definition), or
#   - the library exports a symbol outside the patterns of cmake/weft.map
#     (weft_* and C++ symbols of namespace weft), or
#   - an exported weft_* symbol carries no version (the version script was not applied).
cmake_minimum_required(VERSION 3.25)

foreach(_v LIBRARY HEADER_DIR NM)
    if(NOT ${_v})
        message(FATAL_ERROR "check_exports.cmake: -D${_v}=... is required")
    endif()
endforeach()

# --- what the headers declare ------------------------------------------------
file(GLOB _headers "${HEADER_DIR}/*.h")
set(_declared "")
foreach(_h IN LISTS _headers)
    file(STRINGS "${_h}" _lines)
    set(_text "")
    foreach(_line IN LISTS _lines)
        # Skip preprocessor lines (the WEFT_API definition itself) and comment lines.
        if(_line MATCHES "^[ \t]*(#|/\\*|\\*|//)")
            continue()
        endif()
        string(APPEND _text " ${_line}")
    endforeach()
    string(REGEX MATCHALL "WEFT_API[^;{}()]*\\(" _decls "${_text}")
    foreach(_d IN LISTS _decls)
        if(_d MATCHES "([A-Za-z_][A-Za-z0-9_]*)[ \t]*\\($")
            list(APPEND _declared "${CMAKE_MATCH_1}")
        endif()
    endforeach()
endforeach()
list(REMOVE_DUPLICATES _declared)
list(LENGTH _declared _ndeclared)
if(_ndeclared EQUAL 0)
    message(FATAL_ERROR "check_exports.cmake: no WEFT_API declarations found in ${HEADER_DIR}/*.h")
endif()

# --- what the library exports ------------------------------------------------
execute_process(
    COMMAND "${NM}" -D --defined-only --format=posix "${LIBRARY}"
    OUTPUT_VARIABLE _nm_out
    ERROR_VARIABLE _nm_err
    RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "check_exports.cmake: ${NM} failed on ${LIBRARY}: ${_nm_err}")
endif()
string(REPLACE "\n" ";" _nm_lines "${_nm_out}")
set(_exported "")
set(_problems "")
foreach(_line IN LISTS _nm_lines)
    if(NOT _line MATCHES "^([^ ]+) ([A-Za-z]) ")
        continue()
    endif()
    set(_sym "${CMAKE_MATCH_1}")
    set(_type "${CMAKE_MATCH_2}")
    if(_type STREQUAL "A")
        continue() # version node names (WEFT_0)
    endif()
    set(_base "${_sym}")
    set(_versioned FALSE)
    if(_sym MATCHES "^([^@]+)@@?(.+)$")
        set(_base "${CMAKE_MATCH_1}")
        set(_versioned TRUE)
    endif()
    if(_base MATCHES "^weft_")
        list(APPEND _exported "${_base}")
        if(NOT _versioned)
            list(APPEND _problems "  ${_base}: exported without a version (is cmake/weft.map applied?)")
        endif()
    elseif(_base MATCHES "^_Z(N|T[ISV]N?)(K)?4weft")
        # C++: weft::..., typeinfo/typeinfo name/vtable for weft::...
    else()
        list(APPEND _problems "  ${_base}: exported but outside weft.map's patterns")
    endif()
endforeach()

foreach(_f IN LISTS _declared)
    if(NOT _f IN_LIST _exported)
        list(APPEND _problems "  ${_f}: declared WEFT_API but not exported by ${LIBRARY}")
    endif()
endforeach()

list(LENGTH _exported _nexported)
if(_problems)
    list(JOIN _problems "\n" _report)
    message(FATAL_ERROR "exported-symbol check failed:\n${_report}")
endif()
message(STATUS "exported-symbol check: ${_ndeclared} WEFT_API functions declared, "
               "${_nexported} weft_* symbols exported, all versioned")
