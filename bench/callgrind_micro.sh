#!/usr/bin/env bash
# Instructions per micro operation, counted by callgrind.
#
# usage: bench/callgrind_micro.sh [--bench PATH] [--iters N] [--kernel-iters N] [--json] [OP ...]
#
# For each micro operation OP (default: every one `weft-bench micro --list-ops`
# shows), runs
#     valgrind --tool=callgrind weft-bench micro --only OP --rounds 1 --warmup W --iters N ...
# twice, with N operations and with N/10, and prints
#     Ir per operation = (Ir(N) - Ir(N/10)) / (ops(N) - ops(N/10))
# where Ir is the total instruction count of the whole process (every thread)
# and ops is OP_ops from the run's JSON. Everything that does not scale with N
# (process start-up, weft_init/finalize, the fixed warm-up of W operations,
# creating the two threads of a ping-pong) cancels in the difference.
#
# Instructions are not time: a syscall counts as the few instructions of its
# user-space entry code, and the kernel's share of a Pthreads switch is invisible to
# callgrind. Compare weft and Boost.Fiber (all user space) with these; compare
# with Pthreads by time (weft-bench micro).
#
# Options:
#   --bench PATH        the weft-bench executable (default: $WEFT_BENCH, else
#                       build/release/bin/weft-bench beside this script's repository)
#   --iters N           N for user-level operations (default 20000)
#   --kernel-iters N    N for operations on kernel threads (default 2000)
#   --warmup W          warm-up operations in both runs (default 100)
#   --json              one JSON object per line instead of a table
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bench="${WEFT_BENCH:-$here/../build/release/bin/weft-bench}"
iters=20000
kernel_iters=2000
warmup=100
json=0
ops=()

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { echo "callgrind_micro.sh: $*" >&2; exit 2; }
is_count() { [[ "$1" =~ ^[1-9][0-9]*$ ]]; }

while (($#)); do
    case "$1" in
    --bench) bench="${2:?--bench needs a path}"; shift 2 ;;
    --iters) is_count "${2:-}" || die "--iters expects a positive integer, got '${2:-}'"; iters="$2"; shift 2 ;;
    --kernel-iters) is_count "${2:-}" || die "--kernel-iters expects a positive integer, got '${2:-}'"; kernel_iters="$2"; shift 2 ;;
    --warmup) [[ "${2:-}" =~ ^[0-9]+$ ]] || die "--warmup expects an integer, got '${2:-}'"; warmup="$2"; shift 2 ;;
    --json) json=1; shift ;;
    -h | --help) usage; exit 0 ;;
    --*) die "unknown option '$1'; valid: --bench, --iters, --kernel-iters, --warmup, --json, --help" ;;
    *) ops+=("$1"); shift ;;
    esac
done

command -v valgrind >/dev/null || die "valgrind is not installed (Debian: apt-get install valgrind)"
[[ -x "$bench" ]] || die "no weft-bench at '$bench' (build it: cmake --preset release && cmake --build --preset release; or pass --bench PATH)"
((iters >= 10 && kernel_iters >= 10)) || die "--iters and --kernel-iters must be at least 10 (the short run uses a tenth)"

# The operations and whether each is sized by --iters or --kernel-iters.
declare -A sized_by
while read -r op _family _unit by; do
    sized_by["$op"]="$by"
done < <("$bench" micro --list-ops | awk 'NR > 2 { print $1, $2, $3, $NF }')
mapfile -t all_ops < <("$bench" micro --list-ops | awk 'NR > 2 { print $1 }')
valid="${all_ops[*]}"
((${#ops[@]} > 0)) || ops=("${all_ops[@]}")
for op in "${ops[@]}"; do
    [[ -n "${sized_by[$op]:-}" ]] || die "unknown operation '$op'; valid: $valid"
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# run OP N -> prints "IR OPS"
run() {
    local op="$1" n="$2" out="$tmp/cg.out" json_out="$tmp/run.json"
    if ! valgrind --tool=callgrind --callgrind-out-file="$out" --dump-instr=no --dump-line=no \
        "$bench" micro --only "$op" --rounds 1 --warmup "$warmup" --iters "$n" --kernel-iters "$n" --json \
        >"$json_out" 2>"$tmp/valgrind.log"; then
        echo "callgrind_micro.sh: the run of $op with N=$n failed; valgrind's log:" >&2
        tail -20 "$tmp/valgrind.log" >&2
        exit 1
    fi
    local ir n_ops
    ir="$(awk '/^(summary|totals):/ { print $2; exit }' "$out")"
    n_ops="$(grep -o "\"${op}_ops\":[0-9]*" "$json_out" | head -1 | cut -d: -f2)"
    [[ -n "$ir" && -n "$n_ops" ]] || { echo "callgrind_micro.sh: no counts for $op (N=$n)" >&2; exit 1; }
    echo "$ir $n_ops"
}

if ((!json)); then
    printf '%-28s %14s %12s %12s\n' "operation" "Ir per op" "N (ops)" "N/10 (ops)"
    printf '%s\n' "--------------------------------------------------------------------"
fi
for op in "${ops[@]}"; do
    if [[ "${sized_by[$op]}" == "--kernel-iters" ]]; then n="$kernel_iters"; else n="$iters"; fi
    read -r ir_hi ops_hi < <(run "$op" "$n")
    read -r ir_lo ops_lo < <(run "$op" "$((n / 10))")
    per_op="$(awk -v a="$ir_hi" -v b="$ir_lo" -v x="$ops_hi" -v y="$ops_lo" 'BEGIN { printf "%.1f", (a - b) / (x - y) }')"
    if ((json)); then
        printf '{"experiment":"callgrind_micro","op":"%s","ir_per_op":%s,"ir_hi":%s,"ops_hi":%s,"ir_lo":%s,"ops_lo":%s}\n' \
            "$op" "$per_op" "$ir_hi" "$ops_hi" "$ir_lo" "$ops_lo"
    else
        printf '%-28s %14s %12s %12s\n' "$op" "$per_op" "$ops_hi" "$ops_lo"
    fi
done
