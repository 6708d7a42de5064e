# check.cmake — ctest `integration.install_consumer`: weft, installed, used from
# another project through CMake and through pkg-config.
#
#   cmake -DWEFT_BUILD_DIR=<build> -DWEFT_SOURCE_DIR=<src> -DWORK_DIR=<scratch>
#         -DWEFT_VERSION=<x.y.z> -DGENERATOR=<gen> [-DMAKE_PROGRAM=...]
#         -DC_COMPILER=<cc> -DCXX_COMPILER=<c++> [-DBUILD_TYPE=...]
#         [-DSTACK_PROBE_FLAGS=<flags weft passes on>] -P check.cmake
#
# Steps: 1. cmake --install <build> --prefix <scratch>/prefix
#        2. configure + build tests/integration/install_consumer against that prefix;
#           every source was compiled with STACK_PROBE_FLAGS (compile_commands.json)
#        3. run hello_c, hello_c_static, hello_cpp
#        4. pkg-config --cflags holds STACK_PROBE_FLAGS;
#           cc hello.c $(pkg-config --cflags --libs weft), run it
cmake_minimum_required(VERSION 3.25)

foreach(_v WEFT_BUILD_DIR WEFT_SOURCE_DIR WORK_DIR WEFT_VERSION GENERATOR C_COMPILER CXX_COMPILER)
    if(NOT DEFINED ${_v} OR "${${_v}}" STREQUAL "")
        message(FATAL_ERROR "check.cmake: -D${_v}=... is required")
    endif()
endforeach()

function(run what)
    execute_process(COMMAND ${ARGN}
        RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "install_consumer: ${what} failed (${rc})\n"
                            "command: ${ARGN}\n${out}\n${err}")
    endif()
    message(STATUS "install_consumer: ${what}: ok")
    set(run_output "${out}" PARENT_SCOPE)
endfunction()

set(_prefix "${WORK_DIR}/prefix")
set(_build "${WORK_DIR}/consumer")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# 1. install
run("cmake --install" "${CMAKE_COMMAND}" --install "${WEFT_BUILD_DIR}" --prefix "${_prefix}")
foreach(_f include/weft/weft.h)
    if(NOT EXISTS "${_prefix}/${_f}")
        message(FATAL_ERROR "install_consumer: ${_f} was not installed")
    endif()
endforeach()

# 2. configure and build the consumer with find_package(weft)
set(_configure "${CMAKE_COMMAND}" -S "${CMAKE_CURRENT_LIST_DIR}" -B "${_build}"
    -G "${GENERATOR}"
    "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DCMAKE_PREFIX_PATH=${_prefix}"
    "-DWEFT_EXAMPLES_DIR=${WEFT_SOURCE_DIR}/examples"
    "-DWEFT_EXPECTED_VERSION=${WEFT_VERSION}"
    "-DWEFT_EXPECTED_PREFIX=${_prefix}"
    "-DWEFT_EXPECTED_STACK_PROBE_FLAGS=${STACK_PROBE_FLAGS}")
if(MAKE_PROGRAM)
    list(APPEND _configure "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(BUILD_TYPE)
    list(APPEND _configure "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}")
endif()
run("configure (find_package)" ${_configure})
run("build" "${CMAKE_COMMAND}" --build "${_build}")

# Every consumer source got the stack probes through find_package(weft).
if(STACK_PROBE_FLAGS)
    file(READ "${_build}/compile_commands.json" _commands)
    string(JSON _n LENGTH "${_commands}")
    if(_n EQUAL 0)
        message(FATAL_ERROR "install_consumer: ${_build}/compile_commands.json lists no compile command")
    endif()
    math(EXPR _last "${_n} - 1")
    foreach(_i RANGE ${_last})
        string(JSON _cmd GET "${_commands}" ${_i} command)
        string(JSON _file GET "${_commands}" ${_i} file)
        foreach(_flag IN LISTS STACK_PROBE_FLAGS)
            string(FIND "${_cmd}" "${_flag}" _at)
            if(_at EQUAL -1)
                message(FATAL_ERROR "install_consumer: ${_file} was compiled without ${_flag}, "
                                    "which find_package(weft) must pass on:\n${_cmd}")
            endif()
        endforeach()
    endforeach()
    message(STATUS "install_consumer: find_package passes on ${STACK_PROBE_FLAGS}: ok")
endif()

# 3. run what was built
file(STRINGS "${_build}/programs.txt" _programs)
foreach(_p IN LISTS _programs)
    get_filename_component(_name "${_p}" NAME)
    run("run ${_name}" "${_p}")
endforeach()

# 4. pkg-config
find_program(_pkg_config NAMES pkg-config pkgconf)
if(NOT _pkg_config)
    message(FATAL_ERROR "install_consumer: pkg-config not found (make deps installs it)")
endif()
file(GLOB_RECURSE _pc_files "${_prefix}/weft.pc")
if(NOT _pc_files)
    message(FATAL_ERROR "install_consumer: no weft.pc under ${_prefix}")
endif()
list(GET _pc_files 0 _pc)
get_filename_component(_pc_dir "${_pc}" DIRECTORY)
set(ENV{PKG_CONFIG_PATH} "${_pc_dir}")
run("pkg-config --modversion" "${_pkg_config}" --modversion weft)
string(STRIP "${run_output}" _pc_version)
if(NOT _pc_version STREQUAL WEFT_VERSION)
    message(FATAL_ERROR "install_consumer: weft.pc says ${_pc_version}, expected ${WEFT_VERSION}")
endif()
run("pkg-config --cflags" "${_pkg_config}" --cflags weft)
string(STRIP "${run_output}" _cflags)
separate_arguments(_cflags UNIX_COMMAND "${_cflags}")
foreach(_flag IN LISTS STACK_PROBE_FLAGS)
    if(NOT _flag IN_LIST _cflags)
        message(FATAL_ERROR "install_consumer: pkg-config --cflags weft gives '${_cflags}', without ${_flag}")
    endif()
endforeach()
run("pkg-config --libs" "${_pkg_config}" --libs weft)
string(STRIP "${run_output}" _libs)
separate_arguments(_libs UNIX_COMMAND "${_libs}")
run("pkg-config --variable=libdir" "${_pkg_config}" --variable=libdir weft)
string(STRIP "${run_output}" _libdir)

set(_exe "${WORK_DIR}/hello_pkgconfig")
run("cc hello.c $(pkg-config --cflags --libs weft)"
    "${C_COMPILER}" -std=c11 ${_cflags} "${WEFT_SOURCE_DIR}/examples/hello.c"
    -o "${_exe}" ${_libs} "-Wl,-rpath,${_libdir}")
run("run hello_pkgconfig" "${_exe}")
message(STATUS "install_consumer: all checks passed")
