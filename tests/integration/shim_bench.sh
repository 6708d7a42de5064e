#!/usr/bin/env bash
# weft-bench shim (bench/shim.cpp) under dfs with one worker, where the order
# is the serial program's: the shim row's memory figures must be weft's, as
# the native row's are, and show what Narlikar & Blelloch's scheduler promises.
#  - max_live_threads is weft's "most threads live" (created, not yet ended):
#    at most the native row's plus the shim run's root thread of dcmm.c and
#    main; depth-first, it is about the recursion's depth, not its width.
#  - peak_heap_bytes is the shim's malloc high-water mark ("heap bytes
#    (malloc)"), so it holds A, B and C (3 n^2 doubles), and serial_heap_bytes
#    is the serial program's under the shim, counted the same way: dfs keeps
#    the ratio within 1.2.
#  - the serial row (the same binary with plain calls, no shim) and the
#    ceiling of the glibc / shim ws target: glibc's time over the serial
#    time divided among the run's CPUs (one round: that round's ratio).
# Counts, not timings. Environment (tests/CMakeLists.txt sets it):
# WEFT_BIN_DIR. Skipped (exit 77) where the build has no weft-bench shim
# (sanitizer builds build no benchmarks).
set -euo pipefail
bench="${WEFT_BIN_DIR:?}/weft-bench"
if [ ! -x "$bench" ] || ! "$bench" list | grep -q '^shim '; then
    echo "skipped: this build has no weft-bench shim"
    exit 77
fi
out=$("$bench" shim --n 256 --leaf 32 --workers 1 --sched dfs,ws --rounds 1 --json)
python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(line) for line in sys.argv[1].splitlines()]
n = 256
def row(version, sched):
    found = [r for r in rows if r.get("program") == "dcmm" and r.get("version") == version and r.get("sched") == sched]
    if len(found) != 1:
        print(f"FAIL: {len(found)} dcmm {version} {sched} rows in:\n{sys.argv[1]}")
        sys.exit(1)
    return found[0]
shim, native = row("shim", "dfs"), row("native", "dfs")
problems = []
if not 1 <= shim["max_live_threads"] <= native["max_live_threads"] + 2:
    problems.append(f"shim dfs: {shim['max_live_threads']} threads live at most, native dfs "
                    f"{native['max_live_threads']} (at most 2 more: dcmm.c's root thread and main)")
if shim["peak_heap_bytes"] < 3 * n * n * 8:
    problems.append(f"shim dfs: peak heap {shim['peak_heap_bytes']} bytes, less than A, B and C "
                    f"({3 * n * n * 8}): not the shim's malloc count")
if not shim["serial_heap_bytes"] >= 3 * n * n * 8:
    problems.append(f"shim dfs: serial heap {shim['serial_heap_bytes']} bytes: not the serial run's malloc count")
elif shim["peak_heap_bytes"] > 1.2 * shim["serial_heap_bytes"]:
    problems.append(f"shim dfs: peak heap {shim['peak_heap_bytes']} bytes, more than 1.2 x the serial program's "
                    f"{shim['serial_heap_bytes']}")
target = [r for r in rows if r.get("target") == "dcmm_shim_dfs_heap_over_serial"]
if len(target) != 1 or abs(target[0]["value"] - shim["peak_heap_bytes"] / shim["serial_heap_bytes"]) > 1e-3:
    problems.append(f"target dcmm_shim_dfs_heap_over_serial is not the row's ratio: {target}")
serial = [r for r in rows if r.get("program") == "dcmm" and r.get("version") == "serial"]
ceiling = [r for r in rows if r.get("ceiling") == "dcmm_glibc_time_over_shim_ws"]
if len(serial) != 1 or not serial[0]["time_s"] > 0:
    problems.append(f"not one dcmm serial row with a time: {serial}")
elif len(ceiling) != 1:
    problems.append(f"not one ceiling row for dcmm_glibc_time_over_shim_ws: {ceiling}")
else:
    c, g = ceiling[0], row("glibc", "kernel")
    want = g["time_s"] / (serial[0]["time_s"] / c["cpus"])
    if c["cpus"] != 1 or abs(c["value"] - want) > 1e-3 * want or c["reachable"] != (c["value"] >= c["bound"]):
        problems.append(f"ceiling row {c}: expected 1 CPU, value glibc / (serial / CPUs) = {want:.4f}, "
                        f"reachable = value >= bound")
if problems:
    print("FAIL:\n  " + "\n  ".join(problems))
    sys.exit(1)
print(f"PASS: shim dfs {shim['max_live_threads']} threads live (native {native['max_live_threads']}), heap "
      f"{shim['peak_heap_bytes'] / shim['serial_heap_bytes']:.3f} x serial")
PY
