"""Plots of weft-bench pde: Felten & McNamee's Figure 1 (the PDE solver's speedup against the problem
size) for the weft versions on in-process nodes with injected latency and over weft's mpi transport,
measured (markers) against the model of their equations (1)-(3) (lines), one figure per transport and
node count (the mpi figures with the raw MPI versions beside them); and the seconds per sweep on the
same axes."""

import os

from make_report import plot

# The versions of the paper's Figure 1 and its model, and the four-thread one beside them.
VERSIONS = [
    ("blocking1", "one blocking thread per node (T_b, eq. 1)", "#1b6ca8", "o"),
    ("threads2", "two threads per node (T_2, eq. 2)", "#c0392b", "s"),
    ("handcoded", "hand-coded nonblocking (T_opt, eq. 3)", "#27ae60", "^"),
    ("threads4", "four threads per node (eq. 2 for T = 4)", "#8e44ad", "D"),
]
# The raw MPI versions, beside the mpi figures: (version, label, colour, marker).
RAW_MPI = [
    ("mpi_plain", "plain MPI, blocking (eq. 1)", "#7f8c8d", "x"),
    ("blocking1", "MPI in blocking1's shape (eq. 1)", "#5d6d7e", "1"),
    ("handcoded", "plain MPI, hand-coded nonblocking (eq. 3)", "#34495e", "+"),
]


def speedup(rows, key, nodes):
    """Speedup on `nodes` nodes as the paper plots it: the serial time of the whole grid,
    nodes * calc(n), over the time per sweep; calc(n) is the sweep of every block with no
    messages (the rows' calc_s)."""
    return [(r["n"], nodes * r["calc_s"] / r[key]) for r in rows if r.get(key) and r.get("calc_s")]


def plot_versions(ax_s, ax_t, rows, versions, nodes, faint=False):
    for name, label, colour, marker in versions:
        sel = sorted((r for r in rows if r["version"] == name), key=lambda r: r["n"])
        if not sel:
            continue
        dashed = name == "threads4" or faint
        meas = speedup(sel, "time_s", nodes)
        model = speedup(sel, "model_s", nodes)
        ax_s.plot([x for x, _ in meas], [y for _, y in meas], marker=marker, linestyle="none", color=colour,
                  label=f"{name}: {label}", alpha=0.6 if dashed else 1)
        ax_s.plot([x for x, _ in model], [y for _, y in model], color=colour, linewidth=1.2,
                  linestyle=":" if dashed else "-")
        ax_t.plot([r["n"] for r in sel], [r["time_s"] * 1e6 for r in sel], marker=marker, linestyle="none",
                  color=colour, alpha=0.6 if dashed else 1)
        ax_t.plot([r["n"] for r in sel], [r["model_s"] * 1e6 for r in sel], color=colour, linewidth=1.2,
                  linestyle=":" if dashed else "-")
        # weft's model (docs/design/pde.md, "weft's model"): thin, dash-dot.
        over = [r for r in sel if r.get("model_overlap_s")]
        if over and not faint:
            ov = speedup(over, "model_overlap_s", nodes)
            ax_s.plot([x for x, _ in ov], [y for _, y in ov], color=colour, linewidth=0.8, linestyle="-.", alpha=0.7)
            ax_t.plot([r["n"] for r in over], [r["model_overlap_s"] * 1e6 for r in over], color=colour,
                      linewidth=0.8, linestyle="-.", alpha=0.7)


def figure_for(rows, nodes, outdir, plt, transport="inproc", raw=()):
    fig, (ax_s, ax_t) = plt.subplots(1, 2, figsize=(11, 4.2))
    plot_versions(ax_s, ax_t, rows, VERSIONS, nodes)
    plot_versions(ax_s, ax_t, raw, RAW_MPI, nodes, faint=True)
    r0 = rows[0]
    over = " (oversubscribed: nodes share CPUs)" if r0.get("oversubscribed") else ""
    if transport == "inproc":
        net = (f"injected {r0.get('injected_alpha_ns', 0) / 1000:g} us + "
               f"{r0.get('injected_beta_ns_per_byte', 0):g} ns/B; measured alpha_R "
               f"{r0.get('alpha_r_ns', 0) / 1000:.1f} us, o after 20 us {r0.get('o_r_ns', 0):.0f} ns")
        where = f"{nodes} in-process nodes on {r0.get('workers', '?')} workers{over}"
    else:
        net = (f"weft's mpi transport: measured alpha_R {r0.get('alpha_r_ns', 0) / 1000:.2f} us, "
               f"o after 20 us {r0.get('o_r_ns', 0) / 1000:.2f} us")
        where = f"{nodes} MPI ranks, one worker each{over}"
    ax_s.set_xscale("log")
    ax_s.axhline(nodes, color="grey", linewidth=0.8, linestyle="--")
    ax_s.set_xlabel("points per node n")
    ax_s.set_ylabel(f"speedup on {nodes} nodes  ({nodes} x calc(n) / time per sweep)")
    ax_s.set_title(where, fontsize=10)
    ax_s.grid(alpha=0.3, which="both")
    ax_s.legend(fontsize=7, frameon=False, loc="upper left",
                title="markers: measured; lines: the paper's eqs. as printed (dash-dot: weft's model)",
                title_fontsize=7)
    ax_t.set_xscale("log")
    ax_t.set_yscale("log")
    ax_t.set_xlabel("points per node n")
    ax_t.set_ylabel("seconds per sweep (us), slowest node, median")
    ax_t.set_title(net, fontsize=9)
    ax_t.grid(alpha=0.3, which="both")
    fig.tight_layout()
    name = f"pde_figure1_{transport}_{nodes}nodes.png"
    fig.savefig(os.path.join(outdir, name), dpi=110)
    plt.close(fig)
    return name


@plot("pde")
def plot_pde(records, outdir, plt):
    rows = [r for r in records if "time_s" in r and "model_s" in r]
    out = []
    for nodes in sorted({r["ranks"] for r in rows if r.get("transport") == "inproc"}):
        sel = [r for r in rows if r.get("transport") == "inproc" and r["ranks"] == nodes]
        name = figure_for(sel, nodes, outdir, plt)
        out.append((name, f"The PDE solver on {nodes} in-process nodes (weft ports, injected latency) as the paper's "
                          "Figure 1: speedup against points per node, measured (markers, medians over interleaved "
                          "rounds) and the model of equations (1)-(3) from alpha, beta and calc(n) measured in the "
                          "same run (lines; dash-dot: weft's model: one latency per exchange, a message's CPU "
                          "overhead o, nodes on a worker hiding each other's waits); right: the seconds per sweep "
                          "on the same axes."))
    for nodes in sorted({r["ranks"] for r in rows if r.get("transport") == "mpi"}):
        sel = [r for r in rows if r.get("transport") == "mpi" and r["ranks"] == nodes]
        raw = [r for r in rows if r.get("transport") == "raw_mpi" and r["ranks"] == nodes and r.get("calc_s")]
        name = figure_for(sel, nodes, outdir, plt, "mpi", raw)
        out.append((name, f"The PDE solver on {nodes} MPI ranks, the weft versions over weft's mpi transport, as the "
                          "paper's Figure 1: speedup against points per node, measured (markers) and the model of "
                          "equations (1)-(3) (lines) from alpha, beta and calc(n) measured on the same job; the raw "
                          "MPI versions beside them (faint, dotted; raw and weft jobs alternate round by round); right: the "
                          "seconds per sweep."))
    return out
