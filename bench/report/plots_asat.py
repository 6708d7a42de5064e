"""Plots of weft-bench asat: Severance & Enbody's "Automatic Self-Allocating Threads (ASAT) on an SGI
Challenge". Their Figures 2 and 5 as CPU and wall time per mode and scenario against the ideal wall time;
the competitor's slowdown; and their Figures 4 and 7 as the active workers over time while the competitor
comes and goes."""

import os

from make_report import plot

MODE_COLOURS = {"fts": "#7f8c8d", "one_worker": "#34495e", "asat": "#1b6ca8", "schedstat": "#27ae60",
                "omp_static": "#e67e22", "omp_dynamic": "#c0392b"}


def _modes(rows):
    out = []
    for r in rows:
        if r["mode"] not in out:
            out.append(r["mode"])
    return out


def _times(rows, outdir, plt):
    scenarios = []
    for r in rows:
        if r["scenario"] not in scenarios:
            scenarios.append(r["scenario"])
    modes = _modes(rows)
    fig, axes = plt.subplots(1, len(scenarios), figsize=(4.2 * len(scenarios), 4.6), dpi=110, sharey=True,
                             squeeze=False)
    width = 0.38
    for ax, sc in zip(axes[0], scenarios):
        for i, m in enumerate(modes):
            r = next((x for x in rows if x["scenario"] == sc and x["mode"] == m), None)
            if r is None:
                continue
            colour = MODE_COLOURS.get(m, "#444444")
            ax.bar(i - width / 2, r["cpu_s"], width, color=colour,
                   yerr=[[r["cpu_s"] - r["cpu_s_min"]], [r["cpu_s_max"] - r["cpu_s"]]], capsize=2,
                   label="CPU time" if i == 0 else None)
            ax.bar(i + width / 2, r["wall_s"], width, color="white", edgecolor=colour, hatch="//",
                   yerr=[[r["wall_s"] - r["wall_s_min"]], [r["wall_s_max"] - r["wall_s"]]], capsize=2,
                   label="wall time" if i == 0 else None)
            ax.plot([i - 0.45, i + 0.45], [r["ideal_wall_s"]] * 2, color="black", linewidth=1.5,
                    label="ideal wall time" if i == 0 else None)
            if "ideal_cpu_s" in r:
                ax.plot([i - 0.45, i + 0.45], [r["ideal_cpu_s"]] * 2, color="black", linewidth=1, linestyle="--",
                        label="ideal CPU time (one worker)" if i == 0 else None)
            ax.annotate(f"{r['wall_over_ideal']:.2f}x", (i + width / 2, r["wall_s"]), textcoords="offset points",
                        xytext=(0, 4), ha="center", fontsize=8)
        ax.set_xticks(range(len(modes)))
        ax.set_xticklabels(modes, fontsize=8)
        ax.set_title(sc, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("seconds (median; whiskers min-max)")
    axes[0][0].legend(frameon=False, fontsize=8, loc="upper left")
    r0 = rows[0]
    fig.suptitle(f"asat: n={r0.get('n', '?')}, {r0.get('steps', '?')} steps, {r0.get('workers', '?')} workers on "
                 f"{r0.get('run_cpus', '?')} CPUs (Severance & Enbody, Figures 2 and 5)", fontsize=10)
    fig.tight_layout()
    fname = "asat_times.png"
    fig.savefig(os.path.join(outdir, fname))
    plt.close(fig)
    return (fname, "asat: CPU time (filled) and wall time (hatched) per mode and scenario, the ideal wall time "
                   "(black line: the time on the CPUs the competitor leaves, from fts and one_worker alone), the "
                   "ideal CPU time (dashed: one_worker's) and wall/ideal above each bar")


def _slowdown(rows, outdir, plt):
    rows = [r for r in rows if r.get("competitor_slowdown") is not None]
    if not rows:
        return None
    scenarios = []
    for r in rows:
        if r["scenario"] not in scenarios:
            scenarios.append(r["scenario"])
    modes = _modes(rows)
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    width = 0.8 / max(1, len(modes))
    for j, m in enumerate(modes):
        xs, ys, lo, hi = [], [], [], []
        for i, sc in enumerate(scenarios):
            r = next((x for x in rows if x["scenario"] == sc and x["mode"] == m), None)
            if r is None:
                continue
            xs.append(i - 0.4 + width * (j + 0.5))
            ys.append(r["competitor_slowdown"])
            lo.append(r["competitor_slowdown"] - r["competitor_slowdown_min"])
            hi.append(r["competitor_slowdown_max"] - r["competitor_slowdown"])
        ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, color=MODE_COLOURS.get(m, "#444444"), label=m)
    ax.axhline(1.0, color="#888888", linewidth=1)
    ax.axhline(1.10, color="black", linestyle=":", linewidth=1, label="target: slowed by at most 10%")
    ax.set_xticks(range(len(scenarios)))
    ax.set_xticklabels(scenarios)
    ax.set_ylabel("competitor's wall time beside the program / alone")
    ax.set_ylim(0, max(1.3, max(r["competitor_slowdown_max"] for r in rows) * 1.1))
    ax.set_title("asat: how much each mode slows the single-threaded competitor", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    fname = "asat_competitor.png"
    fig.savefig(os.path.join(outdir, fname))
    plt.close(fig)
    return (fname, "asat: the competitor's slowdown per scenario and mode (median, whiskers min-max); "
                   "1.0 = as fast as with a CPU of its own")


def _series(series, outdir, plt):
    if not series:
        return None
    fig, axes = plt.subplots(len(series), 1, figsize=(8, 1.6 + 1.3 * len(series)), dpi=110, sharex=True,
                             squeeze=False)
    top = max(max(s["active_workers"] or [0]) for s in series)
    for ax, s in zip(axes[:, 0], series):
        ax.axvspan(s["competitor_start_s"], s["competitor_stop_s"], color="#f5cba7", alpha=0.6,
                   label="competitor running")
        ax.step(s["t_s"], s["active_workers"], where="post", color=MODE_COLOURS.get(s["mode"], "#444444"),
                label=f"{s['mode']}: active workers")
        ax.axvline(s["wall_s"], color="#888888", linestyle=":", linewidth=1)
        ax.set_ylim(0, top + 0.5)
        ax.set_yticks(range(0, top + 1))
        ax.set_ylabel("workers")
        ax.legend(frameon=False, fontsize=8, loc="lower left")
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel(f"seconds since the program's timed run began (samples every "
                           f"{series[0].get('sample_ms', '?')} ms; dotted: the program's end)")
    fig.suptitle("asat, changing load: active workers while the competitor comes and goes "
                 "(Severance & Enbody, Figures 4 and 7)", fontsize=10)
    fig.tight_layout()
    fname = "asat_active_workers.png"
    fig.savefig(os.path.join(outdir, fname))
    plt.close(fig)
    return (fname, "asat: active workers over time in the changing scenario, one panel per mode (its median "
                   "round); shaded: the competitor's run. For OpenMP, the size of the last parallel team")


@plot("asat")
def plot_asat(records, outdir, plt):
    rows = [r for r in records if "mode" in r and "wall_over_ideal" in r]
    series = [r for r in records if r.get("series") and "t_s" in r]
    out = []
    if rows:
        out.append(_times(rows, outdir, plt))
        out.append(_slowdown(rows, outdir, plt))
    out.append(_series(series, outdir, plt))
    return [x for x in out if x is not None]
