#!/usr/bin/env python3
"""Print the generated part of docs/results.md from weft-bench JSONL results.

usage: results_md.py RESULTS.jsonl [MORE.jsonl ...] [--update FILE.md]

RESULTS.jsonl is what `weft-bench all --out DIR` writes (DIR/results.jsonl):
a first record {"experiment": "suite", ...} with the date, the commit, the
CPU and each experiment's seconds, then every experiment's records. More
files supply experiments the first does not have (`weft-bench all` does not
run io: `weft-bench io --jsonl io.jsonl`); an experiment is taken whole from
the first file that has it.

When the first file has a suite record, a block `run`: the command, the
date, the machine, the commit, the load and each experiment's time. Then
for each experiment, in the order of `weft-bench list`, one block:
  - a line with the command, the date it started, the CPU model and CPUs,
    the commit and the 1-minute load average over its records, from the
    file's suite record (a file without one says that the date and commit
    are not recorded);
  - its targets as a table (target, value, bound, met): the records' own
    target rows, and for the experiments that write none (micro, matmul,
    filaments, pde, io) the bounds of docs/bench.md applied to their rows
    here, said so under the table;
  - its main figures as one or two compact tables (SPECS below: which
    fields, in what order, with what units); every row is in the JSONL.

--update FILE.md rewrites, in place, the text between each
`<!-- generated: NAME -->` line and the next `<!-- end generated -->` line
of FILE.md with NAME's block, and leaves everything else as it is. An
experiment of the results without markers in FILE.md, or markers without
the experiment in the results, is reported on stderr.

Exit status: 0 done; 1 no usable records, or --update found none of the
results' experiments in FILE.md; 2 usage error.
"""

import datetime
import math
import os
import re
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_report import fmt_num, fmt_seconds, group, is_number, load  # noqa: E402

# `weft-bench list` prints the experiments sorted by name (bench/harness/experiment.cpp, experiments()).
BEGIN = re.compile(r"^<!-- generated: ([a-z0-9_]+) -->\s*$")
END = "<!-- end generated -->"

# ---------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------

DASH = fmt_num(None)  # the dash make_report shows for a missing figure


def sig3(v):
    """v to 3 significant figures, thousands separated (make_report's format
    below 1,000 and above 1); integers as they are."""
    if is_number(v) and isinstance(v, float) and math.isfinite(v) and not isinstance(v, bool):
        if abs(v) >= 1000:
            return f"{float(f'{v:.3g}'):,.0f}"
        if 0 < abs(v) < 1:
            return f"{v:#.3g}"
    return fmt_num(v)


def bound(v):
    """A target's bound as it is given (1.1, 0.9, 100, 4,096), to 3 figures."""
    return f"{int(v):,}" if float(v).is_integer() else f"{v:.3g}"


def ratio(v, suffix=""):
    return DASH if not is_number(v) else sig3(float(v)) + suffix


def times(v):
    """A speedup or slowdown factor: 1.95x."""
    return ratio(v, "x")


def seconds(v):
    """A time in seconds, in the unit that keeps it between 1 and 999."""
    if not is_number(v):
        return DASH
    a = abs(v)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if a >= scale or unit == "ns":
            return f"{sig3(v / scale)} {unit}"
    return DASH


def ns(v):
    return seconds(v * 1e-9) if is_number(v) else DASH


def us(v):
    return seconds(v * 1e-6) if is_number(v) else DASH


def mib(v):
    return f"{sig3(v / 2**20)} MiB" if is_number(v) else DASH


def count(v):
    return f"{int(v):,}" if is_number(v) else DASH


def spread(v):
    if not is_number(v):
        return DASH
    p = 100 * v
    return f"{p:.2g}%" if p < 10 else f"{p:.0f}%"


def plain(v):
    if v is None:
        return DASH
    if isinstance(v, bool):
        return "yes" if v else "no"
    return sig3(v) if is_number(v) else str(v)


def md_table(headers, rows, right=()):
    """A markdown table; columns whose index is in `right` align right."""
    out = ["| " + " | ".join(headers) + " |",
           "|" + "|".join("---:" if i in right else "---" for i in range(len(headers))) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |")
    return "\n".join(out)


# ---------------------------------------------------------------------------
# Targets
# ---------------------------------------------------------------------------

BOUND_SIGN = {"at_most": "≤", "at_least": "≥", "below": "<", "above": ">"}
# Fields that tell one target row from another of the same name, in the order they are named.
TARGET_QUALIFIERS = ("app", "program", "scenario", "mode", "weft_adapt", "processes", "transport", "ranks", "connections")


def target(name, value, bound, met, kind=None, value_text=None, note=""):
    return {"target": name, "value": value, "bound": bound, "met": met, "kind": kind,
            "value_text": value_text, "note": note}


def recorded_targets(recs):
    """The target rows an experiment wrote: {"target": NAME, "value", "bound", "met"}
    (share, asat, msg, shim, suite000), oversub's {"target": true, ...}, and
    knary's and cycler's judged summary."""
    out = []
    for r in recs:
        t = r.get("target")
        if isinstance(t, str):
            quals = [f"{k}={r[k]}" if k in ("processes", "ranks", "connections") else str(r[k])
                     for k in TARGET_QUALIFIERS if k in r and r[k] is not None
                     and not (k == "app" and t.startswith(str(r[k]) + "_"))]  # suite000 names its app
            name = f"`{t}`" + (" (" + ", ".join(quals) + ")" if quals else "")
            why = r.get("reason") or r.get("why") or ("no value" if r.get("value") is None else "")
            out.append(target(name, r.get("value"), r.get("bound"), r.get("met"),
                              r.get("bound_kind") or r.get("compare") or bound_side(r), note=why))
        elif isinstance(r.get("ceiling"), str):  # shim: the most a target can reach on this machine
            out.append(target(f"`{r['ceiling']}`: its ceiling here, glibc / (serial / {r.get('cpus', '?')} CPUs)",
                              r.get("value"), r.get("bound"), None, "at_least",
                              note="reachable" if r.get("reachable") else "out of reach"))
        elif t is True and "target_speed_ratio" in r:  # oversub
            top, base = r.get("workers"), r.get("base_workers")
            out.append(target(f"speed on {top} workers over {base}, yield on", r.get("speed_ratio_yield_on"),
                              r["target_speed_ratio"], r.get("met"), "at_least"))
            if is_number(r.get("speed_ratio_yield_off")):
                out.append(target(f"the same, yield off (not judged)", r["speed_ratio_yield_off"], None, None))
        elif r.get("summary") and r.get("pa") == "paper" and r.get("model") == "abp" and r.get("set") == "held_out":
            out.append(target("held-out sweep's worst relative error, the paper's PA", r.get("worst_rel_err"),
                              r.get("target_worst_rel_err"), r.get("within_target"), "at_most"))
    return out


def bound_side(r):
    """The side of a target row that names none (shim, suite000): the one its
    verdict implies, when the value is not on the bound."""
    v, b, met = r.get("value"), r.get("bound"), r.get("met")
    if not (is_number(v) and is_number(b)) or v == b or not isinstance(met, bool):
        return None
    return "at_most" if (v < b) == met else "at_least"


def judged(name, value, bound, kind, note=""):
    """A target judged here from the rows: met if value is on bound's side."""
    if not is_number(value):
        return target(name, None, bound, None, kind, note=note or "no value")
    met = {"at_most": value <= bound, "at_least": value >= bound, "below": value < bound,
           "above": value > bound}[kind]
    return target(name, value, bound, met, kind, note=note)


def targets_table(rows, derived):
    body = []
    for t in rows:
        v = t["value_text"] or (ratio(t["value"]) if is_number(t["value"]) else DASH)
        b = t.get("bound_text") or (DASH if t["bound"] is None else BOUND_SIGN.get(t["kind"], "") + " " + bound(t["bound"]))
        met = DASH if t["met"] is None else ("met" if t["met"] else "**missed**")
        if t["note"]:
            met += f" ({t['note']})"
        body.append([t["target"], v, b.strip(), met])
    text = md_table(["target", "value", "bound", "met"], body, right=(1, 2))
    if derived:
        text += ("\n\nThis experiment writes no target rows: these are docs/bench.md's targets, "
                 "judged by results_md.py on the rows of this run.")
    return text


# ---------------------------------------------------------------------------
# Per experiment: targets judged here and the tables of main figures
# ---------------------------------------------------------------------------

def one(recs, **match):
    for r in recs:
        if all(r.get(k) == v for k, v in match.items()):
            return r
    return None


def ordered(values, first=()):
    """Distinct values in order of first appearance, `first` ones first."""
    seen = [v for v in first if v in values]
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


# --- micro ---------------------------------------------------------------

MICRO_OPS = [
    # (id, label, peer prefix or figure for the kernel-thread column)
    ("create_join", "create + join", "pthread_"),
    ("yield", "yield (per switch)", "pthread_"),
    ("mutex_handoff", "mutex hand-off", "pthread_"),
    ("cond_pingpong", "condition ping-pong (one way)", "pthread_"),
    ("mutex_contended", "contended mutex, lock + unlock", "pthread_"),
    ("mutex_contended_mixed", "contended mutex, kernel and weft threads", None),
    ("million_threads", "a million threads: per thread", None),
    ("syscall_ready_read", "1-byte read of a ready pipe", "plain_ready_read"),
    ("fil_create", "filament create", None),
    ("fil_sweep_general", "filament run from its descriptor", None),
    ("fil_sweep_dense", "filament of a dense pool", None),
    ("fil_fork_join", "filament fork + join (C)", None),
    ("join_forked", "`weft::join` that forks", None),
    ("join_pruned", "`weft::join` pruned into a call", None),
]


def micro_tables(recs):
    r = recs[-1]
    rows = []
    for op, label, peer in MICRO_OPS:
        if not is_number(r.get(op + "_ns")):
            continue
        kernel = r.get(peer + op + "_ns") if peer and peer.endswith("_") else r.get(f"{peer}_ns") if peer else None
        vs_kernel = (r.get(f"{op}_speedup_vs_pthread") if peer == "pthread_"
                     else r.get("ready_read_speedup_vs_plain") if peer else None)
        rows.append([label, ns(r[op + "_ns"]), spread(r.get(op + "_ns_spread")), ns(kernel),
                     ns(r.get("boost_fiber_" + op + "_ns")), ns(r.get("shim_" + op + "_ns")),
                     times(vs_kernel) if vs_kernel else DASH,
                     times(r.get(f"{op}_speedup_vs_boost_fiber"))])
    head = ["operation", "weft", "spread", "Pthreads (plain `read` for the pipe)", "Boost.Fiber",
            "Pthreads program under libweft-pthread", "kernel / weft", "Boost.Fiber / weft"]
    caption = (f"Nanoseconds per operation, medians of {r.get('rounds', '?')} rounds, one weft worker "
               f"(`{r.get('sched', '?')}`), every peer on the same CPU.")
    return [(caption, md_table(head, rows, right=tuple(range(1, 8))))]


def micro_targets(recs):
    r = recs[-1]
    out = [
        judged("create + join", r.get("create_join_ns"), 100, "at_most", note="ns"),
        judged("create + join: Pthreads / weft", r.get("create_join_speedup_vs_pthread"), 100, "at_least"),
        judged("create + join: Boost.Fiber / weft", r.get("create_join_speedup_vs_boost_fiber"), 1, "above"),
        judged("yield (a switch)", r.get("yield_ns"), 20, "at_most", note="ns"),
        judged("yield: Boost.Fiber / weft", r.get("yield_speedup_vs_boost_fiber"), 1, "above"),
    ]
    if is_number(r.get("create_join_speedup_vs_shim")):  # the shim's pair over weft's own
        out.append(judged("create + join: libweft-pthread / weft", r["create_join_speedup_vs_shim"],
                          r.get("shim_create_join_bound", 1.5), "at_most"))
    out += [
        judged("a million threads: per thread", r.get("million_threads_ns"), 2000, "at_most", note="ns"),
        judged("a million threads: resident bytes per live thread", r.get("million_threads_rss_per_live_bytes"),
               4096, "at_most"),
        judged("ready read: plain / `weft_read`", r.get("ready_read_speedup_vs_plain"), 0.91, "at_least"),
    ]
    for t in out:  # times read better with their unit
        if t["note"] == "ns":
            t["note"] = ""
            t["value_text"] = ns(t["value"])
            t["bound_text"] = f"{BOUND_SIGN[t['kind']]} {ns(t['bound'])}"
    return [t for t in out if t["value"] is not None or t["note"]]


# --- matmul --------------------------------------------------------------

def matmul_label(r):
    if r.get("version") == "weft":
        return f"weft {r.get('variant') or r.get('sched')}"
    return {"serial_copies": "serial x W (the ceiling)", "openmp": "OpenMP tasks", "tbb": "oneTBB"}.get(
        r.get("version"), r.get("version"))


def matmul_tables(recs):
    rows = []
    for r in recs:
        rows.append([matmul_label(r), plain(r.get("workers")), seconds(r.get("time_s")), spread(r.get("time_s_spread")),
                     times(r.get("speedup_vs_serial")), mib(r.get("peak_heap_bytes")), times(r.get("heap_vs_serial")),
                     count(r.get("max_live_threads")), mib(r.get("stack_bytes_peak")), ratio(r.get("parallelism")),
                     count(r.get("steals"))])
    r0 = recs[0]
    caption = (f"n = {r0.get('n', '?')}, leaf {r0.get('leaf', '?')}; time: median over rounds; speedup: the "
               "median of each round's serial run over the configuration's run; heap, threads and stack "
               "mapped at the peak: the worst round; T1/Tinf and steals: the last.")
    head = ["version", "workers", "time", "spread", "speedup", "peak heap", "x serial heap", "most threads live",
            "stack mapped", "T1/Tinf", "steals"]
    return [(caption, md_table(head, rows, right=tuple(range(1, 11))))]


def matmul_targets(recs):
    def at2(sched):
        return one(recs, version="weft", variant=sched, workers=2) or one(recs, version="weft", sched=sched, workers=2)
    dfs, ws, fifo = at2("dfs"), at2("ws"), at2("fifo")
    sp = lambda r: r.get("speedup_vs_serial") if r else None  # noqa: E731
    out = [judged("dfs, 2 workers: peak heap / serial's", dfs and dfs.get("heap_vs_serial"), 1.2, "at_most"),
           judged("dfs, 2 workers: speedup", sp(dfs), 1.8, "at_least"),
           judged("ws, 2 workers: speedup", sp(ws), 1.8, "at_least")]
    if sp(fifo):
        out += [judged("dfs / fifo speed, 2 workers", sp(dfs) / sp(fifo) if sp(dfs) else None, 1, "above"),
                judged("ws / fifo speed, 2 workers", sp(ws) / sp(fifo) if sp(ws) else None, 1, "above")]
    best = max((r for r in recs if r.get("version") == "weft" and r.get("workers") == 2 and sp(r)),
               key=sp, default=None)
    for peer, label in (("openmp", "OpenMP tasks"), ("tbb", "oneTBB")):
        p = one(recs, version=peer, workers=2)
        if best and p and sp(p):
            out.append(judged(f"weft's best ({best.get('variant')}) / {label} speed, 2 workers",
                              sp(best) / sp(p), 1, "at_least"))
    return out


# --- shim ----------------------------------------------------------------

def shim_tables(recs):
    rows = []
    runs = [r for r in recs if "target" not in r and "ceiling" not in r]
    for r in runs:
        g = one(runs, program=r.get("program"), version="glibc")
        rows.append([r.get("program"), r.get("version"), r.get("sched"), seconds(r.get("time_s")),
                     times(g["time_s"] / r["time_s"]) if g and is_number(r.get("time_s")) and r["time_s"] > 0 else DASH,
                     times(r["peak_heap_bytes"] / r["serial_heap_bytes"]) if r.get("serial_heap_bytes") else DASH,
                     mib(r.get("peak_rss_bytes")), count(r.get("max_live_threads"))])
    caption = (f"n = {runs[0].get('n', '?')}; `glibc` is the program on glibc's threads, `shim` the same binary "
               "under libweft-pthread, `native` the program written against weft's API, `serial` the same binary "
               "with plain calls for `pthread_create` on one CPU; glibc / this is the ratio "
               "of the medians (the targets take the median of the rounds' ratios).") if runs else None
    head = ["program", "version", "sched", "time", "glibc / this", "peak heap / serial", "peak RSS",
            "most threads live"]
    return [(caption, md_table(head, rows, right=(3, 4, 5, 6, 7)))]


# --- filaments -----------------------------------------------------------

def filaments_tables(recs):
    apps = ordered([r["app"] for r in recs if "app" in r])
    rows = []
    for app in apps:
        a = [r for r in recs if r.get("app") == app]
        ser = one(a, version="serial")
        c2, f1, f2 = one(a, version="coarse", workers=2), one(a, version="filaments", workers=1), one(
            a, version="filaments", workers=2)
        copies = one(a, version="serial_copies", workers=2)
        peers = [one(a, version=v, workers=2) or one(a, version=alt, workers=2)
                 for v, alt in (("omp", "openmp"), ("tbb", "oneTBB"))]

        def t_and_speedup(r):
            return f"{seconds(r['time_s'])} ({times(r.get('vs_serial'))})" if r else DASH
        rows.append([app, plain((ser or f1 or {}).get("size")), seconds(ser and ser.get("time_s")),
                     t_and_speedup(c2), t_and_speedup(f1), t_and_speedup(f2),
                     ratio(f1 and f1.get("fil_over_serial")), ratio(f2 and f2.get("fil_over_coarse")),
                     times(copies and copies.get("ceiling"))] + [t_and_speedup(p) for p in peers])
    head = ["app", "size", "serial", "coarse, 2 w", "filaments, 1 w", "filaments, 2 w", "fil / serial, 1 w",
            "fil / coarse, 2 w", "ceiling, 2 w", "OpenMP, 2 w", "oneTBB, 2 w"]
    caption = ("Median times, with the speedup over serial (the median of the rounds' ratios) in parentheses; "
               "fil / serial and fil / coarse are medians of the rounds' ratios; the ceiling is what two serial "
               "copies at once reached in the same rounds.")
    return [(caption, md_table(head, rows, right=tuple(range(1, 11))))]


def filaments_targets(recs):
    f1 = [r for r in recs if r.get("version") == "filaments" and r.get("workers") == 1 and "fil_over_serial" in r]
    f2 = [r for r in recs if r.get("version") == "filaments" and r.get("workers") == 2 and "fil_over_coarse" in r]
    out = []
    if f1:
        w = max(f1, key=lambda r: r["fil_over_serial"])
        out.append(judged(f"filaments / serial, 1 worker: the largest of {len(f1)} ({w['app']})",
                          w["fil_over_serial"], 1.03, "at_most"))
    if f2:
        w = max(f2, key=lambda r: r["fil_over_coarse"])
        out.append(judged(f"filaments / coarse-grain, 2 workers: the largest of {len(f2)} ({w['app']})",
                          w["fil_over_coarse"], 1.05, "at_most"))
    fib1 = one(f1, app="fib")
    fib2 = one(f2, app="fib")
    if fib1:
        out.append(judged("fib, a fork at every call: filaments / serial, 1 worker", fib1["fil_over_serial"],
                          1.10, "at_most"))
    if fib2:
        out.append(judged("fib: speedup over serial, 2 workers", fib2.get("vs_serial"), 1.8, "at_least"))
    return out


# --- knary and cycler ----------------------------------------------------

def model_summary_tables(recs):
    rows = []
    for r in recs:
        if not r.get("summary"):
            continue
        worst = f"{r.get('worst_program', '?')} on {r.get('worst_workers', '?')}"
        rows.append([r.get("pa"), r.get("model"), r.get("set"), ratio(r.get("c1")), ratio(r.get("c2")),
                     spread(r.get("worst_rel_err")), spread(r.get("median_rel_err")), worst,
                     plain(r.get("points"))])
    caption = ("The model T = c1 T1/PA + c2 Tinf P/PA (`abp`; `brent`: T = c1 T1/PA + c2 Tinf) fitted on the "
               "`fit` sweep and judged on the held-out sweep and on lu and heat (`apps`); PA is the paper's "
               "(`paper`) or measured as CPU time over wall time (`cpu`). One row per fit and set; every run "
               "of the sweeps is a row of the JSONL.")
    head = ["PA", "model", "set", "c1", "c2", "worst rel. error", "median rel. error", "worst run (program on workers)",
            "runs"]
    return [(caption, md_table(head, rows, right=(3, 4, 5, 6, 8)))]


def cycler_tables(recs):
    tables = model_summary_tables(recs)
    c = one(recs, cycler=True)
    if c:
        text = md_table(["processes started", "mean PA(cycler)", "intervals", "interval", "seed"],
                        [[plain(c.get("processes_started")), ratio(c.get("pa_cycler_mean")), plain(c.get("intervals")),
                          f"{plain(c.get('interval_ms'))} ms", plain(c.get("seed"))]], right=(0, 1, 2, 3, 4))
        tables.append(("The cycler: the competing processes over the run.", text))
    return tables


# --- oversub -------------------------------------------------------------

def oversub_tables(recs):
    runs = [r for r in recs if r.get("target") is None and r.get("version") != "serial"]
    labels = ordered([r.get("label") for r in runs])
    workers = sorted({r.get("workers") for r in runs if is_number(r.get("workers"))})
    rows = []
    for p in workers:
        row = [str(p)]
        for lab in labels:
            r = one(runs, label=lab, workers=p)
            row.append(times(r.get("speedup_vs_serial")) if r else DASH)
        rows.append(row)
    ser = one(recs, version="serial")
    caption = (f"Speed over the serial program (median of the rounds' ratios; serial: "
               f"{seconds(ser and ser.get('wall_s'))}) on P workers (threads) on the machine's "
               f"{plain((ser or {}).get('run_cpus'))} CPUs.")
    return [(caption, md_table(["P"] + labels, rows, right=tuple(range(0, len(labels) + 1))))]


# --- share ---------------------------------------------------------------

def share_tables(recs):
    rows = []
    for r in recs:
        if r.get("run") not in ("together", "partitioned"):
            continue
        kill = None
        if r["run"] == "together":
            kill = next((k for k in recs if k.get("run") == "kill" and not k.get("trace") and all(
                k.get(f) == r.get(f) for f in ("scenario", "weft_adapt", "processes"))), None)
        rec_s = DASH
        if kill:
            n, of = kill.get("recovered_rounds"), kill.get("rounds")
            rec_s = "never" if not n else ratio(kill.get("recovery_s")) + (f" ({n} of {of} rounds)" if n != of else "")
        setting = "partitioned" if r["run"] == "partitioned" else r.get("weft_adapt")
        rows.append([r.get("scenario"), setting, plain(r.get("processes")), ratio(r.get("throughput_ratio")),
                     ratio(r.get("throughput_vs_partitioned")), ratio(r.get("min_share")),
                     plain(r.get("active_workers_total")), ratio(kill and kill.get("survivor_throughput_ratio")),
                     rec_s])
    caption = ("`partitioned`: P processes of one worker each, `WEFT_ADAPT=off` (the machine's ceiling for P); "
               "`unset`: adaptation on (the default); ratios are of throughput against the faster of the round's "
               "two runs alone.")
    head = ["program", "WEFT_ADAPT", "processes", "together / alone", "together / partitioned", "smallest share",
            "active workers in all", "kill 1: survivors / alone", "recovery s"]
    return [(caption, md_table(head, rows, right=(2, 3, 4, 5, 6, 7, 8)))]


# --- asat ----------------------------------------------------------------

def asat_tables(recs):
    rows = []
    for r in recs:
        if r.get("series") or "target" in r or "scenario" not in r:
            continue
        workers = ratio(r.get("active_workers_mean")) if is_number(r.get("active_workers_mean")) else (
            f"{plain(r.get('team_size'))} (team)" if r.get("team_size") is not None else plain(r.get("workers")))
        rows.append([r.get("scenario"), r.get("mode"), seconds(r.get("wall_s")), spread(r.get("wall_s_spread")),
                     seconds(r.get("ideal_wall_s")), ratio(r.get("wall_over_ideal")), ratio(r.get("cpu_over_ideal")),
                     ratio(r.get("wall_over_omp_static")), times(r.get("competitor_slowdown")), workers])
    caption = ("Medians over rounds; the ideal is a one-worker run of the same program in the same round "
               "(`docs/bench.md`, \"asat\").")
    head = ["scenario", "mode", "wall", "spread", "ideal wall", "wall / ideal", "cpu / ideal", "wall / omp_static",
            "competitor slowed", "active workers"]
    return [(caption, md_table(head, rows, right=tuple(range(2, 10))))]


# --- msg -----------------------------------------------------------------

def msg_tables(recs):
    summ = [r for r in recs if "target" not in r and "round" not in r and not r.get("fit") and "latency_ns" in r]
    tables = []
    sizes = ordered([r["bytes"] for r in summ if r.get("op") == "pingpong"])
    if sizes:
        rows = []
        for b in sizes:
            raw, mpi, inp = (one(summ, op="pingpong", transport=t, bytes=b) for t in ("raw_mpi", "mpi", "inproc"))
            rows.append([f"{b:,}", ns(raw and raw["latency_ns"]), ns(mpi and mpi["latency_ns"]),
                         ratio(mpi and mpi.get("paired_ratio")), ns(inp and inp["latency_ns"])])
        tables.append(("Ping-pong, half a round trip (median over rounds; weft / raw: the median of each round's "
                       "ratio).", md_table(["bytes", "raw MPI", "weft over mpi", "weft / raw", "weft over inproc"],
                                           rows, right=(0, 1, 2, 3, 4))))
    rows = []
    for r in summ:
        if r.get("op") == "pingpong":
            continue
        rows.append([f"`{r.get('op')}`", r.get("transport"), plain(r.get("workers")), plain(r.get("bytes")),
                     ns(r.get("latency_ns")), spread(r.get("latency_ns_spread")),
                     ratio(r.get("paired_ratio")) + (f" (of `{r['paired_ratio_to']}`)" if r.get("paired_ratio_to") else "")
                     if r.get("paired_ratio") else DASH])
    if rows:
        tables.append(("Ports, RPC and the name service: ns per round trip, call or lookup.",
                       md_table(["operation", "transport", "workers", "bytes", "median", "spread", "over raw MPI"],
                                rows, right=(2, 3, 4, 5, 6))))
    return tables


# --- pde -----------------------------------------------------------------

PDE_WEFT = ("blocking1", "threads2", "threads4", "handcoded")


def pde_tables(recs):
    tables = []
    for transport in ordered([r.get("transport") for r in recs], first=("inproc", "mpi")):
        if transport == "raw_mpi":
            continue
        sub = [r for r in recs if r.get("transport") == transport and "target" not in r]
        rows = []
        for ranks in ordered([r.get("ranks") for r in sub]):
            for n in ordered([r.get("n") for r in sub if r.get("ranks") == ranks]):
                cell = {v: one(sub, ranks=ranks, n=n, version=v) for v in PDE_WEFT}
                raw = {v: one(recs, transport="raw_mpi", ranks=ranks, n=n, version=v) for v in ("mpi_plain", "handcoded")}
                ratios = [c["time_over_model_overlap"] for c in cell.values() if c and is_number(c.get("time_over_model_overlap"))]
                t2, hc = cell["threads2"], cell["handcoded"]
                row = [plain(ranks), f"{n:,}"] + [seconds(c and c.get("time_s")) for c in cell.values()] + [
                    f"{sig3(min(ratios))}-{sig3(max(ratios))}" if ratios else DASH,
                    ratio(t2["time_s"] / hc["time_s"]) if t2 and hc and hc.get("time_s") else DASH]
                if transport == "mpi":
                    row += [seconds(c and c.get("time_s")) for c in raw.values()]
                rows.append(row)
        head = ["ranks", "n (points per node)"] + list(PDE_WEFT) + ["time / model (overlap)", "threads2 / handcoded"]
        if transport == "mpi":
            head += ["raw MPI: mpi_plain", "raw MPI: handcoded"]
        what = ("in-process nodes with injected latency" if transport == "inproc" else f"weft's {transport} transport")
        tables.append((f"Seconds per sweep (the slowest node's, median over rounds) on {what}.",
                       md_table(head, rows, right=tuple(range(0, len(head))))))
    return tables


def pde_targets(recs):
    out = []
    for transport in ordered([r.get("transport") for r in recs]):
        for ranks in ordered([r.get("ranks") for r in recs if r.get("transport") == transport]):
            vals = [r["time_over_model_overlap"] for r in recs if r.get("transport") == transport
                    and r.get("ranks") == ranks and is_number(r.get("time_over_model_overlap"))]
            if not vals:
                continue
            within = sum(1 for v in vals if 0.8 <= v <= 1.2)
            worst = max(vals, key=lambda v: abs(v - 1))
            t = target(f"{transport}, {ranks} ranks: time / model (overlap) within 20%", None, None,
                       within == len(vals), value_text=f"{within} of {len(vals)} rows (farthest {sig3(worst)})")
            t["bound_text"] = "every row in 0.8-1.2"
            out.append(t)
    return out


# --- suite000 ------------------------------------------------------------

def suite000_tables(recs):
    fig8 = [r for r in recs if r.get("figure") == "8" and "target" not in r]
    w = 2 if any(r.get("workers") == 2 for r in fig8) else max((r.get("workers") or 1 for r in fig8), default=1)
    cols = [("coarse, glibc", dict(version="coarse", threads="glibc")),
            ("coarse, weft ws", dict(version="coarse", threads="weft")),
            ("fine, glibc", dict(version="fine", threads="glibc"))] + [
        (f"fine, weft {s}", dict(version="fine", threads="weft", sched=s)) for s in ("fifo", "lifo", "dfs", "ws")]
    rows = []
    for app in ordered([r["app"] for r in fig8]):
        a = [r for r in fig8 if r["app"] == app]
        ser = one(a, version="serial", threads="glibc")
        row = [app, seconds(ser and ser.get("time_s"))]
        for _, m in cols:
            r = one(a, workers=w, **m)
            row.append(times(r.get("speedup")) if r else DASH)
        dfs = one(a, workers=w, version="fine", threads="weft", sched="dfs")
        sw = one(a, version="serial", threads="weft")
        row.append(times(dfs["peak_heap_bytes"] / sw["peak_heap_bytes"])
                   if dfs and sw and is_number(dfs.get("peak_heap_bytes")) and sw.get("peak_heap_bytes") else DASH)
        rows.append(row)
    head = ["app", "serial (glibc)"] + [c for c, _ in cols] + ["fine dfs heap / serial's"]
    caption = (f"Figure 8: speedup over the serial program on glibc, {w} workers (threads); the sweeps of "
               "Figures 10 and 11 are rows of the JSONL.")
    return [(caption, md_table(head, rows, right=tuple(range(1, len(head)))))]


# --- io ------------------------------------------------------------------

def io_tables(recs):
    def share(v):
        return f"{v:.2f}" if is_number(v) else DASH

    rows = [[r.get("server"), f"{r.get('connections', 0):,}", sig3(r.get("requests_per_s")), us(r.get("p50_us")),
             us(r.get("p99_us")), mib(r.get("rss_bytes")), us(r.get("server_cpu_us_per_request")),
             share(r.get("client_cpu_share"))] for r in recs if "server" in r]
    return [("A server thread per connection; requests of 64 B. Server CPU: the server process's CPU time per "
             "request; client CPU: the client's CPU time over the wall time (near 1: the client set the rate).",
             md_table(["server", "connections", "requests/s", "p50", "p99", "RSS", "server CPU / request",
                       "client CPU"], rows, right=(1, 2, 3, 4, 5, 6, 7)))]


def io_targets(recs):
    r = one(recs, scenario="compute_beside_blocked")
    if not r:
        return []
    return [judged(f"compute-bound thread beside {r.get('blocked_threads', '?')} blocked in `weft_read`: "
                   "speed / alone", r.get("speed_ratio"), 0.90, "at_least")]


# name -> (main tables, targets judged here for experiments that write none)
SPECS = {
    "asat": (asat_tables, None),
    "cycler": (cycler_tables, None),
    "filaments": (filaments_tables, filaments_targets),
    "io": (io_tables, io_targets),
    "knary": (model_summary_tables, None),
    "matmul": (matmul_tables, matmul_targets),
    "micro": (micro_tables, micro_targets),
    "msg": (msg_tables, None),
    "oversub": (oversub_tables, None),
    "pde": (pde_tables, pde_targets),
    "share": (share_tables, None),
    "shim": (shim_tables, None),
    "suite000": (suite000_tables, None),
}


# ---------------------------------------------------------------------------
# Provenance
# ---------------------------------------------------------------------------

def start_time(suite, name):
    """When experiment `name` started: the suite's date plus the seconds of
    the experiments run before it (seconds_per_experiment is in run order)."""
    try:
        t = datetime.datetime.strptime(suite["date"], "%Y-%m-%dT%H:%M:%SZ")
    except (KeyError, TypeError, ValueError):
        return None
    for other, secs in (suite.get("seconds_per_experiment") or {}).items():
        if other == name:
            return t
        if is_number(secs):
            t += datetime.timedelta(seconds=secs)
    return None


def provenance(name, recs, suite, path):
    loads = [r["loadavg_1m"] for r in recs if is_number(r.get("loadavg_1m"))]
    load = DASH if not loads else (f"{min(loads):.1f}" if f"{min(loads):.1f}" == f"{max(loads):.1f}"
                                   else f"{min(loads):.1f}-{max(loads):.1f}")
    first = recs[0]
    cpu = (suite or {}).get("cpu_model") or first.get("cpu_model")
    cpus = (suite or {}).get("cpus") or first.get("cpus")
    parts = []
    if suite:
        kind = suite.get("suite", "?")
        cmd = f"`weft-bench {name}`" + (" (its defaults)" if kind == "all" else f" (its `{kind}` size)")
        start = start_time(suite, name)
        secs = (suite.get("seconds_per_experiment") or {}).get(name)
        when = (start.strftime("%Y-%m-%d %H:%M UTC") if start else suite.get("date", "?")) + (
            f", {secs / 60:.0f} min" if is_number(secs) and secs >= 90 else f", {secs:.0f} s" if is_number(secs) else "")
        parts.append(f"{cmd}, run by `weft-bench {kind}`")
        parts.append(when)
        commit = suite.get("commit") or "unknown"
    else:
        parts.append(f"`weft-bench {name}` (options not recorded in {os.path.basename(path)})")
        parts.append("date not recorded")
        commit = "not recorded"
    parts.append(f"{cpu}, {cpus} CPUs" if cpu and cpus else "CPU not recorded")
    parts.append(f"commit {commit}")
    parts.append(f"1-minute load {load}")
    build = (suite or first).get("build_type")
    if build and build not in ("Release", "RelWithDebInfo"):
        parts.append(f"**a {build} build: not figures of record**")
    return "Run: " + "; ".join(parts) + "."


# ---------------------------------------------------------------------------
# Blocks
# ---------------------------------------------------------------------------

def block(name, recs, suite, path):
    tables_fn, derived_fn = SPECS.get(name, (None, None))
    out = [provenance(name, recs, suite, path), ""]
    # An experiment's own target rows, where its run wrote them, take precedence.
    derived = derived_fn(recs) if derived_fn and not recorded_targets(recs) else []
    tgt = derived or recorded_targets(recs)
    if tgt:
        out += ["Targets:", "", targets_table(tgt, bool(derived)), ""]
    else:
        out += ["This experiment has no targets.", ""]
    if tables_fn:
        for caption, table in tables_fn(recs):
            if caption:
                out += [caption, ""]
            out += [table, ""]
    n = len(recs)
    out.append((f"All {n} records of this experiment are" if n != 1 else "The record of this experiment is")
               + f" in the run's JSONL (`{os.path.basename(path)}`); `docs/bench.md` defines every field.")
    return "\n".join(out)


def run_block(suite, path):
    """The run as a whole: the suite record's command, date, machine, commit,
    load and how long each experiment took."""
    secs = suite.get("seconds_per_experiment") or {}
    rows = [[f"`{name}`", fmt_seconds(v)] for name, v in secs.items() if is_number(v)]
    load = [f"{suite[k]:.1f}" for k in ("loadavg_1m", "loadavg_1m_end") if is_number(suite.get(k))]
    total = suite.get("seconds")
    try:
        date = datetime.datetime.strptime(suite["date"], "%Y-%m-%dT%H:%M:%SZ").strftime("%Y-%m-%d %H:%M UTC")
    except (KeyError, TypeError, ValueError):
        date = suite.get("date", "date not recorded")
    parts = [f"`weft-bench {suite.get('suite', '?')}`, {date}",
             f"commit {suite.get('commit') or 'unknown'}",
             f"{suite.get('cpu_model') or 'CPU not recorded'}, {suite.get('cpus', '?')} CPUs, host "
             f"{suite.get('host', '?')}",
             f"build {suite.get('build_type', '?')}"]
    if load:
        parts.append("1-minute load " + " at the start, ".join(load) + (" at the end" if len(load) > 1 else ""))
    if is_number(total):
        parts.append(f"{fmt_seconds(total)} in all" + (f", {suite['failures']} experiment(s) failed"
                                                       if suite.get("failures") else ""))
    text = "Run: " + "; ".join(parts) + f" (`{os.path.basename(path)}`)."
    if rows:
        text += "\n\n" + md_table(["experiment", "time"], rows, right=(1,))
    return text


def blocks(paths):
    """{name: text} for every experiment of the files, the first file that has it winning."""
    found, problems = {}, []
    for path in paths:
        records, bad = load(path)
        problems += [f"{path}: {p}" for p in bad]
        suites = [r for r in records if r["experiment"] == "suite"]
        for name, recs in group([r for r in records if r["experiment"] != "suite"]).items():
            if name not in found and name != "list":
                found[name] = (recs, suites[-1] if suites else None, path)
    out = {}
    first, _ = load(paths[0])
    suite = [r for r in first if r["experiment"] == "suite"]
    if suite:
        out["run"] = run_block(suite[-1], paths[0])
    for name in sorted(found):  # `weft-bench list`'s order
        recs, suite, path = found[name]
        out[name] = block(name, recs, suite, path)
    return out, problems


def update(md_path, generated):
    with open(md_path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, i, done = [], 0, []
    while i < len(lines):
        m = BEGIN.match(lines[i])
        out.append(lines[i])
        i += 1
        if not m:
            continue
        name = m.group(1)
        j = i
        while j < len(lines) and lines[j].strip() != END:
            j += 1
        if j == len(lines):
            raise SystemExit(f"results_md: {md_path}: `<!-- generated: {name} -->` has no `{END}` after it")
        if name in generated:
            out += generated[name].split("\n")
            done.append(name)
        else:
            print(f"results_md: {md_path}: no records of '{name}' in the results: its block is left as it was",
                  file=sys.stderr)
            out += lines[i:j]
        out.append(lines[j])
        i = j + 1
    for name in generated:
        if name not in done:
            print(f"results_md: {md_path} has no `<!-- generated: {name} -->` block: '{name}' left out",
                  file=sys.stderr)
    with open(md_path, "w", encoding="utf-8") as f:
        f.write("\n".join(out))
    return done


def main(argv):
    args = argv[1:]
    if args and args[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    md = None
    if "--update" in args:
        k = args.index("--update")
        if k + 1 >= len(args):
            print("results_md: --update needs a file (docs/results.md)", file=sys.stderr)
            return 2
        md = args[k + 1]
        del args[k:k + 2]
    if not args or any(a.startswith("-") for a in args):
        print("usage: results_md.py RESULTS.jsonl [MORE.jsonl ...] [--update FILE.md] (--help for more)",
              file=sys.stderr)
        return 2
    for p in args + ([md] if md else []):
        if not os.path.isfile(p):
            print(f"results_md: no such file: {p}", file=sys.stderr)
            return 2
    generated, problems = blocks(args)
    for p in problems:
        print(f"results_md: {p}", file=sys.stderr)
    if not generated:
        print("results_md: no usable records", file=sys.stderr)
        return 1
    if md:
        done = update(md, generated)
        print(f"results_md: rewrote {len(done)} block(s) of {md}: {', '.join(done) or 'none'}")
        return 0 if done else 1
    for name, text in generated.items():
        print(f"<!-- generated: {name} -->\n{text}\n{END}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
