#!/usr/bin/env bash
# scripts/deps.sh — install the Debian packages weft's build, tests and demo need,
# and only those that are missing (`make deps`; `make demo` and `make test` call it).
#
#   build:   cmake (>= 3.25), ninja-build, g++, pkg-config
#   tests:   libgtest-dev, valgrind (callgrind instruction counts),
#            g++-aarch64-linux-gnu + qemu-user (the AArch64 switch, run under emulation)
#   peers:   libboost-fiber-dev, libboost-context-dev, libtbb-dev (weft-bench)
#   report:  python3-matplotlib (plots of weft-bench demo)
#
# Idempotent: with everything installed it only checks (dpkg-query) and exits 0,
# without touching the network. `apt-get update` runs only when something is
# missing. Needs root (or password-less sudo) only in that case.
#
# Environment: WEFT_DEPS_EXTRA="pkg ..." adds packages (e.g. clang-format).
set -euo pipefail

packages=(
    cmake
    ninja-build
    g++
    pkg-config
    libgtest-dev
    valgrind
    g++-aarch64-linux-gnu
    qemu-user
    libboost-fiber-dev
    libboost-context-dev
    libtbb-dev
    python3-matplotlib
)
# shellcheck disable=SC2206 # word splitting intended
packages+=(${WEFT_DEPS_EXTRA:-})

say() { printf 'deps: %s\n' "$*" >&2; }

if ! command -v dpkg-query >/dev/null 2>&1; then
    # Not Debian: we cannot install, but the build may still work.
    say "dpkg-query not found: not a Debian system, so nothing is installed."
    say "weft needs: cmake >= 3.25, ninja, a C++20 compiler, GoogleTest, pkg-config;"
    say "optional: Boost.Fiber, oneTBB, valgrind, python3 + matplotlib."
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
    say "all ${#packages[@]} packages present"
else
    say "missing: ${missing[*]}"
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
