"""PNG swimlanes of a simulated launch (matplotlib, from the optional ``plot`` extra)."""
from __future__ import annotations

from typing import Optional

from .instr import PIPES

COLORS = {"S": "#9e9e9e", "MTE2": "#1f77b4", "MTE1": "#17becf", "M": "#d62728", "V": "#2ca02c",
          "MTE3": "#ff7f0e", "FIX": "#9467bd"}


def draw_timeline(report, path, *, max_cores: int = 8, title: Optional[str] = None) -> None:
    """Draw one lane per (core, pipe) that did any work; bars are instructions, x is cycles."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("save_timeline needs matplotlib: pip install 'pypto-portable[plot]' "
                          "(or pip install matplotlib); save_trace(path) works without it") from None
    lanes = []
    for ci in range(min(max_cores, len(report.labels))):
        for p in PIPES:
            bars = [(ins.start, max(ins.end - ins.start, 1)) for ins in report.instructions
                    if ins.core == ci and (ins.pipe if ins.pipe != "ALL" else "S") == p and ins.end > ins.start]
            if bars:
                lanes.append((f"{report.labels[ci]} {p}", p, bars))
    fig, ax = plt.subplots(figsize=(11, 0.38 * len(lanes) + 1.4))
    for y, (_, pipe, bars) in enumerate(lanes):
        ax.broken_barh(bars, (y - 0.38, 0.76), facecolors=COLORS[pipe], edgecolor="black", linewidth=0.3)
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels([name for name, _, _ in lanes], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, max(1, report.total_cycles))
    ax.set_xlabel("cycles (estimated)")
    ax.set_title(title or f"{report.kernel}: {report.total_cycles} cycles, bound by {report.bound_pipe}")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
