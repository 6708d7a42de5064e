#!/usr/bin/env bash
# scripts/test_times.sh — where `make test`'s test time goes, from the ctest logs
# scripts/test.sh leaves in build/test-logs/<stage>-ctest.log.
#
#   scripts/test_times.sh [N] [LOGDIR]      N slowest tests per stage (default 30),
#                                           LOGDIR default build/test-logs
#
# Per stage: the number of tests, the sum of their seconds (what -j2 divides by
# about two; less sensitive to the machine's load than the stage's wall time),
# the sum over the tests that took under 0.3 s (process start-up dominates
# them), and the N slowest with their seconds.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

n=${1:-30}
logdir=${2:-build/test-logs}
if ! [[ "$n" =~ ^[1-9][0-9]*$ ]]; then
    echo "test_times.sh: N='$n' must be a positive integer" >&2
    exit 2
fi
shopt -s nullglob
logs=("$logdir"/*-ctest.log)
if ((${#logs[@]} == 0)); then
    echo "test_times.sh: no <stage>-ctest.log in $logdir (run make test or scripts/test.sh first)" >&2
    exit 1
fi
for log in "${logs[@]}"; do
    stage=$(basename "$log" -ctest.log)
    # "  12/3936 Test #3661: integration.rpc_static_assert .....   Passed    5.91 sec"
    times=$(grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: ' "$log" |
        sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec$/\2 \1/' | sort -rn)
    awk -v stage="$stage" '{ s += $1; if ($1 < 0.3) { q += $1; nq++ } }
        END { printf "== %s: %d tests, %.0f s summed (%d under 0.3 s: %.0f s)\n", stage, NR, s, nq, q }' <<<"$times"
    head -n "$n" <<<"$times" | awk '{ printf "  %7.2f  %s\n", $1, $2 }'
done
