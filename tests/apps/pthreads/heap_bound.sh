#!/usr/bin/env bash
# heap_bound.sh BOUND PRELOAD PROGRAM [ARGS...]
#
# Narlikar & Blelloch's Figure 9 under libweft-pthread: PROGRAM's fine
# version's heap high-water mark (weft's statistics, WEFT_STATS=1: the shim
# counts every malloc) against its serial version's, both with ARGS and with
# the program's own check against the serial version (as weft-bench suite000's
# first round runs it). WEFT_SCHED and WEFT_WORKERS come from the environment.
# Passes when fine's peak is at most BOUND times serial's.
set -u
bound=$1 preload=$2 prog=$3
shift 3
peak() {
    local out rc
    out=$(WEFT_STATS=1 WEFT_ADAPT=off LD_PRELOAD="$preload" "$prog" "$@" 2>&1)
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "FAIL: $prog $*: exit status $rc" >&2
        printf '%s\n' "$out" >&2
        return 1
    fi
    printf '%s\n' "$out" | sed -n 's/^  heap bytes (malloc) *[0-9]* (peak \([0-9][0-9]*\))$/\1/p'
}
serial=$(peak --version serial "$@") || exit 1
fine=$(peak --version fine "$@") || exit 1
if [ -z "$serial" ] || [ -z "$fine" ]; then
    echo "FAIL: no heap high-water mark in weft's statistics (serial '$serial', fine '$fine')"
    exit 1
fi
if ! awk -v f="$fine" -v s="$serial" -v b="$bound" 'BEGIN { exit !(f <= b * s) }'; then
    echo "FAIL: fine version's peak heap $fine bytes is $(awk -v f="$fine" -v s="$serial" 'BEGIN { printf "%.3f", f / s }')x the serial version's $serial (bound ${bound}x)"
    exit 1
fi
echo "PASS: fine version's peak heap $fine bytes, $(awk -v f="$fine" -v s="$serial" 'BEGIN { printf "%.3f", f / s }')x the serial version's $serial (bound ${bound}x)"
