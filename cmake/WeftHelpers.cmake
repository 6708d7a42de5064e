# Small helpers shared by the CMakeLists.txt files of weft. Included once by the
# top-level CMakeLists.txt after cmake/compilers/<id>.cmake has set the flag
# variables it uses.

# weft_apply_warnings(<target>)
#   Adds weft's warning set (and -Werror under WEFT_STRICT) to one of weft's own
#   targets. Never applied to imported or third-party targets, and never
#   propagated to consumers.
function(weft_apply_warnings target)
    target_compile_options(${target} PRIVATE
        $<$<COMPILE_LANGUAGE:C,CXX>:${WEFT_WARNING_FLAGS}>
        $<$<COMPILE_LANGUAGE:CXX>:${WEFT_CXX_WARNING_FLAGS}>)
    if(WEFT_STRICT)
        target_compile_options(${target} PRIVATE
            $<$<COMPILE_LANGUAGE:C,CXX>:${WEFT_STRICT_FLAGS}>)
    endif()
endfunction()

# weft_glob(<out-var> <dir> <pattern>...)
#   Sorted, configure-dependent list of files under <dir> (absolute paths)
#   matching any of the globs (relative to <dir>). New files need no CMake
#   edit: the build re-runs the glob and reconfigures when the list changes.
function(weft_glob out dir)
    set(all "")
    foreach(pattern IN LISTS ARGN)
        file(GLOB found CONFIGURE_DEPENDS "${dir}/${pattern}")
        list(APPEND all ${found})
    endforeach()
    list(REMOVE_DUPLICATES all)
    list(SORT all)
    set(${out} "${all}" PARENT_SCOPE)
endfunction()
