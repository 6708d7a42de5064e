"""Plots of weft-bench filaments: the Filaments paper's Tables 1-4 as charts. One chart
of speedup over serial per application and version (a group of bars per
application, one chart per worker count, with the machine's ceiling: W serial
copies at once), and one of the filaments version's
time relative to serial and to the coarse-grain version (the paper's
overhead columns)."""

import os

from make_report import plot

ORDER = ["coarse", "filaments", "omp", "tbb"]


@plot("filaments")
def plot_filaments(records, outdir, plt):
    rows = [r for r in records if r.get("experiment") == "filaments" and "time_s" in r and "app" in r]
    if not rows:
        return []
    apps = []
    for r in rows:
        if r["app"] not in apps:
            apps.append(r["app"])
    workers = sorted({r["workers"] for r in rows if r.get("version") != "serial"})
    out = []
    for w in workers:
        versions = [v for v in ORDER if any(r.get("version") == v and r["workers"] == w for r in rows)]
        fig, ax = plt.subplots(figsize=(11, 4.5), dpi=110)
        width = 0.8 / max(1, len(versions))
        for vi, v in enumerate(versions):
            xs, ys = [], []
            for ai, a in enumerate(apps):
                r = next((x for x in rows if x["app"] == a and x.get("version") == v and x["workers"] == w), None)
                if r is None or "vs_serial" not in r:
                    continue
                xs.append(ai + (vi - (len(versions) - 1) / 2) * width)
                ys.append(r["vs_serial"])
            ax.bar(xs, ys, width * 0.95, label=v)
        # The machine's ceiling in the same run: W serial copies at once.
        cx, cy = [], []
        for ai, a in enumerate(apps):
            r = next((x for x in rows if x["app"] == a and x.get("version") == "serial_copies" and x["workers"] == w), None)
            if r is not None and r.get("ceiling"):
                cx.append(ai)
                cy.append(r["ceiling"])
        if cx:
            ax.scatter(cx, cy, marker="_", s=900, linewidths=2, color="black", label=f"ceiling ({w} serial copies)", zorder=3)
        ax.axhline(1.0, color="#444444", linestyle="--", linewidth=1)
        ax.set_yscale("log")
        ax.set_xticks(range(len(apps)))
        ax.set_xticklabels(apps, rotation=20, ha="right")
        ax.set_ylabel("speedup over serial (log)")
        ax.set_title(f"Filaments applications on {w} worker{'s' if w > 1 else ''}: speedup over serial", fontsize=11)
        ax.grid(axis="y", alpha=0.3)
        ax.set_ylim(top=ax.get_ylim()[1] * 1.3)  # room for the legend above the bars
        ax.legend(frameon=False, ncol=len(versions) + 1)
        fig.tight_layout()
        fname = f"filaments_speedup_w{w}.png"
        fig.savefig(os.path.join(outdir, fname))
        plt.close(fig)
        out.append((fname, f"filaments: serial time / version time, {w} worker(s); dashed: serial; "
                           "black bars: the ceiling (W serial copies at once)"))

    fig, ax = plt.subplots(figsize=(11, 4.5), dpi=110)
    width = 0.8 / max(1, len(workers))
    for wi, w in enumerate(workers):
        xs, ys = [], []
        for ai, a in enumerate(apps):
            r = next((x for x in rows if x["app"] == a and x.get("version") == "filaments" and x["workers"] == w), None)
            if r is None or "vs_coarse" not in r or not r["vs_coarse"]:
                continue
            xs.append(ai + (wi - (len(workers) - 1) / 2) * width)
            ys.append(1.0 / r["vs_coarse"])
        ax.bar(xs, ys, width * 0.95, label=f"{w} worker{'s' if w > 1 else ''}")
    ax.axhline(1.0, color="#444444", linestyle="--", linewidth=1)
    ax.set_xticks(range(len(apps)))
    ax.set_xticklabels(apps, rotation=20, ha="right")
    ax.set_ylabel("filaments time / coarse-grain time")
    ax.set_title("the cost of fine grain: filaments against the coarse-grain program (1.0 = equal)", fontsize=11)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(frameon=False)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "filaments_vs_coarse.png"))
    plt.close(fig)
    out.append(("filaments_vs_coarse.png", "filaments: time relative to the coarse-grain version, per worker count"))
    return out
