#!/usr/bin/env bash
# scripts/deps.sh — install the Debian packages a make target needs, and only
# those that are missing.
#
#   scripts/deps.sh [SET ...]      SET: build, bench, test, tools, all (default: all)
#
#   build:  cmake (>= 3.25), ninja-build, g++, pkg-config, libgtest-dev
#           (every preset configures tests/, which needs GoogleTest's headers),
#           libopenmpi-dev + openmpi-bin (Open MPI: apps/pde, weft-bench msg/pde,
#           the MPI tests; docs/design/mpi.md says why Open MPI)
#   bench:  build + the peers weft-bench compares with and the report's plots:
#           libboost-fiber-dev, libboost-context-dev, libtbb-dev, libfftw3-dev
#           (FFTW: the 1-D FFT's peer, apps/fft1d), python3-matplotlib
#           (OpenMP comes with g++)                          -> make demo, make bench
#   test:   build + libtbb-dev (tests/apps runs the oneTBB versions; OpenMP
#           comes with g++) + g++-aarch64-linux-gnu and qemu-user (the AArch64
#           context switch, cross-compiled and run under emulation) + clang-14
#           and libclang-rt-14-dev (libFuzzer: the fuzz stage) + pigz, plzip,
#           xz-utils, zstd, sqlite3, pbzip2, lbzip2 (unmodified Pthreads programs run under
#           libweft-pthread: label shim_programs) + ccache (scripts/test.sh
#           compiles through it: a checkout of sources built before
#           recompiles in seconds)                           -> make test
#   tools:  valgrind (bench/callgrind_micro.sh: instructions per micro operation)
#   all:    every set                                         -> make deps
#
# Idempotent: with everything installed it only checks (dpkg-query) and exits 0,
# without touching the network. `apt-get update` runs only when something is
# missing. Needs root (or password-less sudo) only in that case.
#
# Environment: WEFT_DEPS_EXTRA="pkg ..." adds packages (e.g. clang-format).
set -euo pipefail

build_set=(cmake ninja-build g++ pkg-config libgtest-dev libopenmpi-dev openmpi-bin)
peer_set=(libboost-fiber-dev libboost-context-dev libtbb-dev libfftw3-dev)
bench_set=("${build_set[@]}" "${peer_set[@]}" python3-matplotlib)
shim_programs_set=(pigz plzip xz-utils zstd sqlite3 pbzip2 lbzip2)
test_set=("${build_set[@]}" libtbb-dev g++-aarch64-linux-gnu qemu-user clang-14 libclang-rt-14-dev "${shim_programs_set[@]}" ccache)
tools_set=(valgrind)

say() { printf 'deps: %s\n' "$*" >&2; }

sets=("$@")
((${#sets[@]} > 0)) || sets=(all)
packages=()
for s in "${sets[@]}"; do
    case "$s" in
        build) packages+=("${build_set[@]}") ;;
        bench | demo) packages+=("${bench_set[@]}") ;;
        test) packages+=("${test_set[@]}") ;;
        tools) packages+=("${tools_set[@]}") ;;
        all) packages+=("${bench_set[@]}" "${test_set[@]}" "${tools_set[@]}") ;;
        *)
            say "error: unknown package set '$s'; valid: build, bench (or demo), test, tools, all"
            exit 2
            ;;
    esac
done
# shellcheck disable=SC2206 # word splitting intended
packages+=(${WEFT_DEPS_EXTRA:-})
# Each package once, in first-seen order.
declare -A seen=()
unique=()
for p in "${packages[@]}"; do
    [[ -n "${seen[$p]:-}" ]] && continue
    seen[$p]=1
    unique+=("$p")
done
packages=("${unique[@]}")

if ! command -v dpkg-query >/dev/null 2>&1; then
    # Not Debian: we cannot install, but the build may still work.
    say "dpkg-query not found: not a Debian system, so nothing is installed."
    say "weft needs: cmake >= 3.25, ninja, a C++20 compiler, GoogleTest, pkg-config; optionally an MPI;"
    say "for the benchmarks: Boost.Fiber, oneTBB, python3 + matplotlib; for the tests: those peers,"
    say "an aarch64-linux-gnu cross compiler, qemu-user, and pigz, plzip, xz, zstd, sqlite3, pbzip2 and lbzip2 (run under"
    say "libweft-pthread); for bench/callgrind_micro.sh: valgrind."
    for tool in cmake ninja c++ pkg-config; do
        if ! command -v "$tool" >/dev/null 2>&1; then
            say "error: '$tool' is missing; install it with your package manager."
            exit 1
        fi
    done
    exit 0
fi

missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    if [[ "$status" != "install ok installed" ]]; then
        missing+=("$p")
    fi
done

if ((${#missing[@]} == 0)); then
    say "${sets[*]}: all ${#packages[@]} packages present"
else
    say "${sets[*]}: missing: ${missing[*]}"
    if [[ $(id -u) -eq 0 ]]; then
        sudo=()
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo=(sudo -n)
    else
        say "error: these Debian packages are missing and installing them needs root:"
        say "    apt-get update && apt-get install -y ${missing[*]}"
        say "run that as root (or run 'make deps' as root), then try again."
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -q
    "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
    say "installed: ${missing[*]}"
fi

# Debian 12 has CMake 3.25.1; CMakePresets.json version 6 needs 3.25.
cmake_version=$(cmake --version | sed -n '1s/^cmake version \([0-9.]*\).*/\1/p')
if [[ -z "$cmake_version" ]] || ! printf '3.25\n%s\n' "$cmake_version" | sort -V -C; then
    say "error: cmake ${cmake_version:-?} is older than 3.25 (needed for CMakePresets.json v6)"
    exit 1
fi
