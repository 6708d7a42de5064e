"""Plots of weft-bench matmul: Narlikar & Blelloch's Figure 7 (time and peak memory per
scheduler), one group of bars per worker count."""

import os

from make_report import plot


@plot("matmul")
def plot_matmul(records, outdir, plt):
    rows = [r for r in records if r.get("experiment") == "matmul" and "time_s" in r]
    if not rows:
        return []
    serial = next((r for r in rows if r.get("version") == "serial"), None)
    workers = sorted({r["workers"] for r in rows if r.get("version") != "serial"})
    labels = []
    for r in rows:
        lab = r.get("variant") or r.get("sched")
        if r.get("version") != "serial" and lab not in labels:
            labels.append(lab)
    out = []
    for key, ylabel, fname, title in (
        ("time_s", "seconds (median)", "matmul_time.png", "time, lower is better"),
        ("peak_heap_bytes", "peak heap, MiB", "matmul_memory.png", "peak heap (weft_malloc / counted malloc)"),
    ):
        fig, ax = plt.subplots(figsize=(10, 5), dpi=110)
        width = 0.8 / max(1, len(workers))
        for wi, w in enumerate(workers):
            xs, ys = [], []
            for li, lab in enumerate(labels):
                r = next((x for x in rows if x.get("workers") == w and (x.get("variant") or x.get("sched")) == lab), None)
                if r is None or key not in r:
                    continue
                v = r[key] / (1024 * 1024) if key == "peak_heap_bytes" else r[key]
                xs.append(li + (wi - (len(workers) - 1) / 2) * width)
                ys.append(v)
            ax.bar(xs, ys, width * 0.95, label=f"{w} worker{'s' if w > 1 else ''}")
        if serial is not None and key in serial:
            v = serial[key] / (1024 * 1024) if key == "peak_heap_bytes" else serial[key]
            ax.axhline(v, color="#444444", linestyle="--", linewidth=1, label="serial")
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=20, ha="right")
        ax.set_ylabel(ylabel)
        n = rows[0].get("n", "?")
        ax.set_title(f"matmul n={n}: {title} (Narlikar & Blelloch, Figure 7)", fontsize=11)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(frameon=False)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, fname))
        plt.close(fig)
        out.append((fname, f"matmul: {title}, per scheduler and worker count; dashed: the serial program"))
    return out
