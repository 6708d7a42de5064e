"""Plots of weft-bench share: several weft processes on the same CPUs. The throughput of P processes together
against one alone and the smallest one's share of the units, per WEFT_ADAPT setting, with the targets; and the
kill runs' active workers over time, per process, with the kill marked (Severance & Enbody's threads-over-time
figures, for processes that share a core budget)."""

import os

from make_report import plot

# bench/share.cpp's recovered_fraction: the survivors have recovered when together they do this much of one
# process's units per second alone.
RECOVERED_FRACTION = 0.9

ADAPT_STYLE = {True: ("WEFT_ADAPT unset (adapting)", "#1b6ca8"), False: ("WEFT_ADAPT=off", "#c0392b")}


def whiskers(r, key):
    v = r[key]
    return max(0.0, v - r.get(key + "_min", v)), max(0.0, r.get(key + "_max", v) - v)


def bound(targets, name):
    """The bound of the target row NAME, or None."""
    return next((t["bound"] for t in targets if t.get("target") == name), None)


@plot("share")
def plot_share(records, outdir, plt):
    """Per program (the rows' "scenario"): the throughput plot and the kill runs' traces."""
    out = []
    programs = []
    for r in records:
        if "run" in r and r.get("scenario", "tree") not in programs:
            programs.append(r.get("scenario", "tree"))
    for prog in programs:
        mine = [r for r in records if r.get("scenario", "tree") == prog]
        out.extend(plot_program(mine, prog, outdir, plt))
    return out


def plot_program(records, prog, outdir, plt):
    out = []
    rows = [r for r in records if r.get("run") == "together" and "throughput_ratio" in r]
    targets = [r for r in records if isinstance(r.get("target"), str)]
    if rows:
        counts = sorted({r["processes"] for r in rows})
        modes = [m for m in (True, False) if any(r["adapt"] == m for r in rows)]
        fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), dpi=110)
        width = 0.8 / len(modes)
        for ax, key, title in ((axes[0], "throughput_ratio", "all processes' units/s over one alone"),
                               (axes[1], "min_share", "smallest process's share of the units")):
            for mi, m in enumerate(modes):
                label, colour = ADAPT_STYLE[m]
                xs, ys, lo, hi = [], [], [], []
                for ci, n in enumerate(counts):
                    r = next((r for r in rows if r["adapt"] == m and r["processes"] == n), None)
                    if r is None or r.get(key) is None:
                        continue
                    xs.append(ci + (mi - (len(modes) - 1) / 2) * width)
                    ys.append(r[key])
                    a, b = whiskers(r, key)
                    lo.append(a)
                    hi.append(b)
                ax.bar(xs, ys, width * 0.95, color=colour, label=label, yerr=[lo, hi], capsize=3)
            if key == "throughput_ratio":
                ax.axhline(1.0, color="black", linewidth=0.8)
                # The partitioned run of P: the machine's ceiling for P processes.
                for ci, n in enumerate(counts):
                    p = next((r for r in records if r.get("run") == "partitioned" and r.get("processes") == n
                              and r.get("throughput_ratio") is not None), None)
                    if p is not None:
                        ax.hlines(p["throughput_ratio"], ci - 0.45, ci + 0.45, color="#2a7f3f", linestyle="--",
                                  label="partitioned (ceiling)" if ci == 0 else None)
                if bound(targets, "throughput_ratio") is not None:
                    ax.axhline(bound(targets, "throughput_ratio"), color="#888888", linestyle=":",
                               label="target (2 processes)")
            else:
                for ci, n in enumerate(counts):
                    ax.hlines(1.0 / n, ci - 0.45, ci + 0.45, color="black", linewidth=0.8)
                if bound(targets, "min_share") is not None:
                    ax.axhline(bound(targets, "min_share"), color="#888888", linestyle=":",
                               label="target (2 processes)")
            ax.set_xticks(range(len(counts)))
            ax.set_xticklabels([f"{n} processes" for n in counts])
            ax.set_title(title, fontsize=10)
            ax.grid(axis="y", alpha=0.3)
        axes[0].set_ylabel("median over rounds, whiskers min–max")
        axes[0].legend(frameon=False, fontsize=8, loc="lower right")
        axes[1].legend(frameon=False, fontsize=8, loc="lower right")
        cpus = rows[0].get("run_cpus", "?")
        workers = rows[0].get("workers", "?")
        fig.suptitle(f"share, program {prog}: processes of {workers} workers on {cpus} CPUs (black: 1 and the even "
                     f"share 1/P)", fontsize=10)
        fig.tight_layout()
        name = f"share_throughput_{prog}.png"
        fig.savefig(os.path.join(outdir, name))
        plt.close(fig)
        out.append((name, f"share, program {prog}: throughput of P processes together against one alone, and the "
                          "smallest one's share of the units, per WEFT_ADAPT setting"))

    traces = [r for r in records if r.get("trace")]
    if traces:
        alone = {r["adapt"]: r["units_per_s"] for r in records if r.get("run") == "alone" and "units_per_s" in r}
        out.append(plot_traces(traces, prog, outdir, plt, "active", alone))
        out.append(plot_traces(traces, prog, outdir, plt, "rate", alone))
    return out


def rates(ts, units, span=4):
    """Units per second over the last `span` reports, at each report from the span-th on."""
    xs, ys = [], []
    for i in range(span, len(ts)):
        if ts[i] > ts[i - span]:
            xs.append(ts[i])
            ys.append((units[i] - units[i - span]) / (ts[i] - ts[i - span]))
    return xs, ys


def plot_traces(traces, prog, outdir, plt, what, alone):
    """One panel per setting and process count: each process's active workers ("active") or units per
    second ("rate") over the last round's kill run, the kill marked."""
    modes = [m for m in (True, False) if any(r["adapt"] == m for r in traces)]
    counts = sorted({r["processes"] for r in traces})
    fig, axes = plt.subplots(len(modes), len(counts), figsize=(5 * len(counts), 3.2 * len(modes)), dpi=110,
                             squeeze=False)
    for mi, m in enumerate(modes):
        for ci, n in enumerate(counts):
            ax = axes[mi][ci]
            r = next((r for r in traces if r["adapt"] == m and r["processes"] == n), None)
            if r is None:
                ax.axis("off")
                continue
            shares = r.get("budget_share") or [[] for _ in r["t_s"]]
            for pi, (ts, units, act, share) in enumerate(zip(r["t_s"], r["units"], r["active_workers"], shares)):
                label = "killed" if pi == 0 else f"survivor {pi}"
                if what == "active":
                    line = ax.step(ts, [a + 0.04 * pi for a in act], where="post", label=label, linewidth=1.2)[0]
                    if any(share):
                        ax.step(ts, [b + 0.04 * pi for b in share], where="post", linestyle=":", linewidth=1.2,
                                color=line.get_color(), label=f"{label}: budget share")
                else:
                    xs, ys = rates(ts, units)
                    ax.plot(xs, ys, label=label, linewidth=1.2)
            ax.axvline(r["kill_s"], color="black", linestyle="--", linewidth=0.8, label="kill")
            if what == "rate" and m in alone:
                ax.axhline(RECOVERED_FRACTION * alone[m], color="#888888", linestyle=":", linewidth=1,
                           label=f"{RECOVERED_FRACTION} x one alone (recovered)")
            ax.set_title(f"{prog}, {ADAPT_STYLE[m][0]}: {n} processes, one killed", fontsize=9)
            ax.set_xlabel("seconds since the start")
            if what == "active":
                ax.set_ylabel("active workers")
                ax.set_ylim(-0.2, r.get("workers", 2) + 0.5)
            else:
                ax.set_ylabel("units per second")
                ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            ax.legend(frameon=False, fontsize=7, loc="lower right")
    fig.tight_layout()
    name = f"share_kill_{what}_{prog}.png"
    fig.savefig(os.path.join(outdir, name))
    plt.close(fig)
    if what == "active":
        return (name, f"share, program {prog}: each process's active workers (solid) and core budget share (dotted, with a budget) "
                      "in the last round's kill runs, lines offset slightly to stay apart; the survivors should take "
                      "the killed one's share back")
    return (name, f"share, program {prog}: each process's units per second (over 4 reports) in the last round's "
                  "kill runs; after the kill the survivors should together reach one process alone's rate (dotted: "
                  "0.9 of it, where recovery is judged)")
