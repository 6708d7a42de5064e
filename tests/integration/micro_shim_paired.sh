#!/usr/bin/env bash
# weft-bench micro's create_join_speedup_vs_shim is a paired ratio
# (docs/bench.md): one ratio per round of the two operations run back to back,
# the figure their median, with _spread, _min, _max and _rounds beside it, and
# shim_create_join_met judged on that median. Counts and consistency, not
# timings. Environment (tests/CMakeLists.txt sets it): WEFT_BIN_DIR. Skipped
# (exit 77) where the build has no shim_create_join (sanitizer builds).
set -euo pipefail
bench="${WEFT_BIN_DIR:?}/weft-bench"
if [ ! -x "$bench" ] || ! "$bench" micro --list-ops | grep -q '^shim_create_join '; then
    echo "skipped: this build has no weft-bench micro shim_create_join"
    exit 77
fi
rounds=3
out=$("$bench" micro --only create_join,shim_create_join --rounds $rounds --iters 2000 --warmup 100 --json)
python3 - "$out" "$rounds" <<'PY'
import json, sys
r = json.loads(sys.argv[1].splitlines()[-1])
rounds = int(sys.argv[2])
key = "create_join_speedup_vs_shim"
problems = []
for k in (key, key + "_spread", key + "_min", key + "_max", key + "_rounds", "shim_create_join_met"):
    if k not in r:
        problems.append(f"no {k}")
if not problems:
    if r[key + "_rounds"] != rounds:
        problems.append(f"{key}_rounds is {r[key + '_rounds']}, expected one ratio per round ({rounds})")
    if not 0 < r[key + "_min"] <= r[key] <= r[key + "_max"]:
        problems.append(f"the median {r[key]} is not within min {r[key + '_min']} and max {r[key + '_max']}")
    if r["shim_create_join_met"] != (r[key] <= r["shim_create_join_bound"]):
        problems.append(f"shim_create_join_met {r['shim_create_join_met']} does not judge the median {r[key]}")
if problems:
    print("FAIL:\n  " + "\n  ".join(problems) + "\nin: " + sys.argv[1])
    sys.exit(1)
print(f"PASS: {key} {r[key]:.3f} over {rounds} paired rounds (min {r[key + '_min']:.3f}, max {r[key + '_max']:.3f})")
PY
