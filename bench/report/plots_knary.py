"""Plots of weft-bench knary and weft-bench cycler: Arora, Blumofe & Plaxton's Figures 24/25 and
27/28 (utilization against normalized processes, knary's held-out sweep and weft's lu and heat,
with the curve of the model fitted on the fit sweep), the model's time against the measured one,
and the cycler's processor average over time."""

import os

from make_report import plot

TARGET = 0.25  # the model's target worst relative error (bench/knary.cpp)


def runs_and_fits(records):
    """The runs of the held-out sweep and of the applications (the plots show only runs the model
    was not fitted to), and the summary rows keyed by (pa, model, set)."""
    runs = [r for r in records if r.get("sweep") in ("held_out", "apps") and "wall_s" in r]
    fits = {(r["pa"], r.get("model", "abp"), r["set"]): r for r in records if r.get("summary") == "fit"}
    return runs, fits


def coefficients(fits, pa, model="abp"):
    f = fits.get((pa, model, "fit"))
    return (f["c1"], f["c2"]) if f else None


def held_out_error(fits, pa, model="abp"):
    f = fits.get((pa, model, "held_out"))
    return f", held-out worst error {100 * f['worst_rel_err']:.0f}%" if f else ""


def model_curve(ax, c1, c2, xs, label, colour="black"):
    """The model's utilization 1 / (c1 + c2 x) over the range of xs (log-spaced)."""
    lo, hi = min(xs), max(xs)
    if not (lo > 0 and hi > 0) or c1 + c2 <= 0:
        return
    n = 200
    grid = [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)] if hi > lo else [lo]
    ax.plot(grid, [1.0 / (c1 + c2 * x) for x in grid], color=colour, linewidth=1.2, label=label)


def utilization_plot(ax, runs, ukey, fit_c, title, cpus):
    """Utilization against normalized processes, one colour per input, hollow
    markers for oversubscribed runs (more workers than CPUs)."""
    programs = []
    for r in runs:
        if r["program"] not in programs:
            programs.append(r["program"])
    knaries = [p for p in programs if not any(r["program"] == p and r["sweep"] == "apps" for r in runs)]
    import matplotlib  # here, not at the top: the report imports this file even without matplotlib

    cmap = matplotlib.colormaps["viridis"]
    app_colours = ["#c0392b", "#e67e22", "#8e44ad"]
    xs_all = []
    for key in programs:
        if key in knaries:
            i = knaries.index(key)
            colour, marker = cmap(i / max(1, len(knaries) - 1)), "o"
        else:
            i = programs.index(key) - len(knaries)
            colour, marker = app_colours[i % len(app_colours)], "s^D"[i % 3]
        sel = [r for r in runs if r["program"] == key and r.get(ukey) is not None]
        for over in (False, True):
            pts = [(r["normalized_processes"], r[ukey]) for r in sel if bool(r.get("oversubscribed")) == over]
            pts = [(x, y) for x, y in pts if x > 0 and y > 0]
            if not pts:
                continue
            xs_all += [x for x, _ in pts]
            ax.scatter([x for x, _ in pts], [y for _, y in pts], s=22, color=colour, marker=marker,
                       facecolors="none" if over else colour, label=key if not over else None, zorder=3)
    if fit_c is not None and xs_all:
        c1, c2 = fit_c
        model_curve(ax, c1, c2, xs_all, f"model 1/(c1 + c2·x), c1={c1:.2f}, c2={c2:.3f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    # The paper's axis runs 0.1..1; it widens to show every point.
    ys = [r[ukey] for r in runs if isinstance(r.get(ukey), (int, float)) and r[ukey] > 0]
    if ys:
        ax.set_ylim(min(0.1, min(ys) / 1.3), max(1.2, max(ys) * 1.3))
    ticks = [0.01, 0.02, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.5, 2, 3]
    ax.set_yticks([t for t in ticks if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]])
    ax.set_yticklabels([f"{t:g}" for t in ticks if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]])
    ax.minorticks_off()
    ax.set_xlabel("normalized processes  P / (T1/Tinf)")
    ax.set_ylabel("utilization")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, frameon=False, loc="lower left", title=f"knary n:k:r, lu, heat (hollow: P > {cpus} CPUs)",
              title_fontsize=7)


def model_vs_measured(ax, runs, title):
    pts = [(r["wall_s"], r["model_s"]) for r in runs if r.get("model_s") and r.get("wall_s")]
    if not pts:
        return
    ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=14, color="#1b6ca8", zorder=3)
    lo = min(min(p) for p in pts) / 1.5
    hi = max(max(p) for p in pts) * 1.5
    ax.plot([lo, hi], [lo, hi], color="black", linewidth=1, label="model = measured")
    ax.fill_between([lo, hi], [lo * (1 - TARGET), hi * (1 - TARGET)], [lo * (1 + TARGET), hi * (1 + TARGET)],
                    color="#999999", alpha=0.25, label=f"±{int(TARGET * 100)}%")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured T, seconds")
    ax.set_ylabel("model c1·T1/PA + c2·Tinf·P/PA, seconds")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, frameon=False)


@plot("knary")
def plot_knary(records, outdir, plt):
    runs, fits = runs_and_fits(records)
    if not runs:
        return []
    cpus = runs[0].get("cpus", "?")
    out = []
    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=110)
    utilization_plot(ax, runs, "utilization", coefficients(fits, "paper"),
                     "held-out sweep and lu, heat: utilization T1/(PA·T), PA = min(CPUs, P)\n"
                     "(Arora, Blumofe & Plaxton, Figures 24 and 25)", cpus)
    fig.tight_layout()
    name = "knary_utilization.png"
    fig.savefig(os.path.join(outdir, name))
    plt.close(fig)
    out.append((name, "knary's held-out sweep and weft's fork/join lu and heat: utilization against normalized "
                      "processes; the curve is the model T = c1·T1/PA + c2·Tinf·P/PA fitted on the fit sweep."))

    fig, ax = plt.subplots(figsize=(6.5, 5.5), dpi=110)
    model_vs_measured(ax, runs, f"knary (held out), lu, heat: the model's time{held_out_error(fits, 'paper')}")
    fig.tight_layout()
    name = "knary_model.png"
    fig.savefig(os.path.join(outdir, name))
    plt.close(fig)
    out.append((name, "the model (paper's PA, fitted on the fit sweep) against the measured time of every held-out "
                      f"and application run; the band is the target ±{int(TARGET * 100)}%."))
    return out


@plot("cycler")
def plot_cycler(records, outdir, plt):
    runs, fits = runs_and_fits(records)
    intervals = [r for r in records if r.get("interval")]
    if not runs:
        return []
    cpus = runs[0].get("cpus", "?")
    out = []
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.5), dpi=110, sharey=True)
    utilization_plot(axes[0], runs, "utilization", coefficients(fits, "paper"),
                     f"PA = min(CPUs − PA(cycler), P) (the paper's Figures 27, 28){held_out_error(fits, 'paper')}",
                     cpus)
    utilization_plot(axes[1], runs, "utilization_cpu", coefficients(fits, "cpu"),
                     f"PA = the run's CPU time / T{held_out_error(fits, 'cpu')}", cpus)
    fig.suptitle("knary (held-out sweep), lu and heat beside the cycler", fontsize=11)
    fig.tight_layout()
    name = "cycler_utilization.png"
    fig.savefig(os.path.join(outdir, name))
    plt.close(fig)
    out.append((name, "knary's held-out sweep and lu, heat beside the cycler: utilization against normalized "
                      "processes with the paper's PA (left, judged) and the CPU-time PA (right); curves: the model "
                      "fitted on the fit sweep with each."))

    fig, ax = plt.subplots(figsize=(10, 4), dpi=110)
    if intervals:
        ts = [r["t_s"] for r in intervals]
        ax.step(ts + [ts[-1] + intervals[-1]["length_s"]], [r["pa_cycler"] for r in intervals] +
                [intervals[-1]["pa_cycler"]], where="post", color="#c0392b", label="PA(cycler) per interval")
    ax.scatter([r["t_s"] for r in runs], [r["pa_cpu"] for r in runs], s=10, color="#1b6ca8",
               label="the run's CPU time / T", zorder=3)
    ax.scatter([r["t_s"] for r in runs], [r["pa_cycler"] for r in runs], s=10, color="#e67e22", marker="x",
               label="PA(cycler) during each run", zorder=3)
    ax.set_xlabel("seconds since the cycler started")
    ax.set_ylabel("processors")
    ax.set_title(f"the cycler's processor average (from its counter) and the runs' CPU use, on {cpus} CPUs",
                 fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, frameon=False, loc="upper right")
    fig.tight_layout()
    name = "cycler_pa.png"
    fig.savefig(os.path.join(outdir, name))
    plt.close(fig)
    out.append((name, "the cycler's processor average per log interval, and each held-out or application run's "
                      "CPU use and the cycler's PA over that run."))
    return out
