#!/usr/bin/env bash
# scripts/test.sh — what `make test` (and so CI, .ci/run) runs:
#
#   1. release preset: build, ctest (every label)
#   2. asan preset (ASan + UBSan + LSan): build, ctest (every label)
#   3. tsan preset: build what the concurrency label runs (weft_concurrency_tests),
#      ctest -L concurrency
#   4. fuzz preset (clang-14 + libFuzzer): build fuzz/'s targets, replay each one's
#      seed corpus and fuzz on for the preset's WEFT_FUZZ_SECONDS (10 s); scripts/fuzz.sh
#      runs it alone, 30 s per target by default
#
# Each stage builds with -j$WEFT_JOBS and runs ctest -j$WEFT_JOBS (default 2).
# A stage whose configure or build fails counts as one failed test and the next
# stage still runs. The last line of the output is always
#       N passed, N failed
# summed over the stages (CI reads it; skipped tests count as neither); the exit
# status is non-zero if anything failed.
#
# Environment: WEFT_JOBS (default 2); WEFT_TEST_STAGES (default "release asan tsan fuzz");
# WEFT_CTEST_ARGS (extra ctest arguments for every stage, e.g. "-R conformance\.");
# WEFT_CCACHE=0 builds without ccache even where it is installed (see below).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

jobs=${WEFT_JOBS:-2}
# Four fresh builds are most of the run's time on 2 cores; where ccache is installed,
# objects compiled before (another checkout of the same sources) are reused. The tests
# run the same binaries either way.
# CMake passes absolute paths (sources, -I), and -g makes ccache hash the build
# directory: without a base_dir covering the checkout and hash_dir off, a clone in
# another directory (CI's clean checkout) misses on every object. The checkout's
# root as base_dir makes every path relative to the build directory, the same in
# any clone.
if [[ "${WEFT_CCACHE:-1}" != 0 && -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]] && command -v ccache >/dev/null; then
    export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache
    export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
fi
read -r -a stages <<<"${WEFT_TEST_STAGES:-release asan tsan fuzz}"
# shellcheck disable=SC2206 # word splitting intended
extra_ctest_args=(${WEFT_CTEST_ARGS:-})

total_passed=0
total_failed=0
summary=()
logdir=build/test-logs
mkdir -p "$logdir"
start_all=$SECONDS

for stage in "${stages[@]}"; do
    start=$SECONDS
    echo "==== $stage: configure and build ================================================"
    if ! cmake --preset "$stage" >"$logdir/$stage-configure.log" 2>&1; then
        cat "$logdir/$stage-configure.log"
        echo "==== $stage: CONFIGURE FAILED (counted as 1 failed test)"
        total_failed=$((total_failed + 1))
        summary+=("$stage: configure failed")
        continue
    fi
    # The tsan test preset runs only the tests labelled concurrency: build only
    # what they run (tests/CMakeLists.txt, weft_concurrency_tests).
    build_targets=()
    if [[ "$stage" == tsan ]]; then
        build_targets=(--target weft_concurrency_tests)
    fi
    if ! cmake --build --preset "$stage" -j"$jobs" "${build_targets[@]}"; then
        echo "==== $stage: BUILD FAILED (counted as 1 failed test)"
        total_failed=$((total_failed + 1))
        summary+=("$stage: build failed")
        continue
    fi
    build_s=$((SECONDS - start))

    echo "==== $stage: ctest ======================================================="
    log="$logdir/$stage-ctest.log"
    ctest --preset "$stage" -j"$jobs" "${extra_ctest_args[@]}" 2>&1 | tee "$log"
    # "95% tests passed, 3 tests failed out of 57"
    line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
    if [[ -n "$line" ]]; then
        failed=$(sed -E 's/^[0-9]+% tests passed, ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
        count=$(sed -E 's/^[0-9]+% tests passed, ([0-9]+) tests? failed out of ([0-9]+).*/\2/' <<<"$line")
        # Skipped and disabled tests are listed under "did not run"; not passes.
        skipped=$(sed -n '/^The following tests did not run:/,/^$/p' "$log" | grep -cE '\((Skipped|Disabled)\)$' || true)
        passed=$((count - failed - skipped))
    else
        # No summary: ctest found no tests, or test discovery itself failed.
        echo "==== $stage: ctest printed no summary (no tests found, or discovery failed)"
        passed=0
        failed=1
        skipped=0
    fi
    total_passed=$((total_passed + passed))
    total_failed=$((total_failed + failed))
    summary+=("$stage: $passed passed, $failed failed, $skipped skipped (build ${build_s}s, tests $((SECONDS - start - build_s))s)")
    # Name the failures in the summary too: CI keeps only the tail of the output.
    while IFS= read -r failed_test; do
        summary+=("    failed: $failed_test")
    done < <(sed -n '/^The following tests FAILED:/,/^$/p' "$log" | grep -E '^[[:space:]]+[0-9]+ - ' | sed -E 's/^[[:space:]]+//')
done

echo "==== summary (${stages[*]}; $((SECONDS - start_all))s in all) ===================="
for s in "${summary[@]}"; do
    echo "  $s"
done
echo "$total_passed passed, $total_failed failed"
if ((total_failed > 0 || total_passed == 0)); then
    exit 1
fi
exit 0
