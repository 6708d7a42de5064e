"""Plots of weft-bench suite000: Narlikar & Blelloch's application suite ("Pthreads for
Dynamic and Irregular Parallelism", Supercomputing 98), Figures 8-11.

- Figure 8: a table of speedups and threads live, weft's beside the paper's (the paper's
  from its Figure 8, on 8 processors of a Sun Enterprise 5000);
- Figure 9: peak memory of FMM and the decision tree per scheduler;
- Figure 10: the FFT's speedup with p threads against 256 leaves as the workers grow;
- Figure 11: volume rendering's time and memory as the tiles per thread grow, fifo and dfs.
Memory is weft's heap high-water mark where the shim prints one (peak_heap_bytes); where
it prints none, the plots show the stacks' high-water mark instead and say so."""

import os

from make_report import plot

MIB = 1024 * 1024
APPS = [("barnes", "Barnes-Hut"), ("fmm", "FMM"), ("dtree", "Decision tree"), ("fft1d", "FFT"),
        ("spmv", "Sparse matrix"), ("volrend", "Vol. render")]
# Narlikar & Blelloch, Figure 8 (8 processors): coarse-grained speedup; the fine-grained
# program's speedup and most threads live under the original (FIFO) scheduler and under
# their space-efficient scheduler. None: the paper has no coarse-grained version.
PAPER = {
    "barnes": (7.53, 5.76, 860, 7.80, 34),
    "fmm": (None, 4.90, 4348, 7.45, 24),
    "dtree": (None, 5.23, 94, 5.25, 70),
    "fft1d": (6.27, 5.84, 224, 5.94, 14),
    "spmv": (6.14, 4.41, 55, 5.96, 32),
    "volrend": (6.79, 5.73, 131, 6.72, 25),
}
PAPER_CITATION = ("paper: Narlikar & Blelloch, \"Pthreads for Dynamic and Irregular Parallelism\", "
                  "Supercomputing 98, Figure 8 (8 processors; FFT: FFTW, 2^22 points)")
COLOURS = {"fifo": "#c0392b", "lifo": "#e67e22", "dfs": "#27ae60", "ws": "#1b6ca8", "coarse": "#444444"}


def rows_of(records, figure):
    return [r for r in records if r.get("figure") == figure and "time_s" in r]


def find(rows, **want):
    return next((r for r in rows if all(r.get(k) == v for k, v in want.items())), None)


def memory_key(rows):
    """peak_heap_bytes where any row has it, else stack_bytes_peak; with its label."""
    if any(r.get("peak_heap_bytes") for r in rows):
        return "peak_heap_bytes", "peak heap, MiB"
    return "stack_bytes_peak", "weft's stacks' high-water mark, MiB (heap not accounted in this build)"


def fmt_speedup(v):
    return "–" if v is None else f"{v:.2f}"


def plot_table(records, outdir, plt):
    rows = rows_of(records, "8")
    if not rows:
        return []
    workers = max(r["workers"] for r in rows)
    cells = []
    for app, name in APPS:
        mine = [r for r in rows if r["app"] == app]
        if not mine:
            continue
        coarse = find(mine, version="coarse", threads="glibc", workers=workers)
        fifo = find(mine, version="fine", threads="weft", sched="fifo", workers=workers)
        dfs = find(mine, version="fine", threads="weft", sched="dfs", workers=workers)
        p = PAPER[app]
        cells.append([name, fmt_speedup(p[0]), fmt_speedup(p[1]), str(p[2]), fmt_speedup(p[3]), str(p[4]),
                      fmt_speedup(coarse and coarse["speedup"]), fmt_speedup(fifo and fifo["speedup"]),
                      str(fifo["max_live_threads"]) if fifo else "–", fmt_speedup(dfs and dfs["speedup"]),
                      str(dfs["max_live_threads"]) if dfs else "–"])
    if not cells:
        return []
    headers = ["benchmark", "paper\ncoarse", "paper\nFIFO", "paper\nthreads", "paper\nnew sched.",
               "paper\nthreads", f"weft\ncoarse", "weft\nfifo", "weft\nthreads", "weft\ndfs", "weft\nthreads"]
    fig, ax = plt.subplots(figsize=(12, 0.9 + 0.42 * len(cells)), dpi=110)
    ax.axis("off")
    table = ax.table(cellText=cells, colLabels=headers, loc="center", cellLoc="center")
    table.auto_set_font_size(False)
    table.set_fontsize(9)
    table.scale(1, 1.6)
    for col in range(1, 6):
        for row in range(len(cells) + 1):
            table[row, col].set_facecolor("#f2f2f2")
    size = rows[0].get("size", "?")
    ax.set_title(f"Figure 8: speedup over the serial program and most threads live; weft on {workers} "
                 f"worker{'s' if workers != 1 else ''} ({size} size; coarse on glibc's threads, fine under "
                 f"libweft-pthread)\n{PAPER_CITATION}", fontsize=9)
    fig.tight_layout()
    name = "suite000_fig8.png"
    fig.savefig(os.path.join(outdir, name))
    plt.close(fig)
    return [(name, f"suite000, Figure 8: weft's speedups and threads live beside the paper's ({PAPER_CITATION}); "
                   "the paper's 'new sched.' is its space-efficient scheduler, weft's dfs")]


def plot_memory(records, outdir, plt):
    rows = rows_of(records, "8")
    apps = [(a, n) for a, n in APPS if a in ("fmm", "dtree") and any(r["app"] == a for r in rows)]
    if not apps:
        return []
    key, ylabel = memory_key([r for r in rows if r["app"] in ("fmm", "dtree")])
    fig, axes = plt.subplots(1, len(apps), figsize=(6 * len(apps), 4.5), dpi=110, squeeze=False)
    for ax, (app, name) in zip(axes[0], apps):
        mine = [r for r in rows if r["app"] == app and r["version"] == "fine" and r["threads"] == "weft"]
        scheds = [s for s in ("fifo", "lifo", "dfs", "ws") if any(r["sched"] == s for r in mine)]
        workers = sorted({r["workers"] for r in mine})
        width = 0.8 / max(1, len(workers))
        for wi, w in enumerate(workers):
            xs, ys = [], []
            for si, s in enumerate(scheds):
                r = find(mine, sched=s, workers=w)
                if r is not None and r.get(key) is not None:
                    xs.append(si + (wi - (len(workers) - 1) / 2) * width)
                    ys.append(r[key] / MIB)
            ax.bar(xs, ys, width * 0.95, label=f"{w} worker{'s' if w > 1 else ''}")
        serial = find(rows, app=app, version="serial", threads="weft")
        if serial is not None and serial.get(key) is not None:
            ax.axhline(serial[key] / MIB, color="#444444", linestyle="--", linewidth=1, label="serial")
        ax.set_xticks(range(len(scheds)))
        ax.set_xticklabels(scheds)
        ax.set_ylabel(ylabel, fontsize=8)
        ax.set_title(f"{name} (fine-grained, under libweft-pthread)", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(frameon=False, fontsize=8)
    fig.suptitle("Figure 9: memory of FMM and the decision tree per scheduler (fifo: the paper's original "
                 "scheduler; dfs: its space-efficient one)", fontsize=10)
    fig.tight_layout()
    name = "suite000_fig9.png"
    fig.savefig(os.path.join(outdir, name))
    plt.close(fig)
    return [(name, "suite000, Figure 9: peak memory of FMM and the decision tree per scheduler and worker count; "
                   "dashed: the serial program under the shim")]


def plot_fft_sweep(records, outdir, plt):
    rows = [r for r in rows_of(records, "10") if r["app"] == "fft1d"]
    if not rows:
        return []
    cpus = rows[0].get("cpus")
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    for label, want, colour in (("p threads (coarse, ws)", {"version": "coarse"}, COLOURS["coarse"]),
                                ("256 leaves, fifo", {"version": "fine", "sched": "fifo"}, COLOURS["fifo"]),
                                ("256 leaves, dfs", {"version": "fine", "sched": "dfs"}, COLOURS["dfs"])):
        pts = sorted((r["workers"], r["speedup"]) for r in rows if all(r.get(k) == v for k, v in want.items()))
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=colour, label=label)
    top = max(r["workers"] for r in rows)
    if cpus and top > cpus:
        ax.axvspan(cpus + 0.5, top + 0.5, color="#dddddd", alpha=0.5, label=f"oversubscribed (workers > {cpus} CPUs)")
    ax.set_xlabel("workers (p)")
    ax.set_ylabel("speedup over the serial program")
    log2n = rows[0].get("log2n", "?")
    ax.set_title(f"Figure 10: FFT, N = 2^{log2n}: p threads against 256 leaves", fontsize=11)
    ax.grid(alpha=0.3)
    ax.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    name = "suite000_fig10.png"
    fig.savefig(os.path.join(outdir, name))
    plt.close(fig)
    return [(name, "suite000, Figure 10: the FFT's speedup with p threads and with 256 leaves as the workers grow; "
                   "the shaded workers are more than the CPUs")]


def plot_tiles_sweep(records, outdir, plt):
    rows = [r for r in rows_of(records, "11") if r["app"] == "volrend"]
    if not rows:
        return []
    key, ylabel = memory_key(rows)
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(12, 4.5), dpi=110)
    for s in ("fifo", "dfs"):
        pts = sorted((r["tiles_per_thread"], r["speedup"], r.get(key)) for r in rows if r["sched"] == s)
        if not pts:
            continue
        ax_t.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=COLOURS[s], label=s)
        mem = [(p[0], p[2] / MIB) for p in pts if p[2] is not None]
        ax_m.plot([m[0] for m in mem], [m[1] for m in mem], marker="o", color=COLOURS[s], label=s)
    for ax in (ax_t, ax_m):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("tiles per thread")
        ax.grid(alpha=0.3)
        ax.legend(frameon=False, fontsize=8)
    ax_t.set_ylabel("speedup over the serial program")
    ax_t.set_title("time", fontsize=10)
    ax_m.set_ylabel(ylabel, fontsize=8)
    ax_m.set_title("memory", fontsize=10)
    workers = rows[0]["workers"]
    fig.suptitle(f"Figure 11: volume rendering, fine-grained on {workers} workers, as the tiles per thread grow "
                 "(fifo: the paper's original scheduler; dfs: its space-efficient one)", fontsize=10)
    fig.tight_layout()
    name = "suite000_fig11.png"
    fig.savefig(os.path.join(outdir, name))
    plt.close(fig)
    return [(name, "suite000, Figure 11: volume rendering's speedup and memory against the tiles per thread, "
                   "fifo and dfs")]


@plot("suite000")
def plot_suite000(records, outdir, plt):
    out = []
    for fn in (plot_table, plot_memory, plot_fft_sweep, plot_tiles_sweep):
        out += fn(records, outdir, plt)
    return out
