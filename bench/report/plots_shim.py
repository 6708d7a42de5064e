"""Plots of weft-bench shim: Narlikar & Blelloch's claim on an unmodified Pthreads
program ("Pthreads for Dynamic and Irregular Parallelism"). One figure, two panels,
a bar per (program, version, scheduler): the time, and the peak heap against the
serial program's (the dcmm program only)."""

import os

from make_report import plot

COLOURS = {"glibc": "#c0392b", "shim": "#27ae60", "native": "#1b6ca8", "serial": "#444444"}


@plot("shim")
def plot_shim(records, outdir, plt):
    rows = [r for r in records if "program" in r and "time_s" in r]
    if not rows:
        return []
    labels = [f"{r['program']}\n{r['version']}" + ("" if r["version"] in ("glibc", "serial") else f"\n{r['sched']}") for r in rows]
    colours = [COLOURS.get(r["version"], "#7f8c8d") for r in rows]
    fig, (ax_t, ax_h) = plt.subplots(1, 2, figsize=(12, 4.8), dpi=110)
    ax_t.bar(range(len(rows)), [r["time_s"] for r in rows], color=colours)
    ax_t.set_xticks(range(len(rows)))
    ax_t.set_xticklabels(labels, fontsize=7)
    ax_t.set_ylabel("time s (median over rounds)")
    ax_t.set_title("time, lower is better", fontsize=10)
    ax_t.grid(axis="y", alpha=0.3)

    dcmm = [r for r in rows if r["program"] == "dcmm" and r.get("serial_heap_bytes")]
    ax_h.bar(range(len(dcmm)), [r["peak_heap_bytes"] / r["serial_heap_bytes"] for r in dcmm],
             color=[COLOURS.get(r["version"], "#7f8c8d") for r in dcmm])
    ax_h.axhline(1.2, color="#888888", linestyle=":", linewidth=1, label="1.2x serial (the dfs target)")
    ax_h.set_xticks(range(len(dcmm)))
    ax_h.set_xticklabels([lab for lab, r in zip(labels, rows) if r in dcmm], fontsize=7)
    ax_h.set_ylabel("peak heap / serial program's")
    ax_h.set_title("dcmm: peak heap over the serial program's", fontsize=10)
    ax_h.grid(axis="y", alpha=0.3)
    ax_h.legend(frameon=False, fontsize=8)
    n = rows[0].get("n", "?")
    fig.suptitle(f"shim: one unmodified Pthreads program, n={n}: glibc's threads (red), under libweft-pthread "
                 "(green), weft-native (blue)", fontsize=10)
    fig.tight_layout()
    name = "shim_time_heap.png"
    fig.savefig(os.path.join(outdir, name))
    plt.close(fig)
    return [(name, "shim: the thread-per-call matrix multiply and the coarse program, time and peak heap per "
                   "version and scheduler")]
