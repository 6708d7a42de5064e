#!/usr/bin/env bash
# run_program.sh PRELOAD MIN_THREADS INPUT FIRST [SECOND]
#
# Runs an unmodified third-party Pthreads program (a Debian package's binary)
# on glibc's threads and under libweft-pthread (LD_PRELOAD=PRELOAD), and
# compares them. FIRST and SECOND are shell commands that read stdin and write
# stdout (a compressor and its decompressor; a SQL shell and no SECOND).
# INPUT is a file FIRST reads, or "generated": about 5 MiB of words, made here
# with a fixed seed (compressible, so that every thread has work).
#
# Passes when, for each command, both runs exit 0 and their stdout is the same
# bytes; when SECOND, given FIRST's output, gives back INPUT (a round trip);
# and when weft's trace of the shim's FIRST run shows at least MIN_THREADS weft
# threads besides main (the program's pthread_create reached the shim). The
# trace (WEFT_TRACE), not WEFT_STATS, counts them: xz closes stderr before it
# exits, so statistics printed at exit would be lost.
set -u
preload=$1 min=$2 input=$3 first=$4 second=${5:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; exit 1; }

prog=${first%% *}
command -v "$prog" >/dev/null || fail "'$prog' is not installed (scripts/deps.sh test installs it)"

if [ "$input" = generated ]; then
    input=$tmp/input
    # 100,000 lines of 8 words drawn from 4,096 made-up ones (Park-Miller
    # generator, seed 1): the same bytes on every machine.
    awk 'BEGIN {
        x = 1
        for (w = 0; w < 4096; w++) {
            s = ""; x = (x * 16807) % 2147483647; len = 2 + x % 8
            for (c = 0; c < len; c++) { x = (x * 16807) % 2147483647; s = s substr("abcdefghijklmnop", 1 + x % 16, 1) }
            word[w] = s
        }
        for (l = 0; l < 100000; l++) {
            line = ""
            for (k = 0; k < 8; k++) { x = (x * 16807) % 2147483647; line = line (k ? " " : "") word[x % 4096] }
            print line
        }
    }' >"$input"
fi

run() {  # run MODE COMMAND IN OUT: MODE glibc or shim
    local mode=$1 cmd=$2 in=$3 out=$4
    if [ "$mode" = glibc ]; then
        bash -c "$cmd" <"$in" >"$out" 2>"$out.err"
    else
        # Preloaded into the program only, not into the shell that starts it.
        bash -c 'export LD_PRELOAD="$1" WEFT_TRACE="$2"; exec '"$cmd" - "$preload" "$out.trace" <"$in" >"$out" 2>"$out.err"
    fi
    local rc=$?
    if [ $rc -ne 0 ]; then
        cat "$out.err"
        fail "'$cmd' on $mode exited with status $rc"
    fi
}

run glibc "$first" "$input" "$tmp/glibc.1"
run shim "$first" "$input" "$tmp/shim.1"
cat "$tmp/shim.1.err"
cmp -s "$tmp/glibc.1" "$tmp/shim.1" ||
    fail "'$first': under the shim its output ($(wc -c <"$tmp/shim.1") bytes) differs from glibc's ($(wc -c <"$tmp/glibc.1") bytes)"
if [ -n "$second" ]; then
    run glibc "$second" "$tmp/glibc.1" "$tmp/glibc.2"
    run shim "$second" "$tmp/shim.1" "$tmp/shim.2"
    cat "$tmp/shim.2.err"
    cmp -s "$tmp/glibc.2" "$tmp/shim.2" || fail "'$second': under the shim its output differs from glibc's"
    cmp -s "$input" "$tmp/shim.2" || fail "'$second' under the shim did not give back the input"
fi

[ -s "$tmp/shim.1.trace" ] || fail "no weft trace from '$first' under the shim: it did not run on weft"
# One slice per run of a weft thread, with its id; main is id 1.
threads=$(grep -o '"args":{"id":[0-9]*}' "$tmp/shim.1.trace" | sort -u | grep -vc '"id":1}')
if [ "$threads" -lt "$min" ]; then
    fail "'$first' ran $threads weft threads besides main under the shim, it makes at least $min: its threads were not weft's"
fi
echo "PASS: '$first'${second:+ and '$second'} give glibc's bytes under the shim; $threads weft threads"
