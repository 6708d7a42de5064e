#!/usr/bin/env bash
# bench/report/results_md.py on a small `weft-bench all` file: every target
# row of the file is in the printed block with its value, bound and verdict;
# the targets judged by the script for an experiment that writes none
# (micro) carry the right verdicts; the header names the command, the date
# the experiment started, the CPU, the commit and the load; and --update
# rewrites only the text between a block's markers, the same on a second run.
#
# Environment (optional): WEFT_SOURCE_DIR (default: two levels above this script).
# Skipped (exit 77) without python3.
set -euo pipefail
src="${WEFT_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
if ! command -v python3 >/dev/null; then
    echo "skipped: no python3"
    exit 77
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cat >"$work/results.jsonl" <<'JSONL'
{"experiment":"suite","suite":"all","date":"2026-11-28T05:14:00Z","commit":"abcdef123456","host":"vm","build_type":"Release","cpus":2,"cpu_model":"Test CPU 9000","loadavg_1m":0.2,"experiments":["micro","msg","share"],"seconds_per_experiment":{"micro":120,"share":60,"msg":30},"seconds":210,"failures":0}
{"experiment":"micro","build_type":"Release","cpus":2,"cpu_model":"Test CPU 9000","loadavg_1m":1.25,"workers":1,"sched":"ws","rounds":11,"create_join_ns":80.0,"create_join_ns_spread":0.05,"pthread_create_join_ns":16000.0,"create_join_speedup_vs_pthread":200.0,"boost_fiber_create_join_ns":400.0,"create_join_speedup_vs_boost_fiber":5.0,"shim_create_join_ns":320.0,"create_join_speedup_vs_shim":4.0,"shim_create_join_bound":1.5,"shim_create_join_met":false,"yield_ns":25.0,"yield_ns_spread":0.1,"boost_fiber_yield_ns":50.0,"yield_speedup_vs_boost_fiber":2.0}
{"experiment":"share","loadavg_1m":2.0,"scenario":"loop","run":"together","processes":2,"adapt":true,"weft_adapt":"unset","throughput_ratio":0.62,"throughput_vs_partitioned":0.99,"min_share":0.49,"active_workers_total":2}
{"experiment":"share","loadavg_1m":2.5,"target":"throughput_ratio","scenario":"loop","adapt":true,"weft_adapt":"unset","processes":2,"value":0.62,"bound":0.95,"bound_kind":"at_least","met":false}
{"experiment":"share","loadavg_1m":2.5,"target":"recovery_s","scenario":"loop","adapt":true,"weft_adapt":"unset","processes":2,"value":0.35,"bound":2,"bound_kind":"at_most","met":true}
{"experiment":"share","loadavg_1m":2.5,"target":"adaptation_matters","scenario":"loop","value":2,"bound":1,"bound_kind":"at_least","met":true}
{"experiment":"msg","target":"pingpong_8B_over_raw_mpi","value":1.84,"bound":2,"met":true,"compare":"at_most"}
{"experiment":"msg","target":"bandwidth_1MiB_over_raw_mpi","value":0.83,"bound":0.9,"met":false,"compare":"at_least"}
{"experiment":"msg","op":"pingpong","transport":"raw_mpi","bytes":8,"latency_ns":466.0}
{"experiment":"msg","op":"pingpong","transport":"mpi","bytes":8,"latency_ns":846.0,"paired_ratio":1.84}
JSONL

python3 "$src/bench/report/results_md.py" "$work/results.jsonl" >"$work/out.md"

python3 - "$work/results.jsonl" "$work/out.md" <<'PY'
import json, re, sys
records = [json.loads(line) for line in open(sys.argv[1])]
out = open(sys.argv[2]).read()
problems = []


def block(name):
    m = re.search(rf"<!-- generated: {name} -->\n(.*?)<!-- end generated -->", out, re.S)
    if not m:
        problems.append(f"no block for {name}")
        return ""
    return m.group(1)


def target_rows(text):
    """The rows of a block's targets table, split into cells."""
    lines = text.split("Targets:", 1)[-1].strip().split("\n\n", 1)[0].splitlines()[2:]
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines]


def number(cell):
    m = re.search(r"-?[0-9][0-9,]*\.?[0-9]*", cell)
    return float(m.group(0).replace(",", "")) if m else None


# Every recorded target row, with its value, bound and verdict, and nothing else.
for e in ("share", "msg"):
    rows = target_rows(block(e))
    want = [r for r in records if r["experiment"] == e and "target" in r]
    if len(rows) != len(want):
        problems.append(f"{e}: {len(rows)} rows in the targets table, want {len(want)} (one per target row)")
    for r in want:
        verdict = "met" if r["met"] else "**missed**"
        hit = [c for c in rows if c[0].startswith(f"`{r['target']}`") and abs(number(c[1]) - r["value"]) < 0.005
               and number(c[2]) == r["bound"] and c[3] == verdict]
        if len(hit) != 1:
            problems.append(f"{e}: target {r['target']} (value {r['value']}, bound {r['bound']}, {verdict}) "
                            f"not in one row of its table: {rows}")

# micro writes no target rows: the bounds of docs/bench.md judged on its record.
rows = {c[0]: c for c in target_rows(block("micro"))}
for name, verdict in [("create + join", "met"), ("create + join: Pthreads / weft", "met"),
                      ("yield (a switch)", "**missed**"), ("create + join: libweft-pthread / weft", "**missed**")]:
    if name not in rows or rows[name][3] != verdict:
        problems.append(f"micro: target '{name}' should be {verdict}: {rows.get(name)}")
micro = block("micro")
if "80.0 ns" not in micro or "16.0 us" not in micro:
    problems.append("micro: create + join should read 80.0 ns against Pthreads' 16.0 us")

# The suite's block, then each experiment's header: command, start (suite date + the experiments before it), CPU, commit, load.
for name, start, load in [("micro", "2026-11-28 05:14 UTC", "1-minute load 1.2"),
                          ("share", "2026-11-28 05:16 UTC", "1-minute load 2.0-2.5"),
                          ("msg", "2026-11-28 05:17 UTC", "1-minute load –")]:
    head = block(name).strip().splitlines()[0] if block(name).strip() else ""
    for part in (f"`weft-bench {name}`", "`weft-bench all`", start, "Test CPU 9000, 2 CPUs",
                 "commit abcdef123456", load):
        if part not in head:
            problems.append(f"{name}: header lacks '{part}': {head}")
run = block("run")
for part in ("`weft-bench all`, 2026-11-28 05:14 UTC", "commit abcdef123456", "3 min 30 s in all",
             "| `micro` | 2 min 00 s |", "| `share` | 1 min 00 s |", "| `msg` | 30.0 s |"):
    if part not in run:
        problems.append(f"run: the block of the suite record lacks '{part}': {run}")
order = re.findall(r"<!-- generated: (\w+) -->", out)
if order[0] != "run" or order[1:] != sorted(order[1:]):
    problems.append(f"blocks not in `weft-bench list` order: {order}")

if problems:
    print("FAIL:\n  " + "\n  ".join(problems))
    sys.exit(1)
print("ok   targets, header and order of the printed blocks")
PY

# --update: only the text between markers changes; a second run changes nothing.
cat >"$work/doc.md" <<'MD'
# Results
Intro stays.
<!-- generated: share -->
stale text
<!-- end generated -->
Against the paper: stays.
<!-- generated: pde -->
pde's old block stays (no pde records)
<!-- end generated -->
MD
python3 "$src/bench/report/results_md.py" "$work/results.jsonl" --update "$work/doc.md" >"$work/upd.out" 2>"$work/upd.err"
cp "$work/doc.md" "$work/doc1.md"
python3 "$src/bench/report/results_md.py" "$work/results.jsonl" --update "$work/doc.md" >/dev/null 2>&1
python3 - "$work/doc1.md" "$work/doc.md" "$work/upd.err" <<'PY'
import sys
first, second, err = (open(p).read() for p in sys.argv[1:])
problems = []
for keep in ("# Results\nIntro stays.\n<!-- generated: share -->\n", "<!-- end generated -->\nAgainst the paper: stays.\n",
             "<!-- generated: pde -->\npde's old block stays (no pde records)\n<!-- end generated -->"):
    if keep not in first:
        problems.append(f"--update changed text outside a rewritten block: {keep!r} is gone")
if "stale text" in first or "`throughput_ratio` (loop, unset, processes=2)" not in first:
    problems.append("--update did not rewrite share's block")
if first != second:
    problems.append("a second --update changed the file")
for name in ("pde", "micro", "msg"):
    if f"'{name}'" not in err:
        problems.append(f"--update said nothing about '{name}' (a block without records or records without a block): {err}")
if problems:
    print("FAIL:\n  " + "\n  ".join(problems))
    sys.exit(1)
print("ok   --update rewrites between the markers only, and is idempotent")
PY

# Bad input: a clear error, not a traceback.
if python3 "$src/bench/report/results_md.py" "$work/none.jsonl" 2>"$work/err"; then
    echo "FAIL: a missing results file was accepted"
    exit 1
fi
grep -q "no such file" "$work/err" || { echo "FAIL: unclear error for a missing file: $(cat "$work/err")"; exit 1; }
echo "ok   a missing file is named"
