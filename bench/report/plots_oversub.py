"""Plot of weft-bench oversub: Arora, Blumofe & Plaxton's "Performance without yield"
(speedup against the number of workers on a machine with fewer CPUs), one line per
version: weft's ws with and without its yield, OpenMP active and passive, oneTBB."""

import os

from make_report import plot


@plot("oversub")
def plot_oversub(records, outdir, plt):
    rows = [r for r in records if "speedup_vs_serial" in r and r.get("version") != "serial"]
    if not rows:
        return []
    labels = []
    for r in rows:
        if r["label"] not in labels:
            labels.append(r["label"])
    cpus = rows[0].get("run_cpus")
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    for lab in labels:
        pts = sorted((r["workers"], r["speedup_vs_serial"]) for r in rows if r["label"] == lab)
        style = "-" if "weft" in lab else "--"
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", label=lab)
    workers = sorted({r["workers"] for r in rows})
    if cpus:
        ax.axhline(cpus, color="#888888", linestyle=":", linewidth=1, label=f"{cpus} CPUs (the most possible)")
        ax.axvline(cpus, color="#bbbbbb", linestyle=":", linewidth=1)
    ax.set_xscale("log", base=2)
    ax.set_xticks(workers)
    ax.set_xticklabels([str(w) for w in workers])
    ax.set_xlabel("workers (threads) P" + (f"; right of the dotted line: more than the {cpus} CPUs" if cpus else ""))
    ax.set_ylabel("speedup over the serial program (median)")
    top = max(r["speedup_vs_serial"] for r in rows)
    ax.set_ylim(0, max(top, cpus or 0) * 1.12)
    n = rows[0].get("n", "?")
    ax.set_title(f"oversub: matmul n={n} on {cpus} CPUs (Arora, Blumofe & Plaxton, \"Performance without yield\")",
                 fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(frameon=False, fontsize=9)
    fig.tight_layout()
    fname = "oversub_speedup.png"
    fig.savefig(os.path.join(outdir, fname))
    plt.close(fig)
    return [(fname, "oversub: speedup against workers on a fixed set of CPUs, one line per version; "
                    "ws with its yield should stay flat past the CPU count")]
