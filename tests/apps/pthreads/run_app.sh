#!/usr/bin/env bash
# run_app.sh REGEX PROGRAM [ARGS...]
#
# Runs PROGRAM (one of apps/'s plain Pthreads programs) and passes when it
# exits 0 and its last stdout line matches the extended regular expression REGEX.
set -u
regex=$1
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ $rc -ne 0 ]; then echo "FAIL: exit status $rc"; exit 1; fi
last=$(printf '%s\n' "$out" | tail -n 1)
if ! printf '%s\n' "$last" | grep -Eq -- "$regex"; then
    echo "FAIL: last line '$last' does not match '$regex'"; exit 1
fi
echo "PASS"
