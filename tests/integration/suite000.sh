#!/usr/bin/env bash
# weft-bench suite000 (bench/suite000.cpp) at the tests' sizes, one round, 2
# workers, dfs and ws, and short sweeps: it must run every program as it is on
# glibc's threads and under libweft-pthread and emit the rows docs/bench.md
# lists: Figure 8's per program (serial on glibc and under the shim, coarse on
# both, fine on glibc and under each scheduler), Figure 10's FFT sweep (p
# threads against 256 leaves under fifo and dfs, oversubscribed past the
# CPUs), Figure 11's volume rendering sweep (fifo and dfs per tiles per
# thread), each with its fields, a measured time, and weft's statistics in
# each shim row; and the target rows, {"target","value","bound","met"}, with
# met consistent with value and bound and a reason where the value is null.
#
# Environment (tests/CMakeLists.txt sets it): WEFT_BIN_DIR.
# Skipped (exit 77) where the build has no weft-bench or no suite000 (sanitizer
# builds build no benchmarks; suite000 needs apps/ and libweft-pthread).
set -euo pipefail
bench="${WEFT_BIN_DIR:?}/weft-bench"
if [ ! -x "$bench" ] || ! "$bench" list | grep -q '^suite000 '; then
    echo "skipped: this build has no weft-bench suite000"
    exit 77
fi
out=$("$bench" suite000 --size test --rounds 1 --workers 2 --sched dfs,ws --sweep-workers 1,3 --sweep-tiles 1,16 --json)
python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(line) for line in sys.argv[1].splitlines()]
fields = ["app", "figure", "version", "threads", "sched", "workers", "time_s", "speedup", "peak_heap_bytes",
          "stack_bytes_peak", "max_live_threads", "t1_s", "tinf_s", "program_threads", "oversubscribed", "cpus"]
params = {"fft1d": ["log2n", "leaf"], "spmv": ["rows", "products"], "volrend": ["volume", "image", "frames"],
          "dtree": ["instances", "min_node"], "barnes": ["bodies", "steps"], "fmm": ["particles", "levels", "terms"]}
runs = [r for r in rows if "target" not in r]
targets = {t["target"]: t for t in rows if "target" in t}
problems = []


def has(app, figure, version, threads, sched=None, workers=2, **more):
    return any(r.get("app") == app and r.get("figure") == figure and r.get("version") == version
               and r.get("threads") == threads and r.get("sched") == sched and r.get("workers") == workers
               and all(r.get(k) == v for k, v in more.items())
               for r in runs)


for r in runs:
    missing = [f for f in fields + params.get(r.get("app"), []) if f not in r]
    if missing:
        problems.append(f"{r.get('app')} {r.get('version')}: missing {missing}")
        continue
    what = f"{r['app']} fig{r['figure']} {r['version']} {r['threads']} {r['sched']} w{r['workers']}"
    if not r["time_s"] > 0:
        problems.append(f"{what}: time_s {r['time_s']}")
    if r["threads"] == "weft":
        if not (r["t1_s"] and r["t1_s"] > 0 and r["tinf_s"] and r["max_live_threads"] >= 1
                and r["stack_bytes_peak"] and r["stack_bytes_peak"] > 0):
            problems.append(f"{what}: no weft statistics: {r}")
        if r["oversubscribed"] != (r["workers"] > r["cpus"]):
            problems.append(f"{what}: oversubscribed {r['oversubscribed']} with {r['cpus']} CPUs")
    elif r["peak_heap_bytes"] is not None or r["t1_s"] is not None:
        problems.append(f"{what}: weft's figures on glibc's threads: {r}")
    if r["peak_heap_bytes"] is not None and not r["peak_heap_bytes"] > 0:
        problems.append(f"{what}: peak_heap_bytes {r['peak_heap_bytes']}")
    if (r["version"] == "fine" and r["threads"] == "glibc" and r["app"] not in ("fft1d", "volrend")
            and r["max_live_threads"] < 2):
        problems.append(f"{what}: {r['max_live_threads']} threads live, want several")

for app in params:
    want = [("serial", "glibc", None, 1), ("serial", "weft", "dfs", 1), ("coarse", "glibc", None, 2),
            ("coarse", "weft", "ws", 2), ("fine", "glibc", None, 2), ("fine", "weft", "dfs", 2),
            ("fine", "weft", "ws", 2)]
    for version, threads, sched, workers in want:
        if not has(app, "8", version, threads, sched, workers):
            problems.append(f"{app}: no Figure 8 row {version} {threads} {sched} w{workers}")
    for s in ("dfs", "ws"):
        for name in (f"{app}_fine_{s}_w2_over_coarse", f"{app}_fine_{s}_w2_over_fine_glibc"):
            if name not in targets:
                problems.append(f"no target row {name}")
for w in (1, 3):
    for version, sched in (("coarse", "ws"), ("fine", "fifo"), ("fine", "dfs")):
        if not has("fft1d", "10", version, "weft", sched, w):
            problems.append(f"fft1d: no Figure 10 row {version} {sched} w{w}")
for g in (1, 16):
    for sched in ("fifo", "dfs"):
        if not has("volrend", "11", "fine", "weft", sched, 2, tiles_per_thread=g):
            problems.append(f"volrend: no Figure 11 row {sched} tiles_per_thread {g}")
if any(r.get("figure") in ("10", "11") and r.get("app") not in ("fft1d", "volrend") for r in runs):
    problems.append("sweep rows for programs other than fft1d (10) and volrend (11)")

for app in ("fmm", "dtree"):
    if f"{app}_fine_dfs_w2_heap_over_serial" not in targets:
        problems.append(f"no target row {app}_fine_dfs_w2_heap_over_serial")
for name, t in targets.items():
    if t.get("experiment") != "suite000" or not all(k in t for k in ("value", "bound", "met")):
        problems.append(f"{name}: not a target row: {t}")
    elif t["value"] is None:
        if t["met"] or not t.get("why"):
            problems.append(f"{name}: null value must be not met, with a why: {t}")
    elif t["met"] != (t["value"] < t["bound"] if name.endswith("_over_fine_glibc") else t["value"] <= t["bound"]):
        problems.append(f"{name}: met {t['met']} with value {t['value']} and bound {t['bound']}")
if problems:
    print("FAIL:\n  " + "\n  ".join(problems))
    sys.exit(1)
print(f"PASS: {len(runs)} rows, {len(targets)} target rows")
PY
