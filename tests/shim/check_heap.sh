#!/usr/bin/env bash
# check_heap.sh [--max-peak BYTES] MIN_PEAK MAX_END MIN_QUOTA_PREEMPTIONS PROGRAM PRELOAD [ARGS...]
#
# Runs PROGRAM under libweft-pthread (PRELOAD: the library to preload, or "-"
# when PROGRAM is linked with it) with WEFT_STATS=1 and reads weft's heap line,
# "heap bytes (malloc) END (peak PEAK)": the program's own allocations, counted
# by the shim's malloc. Passes when the program exits 0, PEAK >= MIN_PEAK,
# END <= MAX_END (its frees were counted too) and the policy made at least
# MIN_QUOTA_PREEMPTIONS quota preemptions ("quota preemptions N"; dfs);
# with --max-peak, also PEAK <= BYTES (nothing but the program's own
# allocations was counted).
set -u
max_peak=
if [ "${1:-}" = "--max-peak" ]; then
    max_peak=$2
    shift 2
fi
min_peak=$1 max_end=$2 min_quota=$3 prog=$4 preload=$5
shift 5
err=$(mktemp)
trap 'rm -f "$err"' EXIT
if [ "$preload" = "-" ]; then
    WEFT_STATS=1 "$prog" "$@" 2>"$err"
else
    WEFT_STATS=1 LD_PRELOAD="$preload" "$prog" "$@" 2>"$err"
fi
rc=$?
cat "$err"
if [ $rc -ne 0 ]; then echo "FAIL: exit status $rc"; exit 1; fi
line=$(grep -E '^  heap bytes \(malloc\) [0-9]+ \(peak [0-9]+\)$' "$err")
if [ -z "$line" ]; then echo "FAIL: no 'heap bytes (malloc)' line in WEFT_STATS: the program's malloc was not counted"; exit 1; fi
end=$(sed -E 's/.*\(malloc\) ([0-9]+) .*/\1/' <<<"$line")
peak=$(sed -E 's/.*peak ([0-9]+)\)$/\1/' <<<"$line")
quota=$(sed -n 's/^  quota preemptions *\([0-9][0-9]*\).*/\1/p' "$err")
quota=${quota:-0}
if [ "$peak" -lt "$min_peak" ]; then echo "FAIL: heap peak $peak bytes, the program holds at least $min_peak at once"; exit 1; fi
if [ -n "$max_peak" ] && [ "$peak" -gt "$max_peak" ]; then
    echo "FAIL: heap peak $peak bytes, more than $max_peak: allocations that are not the program's were counted"; exit 1
fi
if [ "$end" -gt "$max_end" ]; then echo "FAIL: heap at exit $end bytes, more than $max_end: frees were not counted"; exit 1; fi
if [ "$quota" -lt "$min_quota" ]; then
    echo "FAIL: $quota quota preemptions, expected at least $min_quota: the policy's quota did not see the allocations"; exit 1
fi
echo "PASS: heap peak $peak, at exit $end, $quota quota preemptions"
