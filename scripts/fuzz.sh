#!/usr/bin/env bash
# scripts/fuzz.sh — build the libFuzzer targets of fuzz/ (the `fuzz` preset:
# clang-14, ASan + UBSan) and run each for a bounded time from its seed corpus.
#
#   scripts/fuzz.sh [SECONDS]      SECONDS per target (default: WEFT_FUZZ_SECONDS or 30)
#
# `make test` runs the same preset as its last stage (scripts/test.sh), with the
# preset's 10 s per target, the targets two at a time: a check on every run;
# this script's longer default is for fuzzing on purpose. A crash leaves its input
# in build/fuzz/fuzz-crash-<target>-*; rerun it with build/fuzz/bin/weft-fuzz-<target> <file>.
# New inputs the fuzzer finds go to build/fuzz/fuzz-corpus/<target>/ (copy the
# interesting ones to fuzz/corpus/<target>/ to keep them).
# Environment: WEFT_JOBS (default 2).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${1:-${WEFT_FUZZ_SECONDS:-30}}
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
    echo "fuzz.sh: SECONDS='$seconds' must be a positive integer" >&2
    exit 2
fi
if ! command -v clang++-14 >/dev/null 2>&1; then
    echo "fuzz.sh: clang++-14 is missing: apt-get install clang-14 libclang-rt-14-dev (or scripts/deps.sh test)" >&2
    exit 1
fi
jobs=${WEFT_JOBS:-2}
cmake --preset fuzz -DWEFT_FUZZ_SECONDS="$seconds" >/dev/null
cmake --build --preset fuzz -j"$jobs"
ctest --preset fuzz -j"$jobs"
