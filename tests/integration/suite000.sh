#!/usr/bin/env bash
# weft-bench suite000 (bench/suite000.cpp) at the tests' sizes, one round, 2
# workers, dfs and ws: it must run every program as it is on glibc's threads
# and under libweft-pthread and emit a JSON row per configuration with the
# fields docs/bench.md lists, a measured time in each, weft's statistics (T1,
# T-inf, threads live) in each shim row, and the fine-vs-coarse target rows.
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
out=$("$bench" suite000 --size test --rounds 1 --workers 2 --sched dfs,ws --json)
python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(line) for line in sys.argv[1].splitlines()]
fields = ["app", "version", "threads", "sched", "workers", "time_s", "peak_heap_bytes", "max_live_threads",
          "t1_s", "tinf_s", "program_threads"]
runs = [r for r in rows if "target" not in r]
targets = [r for r in rows if "target" in r]
problems = []
for app in ("fft1d", "spmv", "volrend", "dtree", "barnes", "fmm"):
    mine = [r for r in runs if r["app"] == app]
    # serial, coarse glibc + weft, fine glibc + dfs + ws (+ fftw rows for fft1d)
    if len(mine) < 6:
        problems.append(f"{app}: {len(mine)} rows, want at least 6")
    for r in mine:
        missing = [f for f in fields if f not in r]
        if missing:
            problems.append(f"{app} {r.get('version')}: missing {missing}")
            continue
        if not r["time_s"] > 0:
            problems.append(f"{app} {r['version']} {r['threads']}: time_s {r['time_s']}")
        if r["threads"] == "weft" and not (r["t1_s"] and r["t1_s"] > 0 and r["tinf_s"] and r["max_live_threads"] >= 1):
            problems.append(f"{app} {r['version']} weft {r['sched']}: no weft statistics: {r}")
        if r["version"] == "fine" and r["threads"] == "glibc" and app != "fft1d" and r["max_live_threads"] < 2:
            problems.append(f"{app} fine glibc: {r['max_live_threads']} threads live, want several")
    for s in ("dfs", "ws"):
        if not any(t["target"] == "fine_vs_coarse" and t["app"] == app and t["sched"] == s for t in targets):
            problems.append(f"{app}: no fine_vs_coarse target row for {s}")
if problems:
    print("FAIL:\n  " + "\n  ".join(problems))
    sys.exit(1)
print(f"PASS: {len(runs)} rows, {len(targets)} target rows")
PY
