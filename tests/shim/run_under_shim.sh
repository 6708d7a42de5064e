#!/usr/bin/env bash
# run_under_shim.sh MIN_THREADS GLIBC_PROGRAM "GLIBC_ARGS" PROGRAM PRELOAD [ARGS...]
#
# Runs GLIBC_PROGRAM (with GLIBC_ARGS, one word list) on glibc's threads, then
# PROGRAM under libweft-pthread (PRELOAD: the library to preload, or "-" when
# PROGRAM is linked with it), with WEFT_STATS=1. Passes when both exit 0, the
# shim run's last stdout line equals the glibc run's, and weft's statistics say
# it created at least MIN_THREADS threads (the program's threads were weft's).
set -u
min=$1 glibc_prog=$2 glibc_args=$3 prog=$4 preload=$5
shift 5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# shellcheck disable=SC2086 # GLIBC_ARGS is a word list
"$glibc_prog" $glibc_args >"$tmp/glibc.out" 2>"$tmp/glibc.err"
glibc_rc=$?
if [ "$glibc_rc" -ne 0 ]; then
    echo "FAIL: on glibc's threads: $glibc_prog exited with status $glibc_rc"; cat "$tmp/glibc.err"; exit 1
fi
if [ "$preload" = "-" ]; then
    WEFT_STATS=1 "$prog" "$@" >"$tmp/shim.out" 2>"$tmp/shim.err"
else
    WEFT_STATS=1 LD_PRELOAD="$preload" "$prog" "$@" >"$tmp/shim.out" 2>"$tmp/shim.err"
fi
rc=$?
cat "$tmp/shim.out"; cat "$tmp/shim.err"
if [ $rc -ne 0 ]; then echo "FAIL: under the shim: exit status $rc"; exit 1; fi
want=$(tail -n 1 "$tmp/glibc.out") got=$(tail -n 1 "$tmp/shim.out")
if [ "$want" != "$got" ]; then
    echo "FAIL: last line under the shim: '$got'; on glibc's threads: '$want'"; exit 1
fi
created=$(sed -n 's/^  threads created *\([0-9][0-9]*\)$/\1/p' "$tmp/shim.err")
if [ -z "$created" ]; then echo "FAIL: no weft statistics on stderr: the program did not run on weft"; exit 1; fi
if [ "$created" -lt "$min" ]; then
    echo "FAIL: weft created $created threads, the program creates at least $min: they were not weft threads"; exit 1
fi
echo "PASS: '$got', $created weft threads"
