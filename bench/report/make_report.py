#!/usr/bin/env python3
"""Build the weft-bench HTML report from JSONL results.

usage: make_report.py RESULTS.jsonl OUTDIR

Reads one JSON object per line (as `weft-bench EXPERIMENT --json` prints them,
and as `weft-bench demo` collects them in out/results.jsonl) and writes
OUTDIR/index.html, a self-contained page (inline CSS, no scripts, no network)
with the PNG plots next to it.

The page opens with where, when and from what the figures come: the machine
(CPU model, CPUs), the date and the commit. `weft-bench demo` and `weft-bench
all` write them in a first record {"experiment": "suite", ...}; for a file
without one, the script takes the CPU model from the records' "cpu_model"
field, and the date, the commit (of the repository the script is in) and
anything still missing from the machine it runs on, and says so.

The page has one section per experiment name, in the order the experiments
first appear in the file:
  - a table of the figures measured over rounds: every key K that has a
    K_spread beside it (the harness's add_summary convention: K, K_spread,
    K_min, K_max, and K_ops when the experiment gives it);
  - a table of every other field, or, when the experiment wrote several lines
    (one per configuration), one wide table with a row per line;
  - the experiment's plots, if a plot function is registered for its name.

Adding plots for an experiment: write a function
    def plot_NAME(records, outdir, plt) -> list of (png_file_name, caption)
that saves its PNGs into outdir, and register it under the experiment's name,
either here with @plot("NAME"), or in a new file bench/report/plots_NAME.py
beside this one, which is imported automatically and registers with
    from make_report import plot
    @plot("NAME")
    def plot_NAME(records, outdir, plt): ...
`records` is the list of JSON objects of that experiment, in file order; `plt`
is matplotlib.pyplot with the Agg backend. The tables need nothing: they are
generic.

Exit status: 0 report complete; 1 no usable records; 2 usage error; 3 the page
was written without plots because matplotlib is missing (install
python3-matplotlib).
"""

import datetime
import glob
import html
import importlib.util
import json
import math
import os
import platform
import subprocess
import sys

PLOTS = {}


def plot(name):
    """Decorator: registers a plot function for experiment `name`."""

    def register(fn):
        PLOTS[name] = fn
        return fn

    return register


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------


def load(path):
    """Returns (records, problems): the JSON objects of the file, and a list of
    human-readable problems with the lines that could not be used."""
    records, problems = [], []
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                problems.append(f"line {n}: not JSON ({e.msg})")
                continue
            if not isinstance(obj, dict) or not isinstance(obj.get("experiment"), str):
                problems.append(f'line {n}: not an object with an "experiment" name')
                continue
            records.append(obj)
    return records, problems


def group(records):
    groups = {}
    for r in records:
        groups.setdefault(r["experiment"], []).append(r)
    return groups


# ---------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------

SUMMARY_SUFFIXES = ("_spread", "_min", "_max", "_ops")


def summary_keys(record):
    """Keys K measured over rounds: those with a K_spread beside them."""
    return [k for k in record if k + "_spread" in record and isinstance(record[k], (int, float))]


def ops_key(record, k):
    """The operations-per-round field of figure k: K_ops, or BASE_ops when K is
    BASE plus a unit suffix (micro's create_join_ns -> create_join_ops)."""
    for cand in (k + "_ops", k.rsplit("_", 1)[0] + "_ops" if "_" in k else None):
        if cand and cand in record:
            return cand
    return None


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def fmt_num(v):
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if not math.isfinite(v):
        return "–"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    if a == 0:
        return "0"
    return f"{v:.3g}"


LIST_CELL_MAX = 8  # a longer list (a time series: asat's t_s) shows as its length, first and last items


def fmt_value(key, v):
    if isinstance(v, list):
        if len(v) > LIST_CELL_MAX:
            return f"{len(v)} values: {fmt_value(key, v[0])} … {fmt_value(key, v[-1])}"
        return ", ".join(fmt_value(key, x) for x in v)
    if isinstance(v, dict):
        return json.dumps(v)
    if is_number(v) or isinstance(v, bool) or v is None:
        if key.endswith("_spread") and is_number(v):
            return f"{100 * v:.1f}%"
        if "speedup" in key and is_number(v):
            return fmt_num(v) + "×"
        return fmt_num(v)
    return str(v)


def esc(s):
    return html.escape(str(s), quote=True)


def html_table(headers, rows, numeric_cols=()):
    out = ["<table><thead><tr>"]
    for i, h in enumerate(headers):
        cls = ' class="num"' if i in numeric_cols else ""
        out.append(f"<th{cls}>{esc(h)}</th>")
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>")
        for i, cell in enumerate(row):
            cls = ' class="num"' if i in numeric_cols else ""
            out.append(f"<td{cls}>{esc(cell)}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def figures_table(record):
    keys = summary_keys(record)
    if not keys:
        return ""
    rows = []
    for k in keys:
        rows.append(
            [
                k,
                fmt_num(record[k]),
                fmt_value(k + "_spread", record.get(k + "_spread")),
                fmt_num(record.get(k + "_min")),
                fmt_num(record.get(k + "_max")),
                fmt_num(record[ops_key(record, k)]) if ops_key(record, k) else "",
            ]
        )
    return (
        "<h3>Figures measured over rounds</h3>"
        + html_table(["figure", "median", "spread (p90−p10)/median", "min", "max", "ops per round"], rows, (1, 2, 3, 4, 5))
    )


def other_fields(record):
    """Every field that is neither the experiment name nor part of a summary."""
    skip = {"experiment"}
    for k in summary_keys(record):
        skip.add(k)
        skip.update(k + s for s in SUMMARY_SUFFIXES)
        if ops_key(record, k):
            skip.add(ops_key(record, k))
    return [k for k in record if k not in skip]


def single_record_tables(record):
    parts = [figures_table(record)]
    keys = other_fields(record)
    if keys:
        rows = [[k, fmt_value(k, record[k])] for k in keys]
        parts.append("<h3>All other fields</h3>" + html_table(["field", "value"], rows, (1,)))
    return "".join(parts)


def multi_record_table(records):
    """One row per record; a summarised figure K shows as 'median ±spread'."""
    columns = []
    for r in records:
        sk = set(summary_keys(r))
        folded = {ops_key(r, k) for k in sk} - {None}
        for k in r:
            if k == "experiment" or k in folded or any(k.endswith(s) and k[: -len(s)] in sk for s in SUMMARY_SUFFIXES):
                continue
            if k not in columns:
                columns.append(k)
    rows = []
    for r in records:
        row = []
        for k in columns:
            if k not in r:
                row.append("")
            elif k + "_spread" in r and is_number(r[k]):
                row.append(f"{fmt_num(r[k])} ±{100 * r[k + '_spread']:.1f}%")
            else:
                row.append(fmt_value(k, r[k]))
        rows.append(row)
    numeric = tuple(i for i, k in enumerate(columns) if any(is_number(r.get(k)) for r in records))
    return '<div class="wide">' + html_table(columns, rows, numeric) + "</div>"


# ---------------------------------------------------------------------------
# Plots
# ---------------------------------------------------------------------------

FAMILY_STYLE = [
    # (JSON prefix, label, colour)
    ("", "weft", "#1b6ca8"),
    ("pthread_", "Pthreads", "#c0392b"),
    ("boost_fiber_", "Boost.Fiber", "#7f8c8d"),
    ("shim_", "Pthreads program under libweft-pthread", "#27ae60"),
]
MICRO_KINDS = [
    ("create_join", "create + join"),
    ("yield", "yield\n(per switch)"),
    ("mutex_handoff", "mutex\nhand-off"),
    ("cond_pingpong", "cond. var.\nping-pong (one way)"),
]


@plot("micro")
def plot_micro(records, outdir, plt):
    r = records[-1]
    families = [(p, label, c) for p, label, c in FAMILY_STYLE if any(p + k + "_ns" in r for k, _ in MICRO_KINDS)]
    kinds = [(k, label) for k, label in MICRO_KINDS if any(p + k + "_ns" in r for p, _, _ in families)]
    if not families or not kinds:
        return []
    out = []

    fig, ax = plt.subplots(figsize=(9, 5.2), dpi=110)
    width = 0.8 / len(families)
    for fi, (prefix, label, colour) in enumerate(families):
        xs, ys, lo, hi = [], [], [], []
        for ki, (kind, _) in enumerate(kinds):
            key = prefix + kind + "_ns"
            if key not in r or not is_number(r[key]) or r[key] <= 0:
                continue
            v = r[key]
            xs.append(ki + (fi - (len(families) - 1) / 2) * width)
            ys.append(v)
            lo.append(max(0.0, v - r.get(key + "_min", v)))
            hi.append(max(0.0, r.get(key + "_max", v) - v))
        bars = ax.bar(xs, ys, width * 0.95, label=label, color=colour, yerr=[lo, hi], capsize=3,
                      error_kw={"elinewidth": 0.8, "ecolor": "#333333"})
        for b, v, h in zip(bars, ys, hi):
            ax.annotate(fmt_num(v), (b.get_x() + b.get_width() / 2, v + h), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom", fontsize=8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(kinds)))
    ax.set_xticklabels([label for _, label in kinds])
    ax.set_ylabel("ns per operation (log scale)")
    ax.set_title(
        f"micro: ns per operation, lower is better\n"
        f"median of {r.get('rounds', '?')} rounds, whiskers min–max; everything on one CPU",
        fontsize=11,
    )
    ymin, ymax = ax.get_ylim()
    ax.set_ylim(ymin, ymax * 3)  # room for the labels
    ax.grid(axis="y", which="major", alpha=0.3)
    ax.legend(loc="upper right", frameon=False)
    fig.tight_layout()
    name = "micro_ns_per_op.png"
    fig.savefig(os.path.join(outdir, name))
    plt.close(fig)
    out.append((name, "ns per operation for weft, Pthreads and Boost.Fiber (log scale)."))

    # weft's speedup over each peer, in the same run.
    peers = [(p, label, c) for p, label, c in families if p]
    if peers:
        fig, ax = plt.subplots(figsize=(9, 4.2), dpi=110)
        width = 0.8 / len(peers)
        for pi, (prefix, label, colour) in enumerate(peers):
            fam = prefix[:-1]
            xs, ys = [], []
            for ki, (kind, _) in enumerate(kinds):
                key = f"{kind}_speedup_vs_{fam}"
                if is_number(r.get(key)) and r[key] > 0:
                    xs.append(ki + (pi - (len(peers) - 1) / 2) * width)
                    ys.append(r[key])
            # Bars grow from 1 (parity): up when weft is faster, down when slower.
            bars = ax.bar(xs, [v - 1 for v in ys], width * 0.95, bottom=1, label=f"vs {label}", color=colour)
            for b, v in zip(bars, ys):
                up = v >= 1
                ax.annotate(fmt_num(v) + "×", (b.get_x() + b.get_width() / 2, v), xytext=(0, 2 if up else -2),
                            textcoords="offset points", ha="center", va="bottom" if up else "top", fontsize=8)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xticks(range(len(kinds)))
        ax.set_xticklabels([label for _, label in kinds])
        ax.set_ylabel("peer time / weft time (log scale)")
        ax.set_title("micro: weft's speedup over each peer (above 1: weft is faster)", fontsize=11)
        lo = min([0.5] + [v for v in ax.get_ylim() if v > 0])
        hi = max(2.0, ax.get_ylim()[1])
        ax.set_ylim(lo / 2, hi * 3)
        ax.grid(axis="y", which="major", alpha=0.3)
        ax.legend(loc="upper right", frameon=False)
        fig.tight_layout()
        name = "micro_speedup.png"
        fig.savefig(os.path.join(outdir, name))
        plt.close(fig)
        out.append((name, "weft's speedup over each peer, ratios of medians from the same run."))
    return out


def load_plugin_plots():
    """Imports bench/report/plots_*.py and merges their PLOTS dicts."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.modules.setdefault("make_report", sys.modules[__name__])
    sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
    for path in sorted(glob.glob(os.path.join(here, "plots_*.py"))):
        name = os.path.splitext(os.path.basename(path))[0]
        try:
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            PLOTS.update(getattr(mod, "PLOTS", {}))
        except Exception as e:  # a broken plugin must not cost the whole report
            print(f"make_report: skipping {path}: {e}", file=sys.stderr)


# ---------------------------------------------------------------------------
# Provenance: machine, date, commit
# ---------------------------------------------------------------------------


def local_cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name") and ":" in line:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def local_commit():
    """The commit of the repository this script is in ('' if unknown)."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        commit = subprocess.run(["git", "-C", here, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
        if commit:
            dirty = subprocess.run(["git", "-C", here, "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True, timeout=10).stdout.strip()
            return commit + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return ""


def fmt_seconds(s):
    return f"{s:.1f} s" if s < 60 else f"{int(s) // 60} min {int(s) % 60:02d} s"


def provenance_html(suite, records):
    """The page's opening lines: from the suite record when there is one,
    else from the records and the machine the script runs on (said so)."""
    if suite:
        cpu = suite.get("cpu_model") or "unknown CPU"
        cpus = suite.get("cpus", "?")
        parts = [
            f"Made by <code>weft-bench {esc(suite.get('suite', '?'))}</code> on {esc(suite.get('date', '?'))}",
            f"commit {esc(suite.get('commit') or 'unknown')}",
            f"{esc(cpu)}, {esc(cpus)} CPUs, host {esc(suite.get('host', '?'))}",
            f"build {esc(suite.get('build_type', '?'))}",
        ]
        load = []
        if is_number(suite.get("loadavg_1m")):
            load.append(f"{suite['loadavg_1m']:.1f} at the start")
        if is_number(suite.get("loadavg_1m_end")):
            load.append(f"{suite['loadavg_1m_end']:.1f} at the end")
        if load:
            parts.append("1-minute load average " + ", ".join(load))
        if is_number(suite.get("seconds")):
            per = suite.get("seconds_per_experiment") or {}
            detail = ", ".join(f"{esc(k)} {fmt_seconds(v)}" for k, v in per.items() if is_number(v))
            parts.append(f"the runs took {fmt_seconds(suite['seconds'])}" + (f" ({detail})" if detail else ""))
        return '<p class="meta">' + " · ".join(parts) + "</p>"
    models = sorted({r["cpu_model"] for r in records if isinstance(r.get("cpu_model"), str) and r["cpu_model"]})
    cpus = sorted({r["cpus"] for r in records if is_number(r.get("cpus"))})
    cpu = ", ".join(models) if models else local_cpu_model() + " (this machine's: the results do not name theirs)"
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    commit = local_commit() or "unknown"
    parts = [
        f"{esc(cpu)}, {esc(', '.join(map(str, cpus)) if cpus else os.cpu_count())} CPUs",
        f"report made on {esc(when)} at commit {esc(commit)} (the results carry no suite record: "
        "the date and commit are the report's, not necessarily the measurements')",
    ]
    return '<p class="meta">' + " · ".join(parts) + "</p>"


# ---------------------------------------------------------------------------
# The page
# ---------------------------------------------------------------------------

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto;
       max-width: 1100px; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 2px solid #1b6ca8; padding-bottom: 0.2em; margin-top: 2em; }
h3 { margin-bottom: 0.4em; color: #444; }
.meta, .note { color: #666; font-size: 0.9em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.88em; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #ddd; text-align: left; white-space: nowrap; }
th { background: #f3f6f9; } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr:hover td { background: #fafafa; }
.wide { overflow-x: auto; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
.problems { background: #fff4e5; border-left: 4px solid #e67e22; padding: 0.5em 1em; }
"""


def build(results_path, outdir):
    records, problems = load(results_path)
    os.makedirs(outdir, exist_ok=True)

    plt = None
    plot_problem = None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: F811
    except ImportError:
        plot_problem = "matplotlib is not installed (Debian: apt-get install python3-matplotlib): no plots."
        print(f"make_report: {plot_problem}", file=sys.stderr)
    load_plugin_plots()

    suites = [r for r in records if r["experiment"] == "suite"]
    records = [r for r in records if r["experiment"] != "suite"]
    groups = group(records)
    body = []
    for name, recs in groups.items():
        body.append(f'<h2 id="{esc(name)}">{esc(name)}</h2>')
        body.append(f'<p class="note">{len(recs)} result line{"s" if len(recs) != 1 else ""}.</p>')
        if plt is not None and name in PLOTS:
            try:
                for png, caption in PLOTS[name](recs, outdir, plt):
                    body.append(f'<figure><img src="{esc(png)}" alt="{esc(caption)}">'
                                f"<figcaption>{esc(caption)}</figcaption></figure>")
            except Exception as e:
                msg = f"plot for {name} failed: {type(e).__name__}: {e}"
                problems.append(msg)
                print(f"make_report: {msg}", file=sys.stderr)
        if len(recs) == 1:
            body.append(single_record_tables(recs[0]))
            for w in recs[0].get("warnings", []) or []:
                problems.append(f"{name}: {w}")
        else:
            body.append(multi_record_table(recs))

    toc = " · ".join(f'<a href="#{esc(n)}">{esc(n)}</a>' for n in groups)
    head = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>weft-bench report</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>weft-bench report</h1>",
        provenance_html(suites[-1] if suites else None, records),
        f'<p class="meta">from {esc(os.path.abspath(results_path))}</p>',
        '<p class="note">Figures are medians over repeated rounds; spread = (p90 − p10) / median. '
        "Each figure is defined in docs/bench.md.</p>",
    ]
    if toc:
        head.append(f"<p>Experiments: {toc}</p>")
    if plot_problem:
        problems.insert(0, plot_problem)
    if problems:
        head.append('<div class="problems"><b>Problems</b><ul>'
                    + "".join(f"<li>{esc(p)}</li>" for p in problems) + "</ul></div>")
    if not records:
        body.append("<p>No results.</p>")
    page = "\n".join(head + body + ["</body></html>", ""])
    index = os.path.join(outdir, "index.html")
    with open(index, "w", encoding="utf-8") as f:
        f.write(page)
    print(f"make_report: wrote {index}")
    if not records:
        return 1
    return 3 if plt is None else 0


def main(argv):
    if len(argv) == 2 and argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    if len(argv) != 3:
        print("usage: make_report.py RESULTS.jsonl OUTDIR (--help for more)", file=sys.stderr)
        return 2
    if not os.path.isfile(argv[1]):
        print(f"make_report: no such results file: {argv[1]}", file=sys.stderr)
        return 2
    return build(argv[1], argv[2])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
