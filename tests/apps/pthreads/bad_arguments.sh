#!/usr/bin/env bash
# bad_arguments.sh BIN_DIR
#
# Every plain Pthreads program of apps/ refuses a bad command line with exit
# status 2 and a message that names the flag and what is valid.
set -u
bin=$1
failures=0
# expect PROGRAM "MESSAGE REGEX" ARGS...
expect() {
    local prog=$1 regex=$2
    shift 2
    local err rc
    err=$("$bin/pthreads_$prog" "$@" 2>&1 >/dev/null)
    rc=$?
    if [ $rc -ne 2 ] || ! printf '%s\n' "$err" | grep -Eq -- "$regex"; then
        echo "FAIL: pthreads_$prog $*: exit status $rc (want 2), stderr: $err (want /$regex/)"
        failures=$((failures + 1))
    fi
}
for prog in fft1d spmv volrend dtree barnes fmm; do
    expect $prog "--version is required" --no-check
    expect $prog "--version 'medium': valid versions are serial, coarse, fine" --version medium
    expect $prog "unknown argument '--bogus'" --version serial --bogus
    expect $prog "--seed 'x': expected an integer from 0 to" --version serial --seed x
    expect $prog "--version needs a value" --version
    expect $prog "^usage: $prog --version serial\|coarse\|fine" --version
done
expect fft1d "--log2n '27': expected an integer from 1 to 26" --version serial --log2n 27
expect fft1d "--leaf 3: expected a power of two from 2 to n = 2\^4" --version fine --log2n 4 --leaf 3
expect fft1d "--leaf 32: expected a power of two from 2 to n = 2\^4" --version fine --log2n 4 --leaf 32
expect fft1d "--threads applies to --version coarse( and fftw)? only" --version fine --threads 2
expect spmv "--rows '8': expected an integer from 16 to 10000000" --version serial --rows 8
expect spmv "--products '0': expected an integer from 1 to 100000" --version serial --products 0
expect spmv "--threads 100: expected 1 to the number of rows, 50" --version fine --rows 50 --threads 100
expect spmv "--threads applies to --version coarse and fine only" --version serial --threads 2
expect volrend "--tiles-per-thread 101: expected 1 to the number of tiles, 100" --version fine --image 40 --tiles-per-thread 101
expect volrend "--tiles-per-thread applies to --version fine only" --version coarse --tiles-per-thread 4
expect volrend "--threads applies to --version coarse only" --version fine --threads 4
expect volrend "--volume '8': expected an integer from 16 to 512" --version serial --volume 8
expect volrend "--frames '0': expected an integer from 1 to 1000" --version serial --frames 0
expect dtree "--instances '99': expected an integer from 100 to 10000000" --version serial --instances 99
expect dtree "--min-node '1': expected an integer from 2 to 10000000" --version serial --min-node 1
expect dtree "--min-node 200: expected 2 to the number of instances, 100" --version serial --instances 100 --min-node 200
expect dtree "--grain 200: expected 2 to the number of instances, 100" --version fine --instances 100 --grain 200
expect dtree "--grain applies to --version fine only" --version coarse --grain 100
expect dtree "--threads applies to --version coarse only" --version fine --threads 2
expect dtree "--threads '0': expected an integer from 1 to 4096" --version coarse --threads 0
expect barnes "--bodies '15': expected an integer from 16 to 10000000" --version serial --bodies 15
expect barnes "--steps '2': expected an integer from 3 to 1000" --version serial --steps 2
expect barnes "--grain 101: expected 1 to the number of bodies, 100" --version fine --bodies 100 --grain 101
expect barnes "--grain applies to --version fine only" --version serial --grain 10
expect barnes "--threads applies to --version coarse only" --version fine --threads 2
expect barnes "--threads 101: expected 1 to the number of bodies, 100" --version coarse --bodies 100 --threads 101
expect fmm "--particles '15': expected an integer from 16 to 10000000" --version serial --particles 15
expect fmm "--levels '11': expected an integer from 2 to 10" --version serial --levels 11
expect fmm "--terms '0': expected an integer from 1 to 30" --version serial --terms 0
expect fmm "--threads applies to --version coarse only" --version fine --threads 2
# FFTW's flags, where the build has it.
if "$bin/pthreads_fft1d" --version fftw --log2n 4 >/dev/null 2>&1; then
    expect fft1d "--leaf does not apply to --version fftw" --version fftw --leaf 4
    expect fft1d "--threads '0': expected an integer from 1 to 4096" --version fftw --threads 0
    expect fft1d "--version 'medium': valid versions are serial, coarse, fine, fftw$" --version medium
fi
if [ $failures -ne 0 ]; then echo "FAIL: $failures cases"; exit 1; fi
echo "PASS: every bad command line refused with status 2 and its message"
