"""PNG swimlanes of a simulated launch (matplotlib, from the optional ``plot`` extra).

Whole blocks only: a block's AIC and AIVs are drawn together or not at all (a cube feeding one of its
two vector cores would mislead), and the picture says which blocks and cores it leaves out.  Bars wide
enough to hold text are labelled with the op and its kernel line."""
from __future__ import annotations

import os
from typing import Dict, List, Optional, Sequence, Tuple

from .instr import PIPES

COLORS = {"S": "#9e9e9e", "MTE2": "#1f77b4", "MTE1": "#17becf", "M": "#d62728", "V": "#2ca02c",
          "MTE3": "#ff7f0e", "FIX": "#9467bd"}
#: bars of one op on a lane closer than this share of the picture's width are labelled as one run
RUN_GAP = 0.01
FONT = 6.0


def cores_to_draw(blocks: Sequence[int], max_cores: int) -> Tuple[List[int], List[int]]:
    """(core indices drawn, blocks left out): whole blocks in order while they fit in ``max_cores``
    (the first block always, even when it alone has more cores)."""
    by_block: Dict[int, List[int]] = {}
    for ci, b in enumerate(blocks):
        by_block.setdefault(b, []).append(ci)
    drawn: List[int] = []
    left: List[int] = []
    for b in sorted(by_block):
        if left or (drawn and len(drawn) + len(by_block[b]) > max_cores):
            left.append(b)
        else:
            drawn += by_block[b]
    return drawn, left


def _ranges(numbers: List[int]) -> str:
    """ "2-3, 7" for sorted ints."""
    out, i = [], 0
    while i < len(numbers):
        j = i
        while j + 1 < len(numbers) and numbers[j + 1] == numbers[j] + 1:
            j += 1
        out.append(str(numbers[i]) if i == j else f"{numbers[i]}-{numbers[j]}")
        i = j + 1
    return ", ".join(out)


def omitted_text(report, drawn: List[int], left: List[int]) -> Optional[str]:
    """The note printed under the picture about what it leaves out (None when it shows everything)."""
    if not left:
        return None
    missing = len(report.labels) - len(drawn)
    return (f"left out: block{'s' if len(left) > 1 else ''} {_ranges(left)} ({missing} of {len(report.labels)} "
            f"cores); save_timeline(path, max_cores={len(report.labels)}) draws every core")


def _runs(instrs, gap: float) -> List[Tuple[int, int, str]]:
    """(start, end, "op:line[/line] xN") of each run of one op's bars on a lane with gaps below ``gap``."""
    out: List[Tuple[int, int, str]] = []
    run: List = []

    def flush():
        if run:
            lines = sorted({i.loc.lineno for i in run if i.loc is not None})
            where = ":" + "/".join(map(str, lines[:3])) + ("/..." if len(lines) > 3 else "") if lines else ""
            out.append((run[0].start, run[-1].end, f"{run[0].op}{where}" + (f" x{len(run)}" if len(run) > 1 else "")))

    for i in sorted(instrs, key=lambda i: i.start):
        if i.sync is not None and not i.accesses:  # flags and locks between transfers do not split a run
            continue
        if run and (i.op != run[-1].op or i.start - run[-1].end > gap):
            flush()
            run = []
        run.append(i)
    flush()
    return out


def draw_timeline(report, path, *, max_cores: int = 8, title: Optional[str] = None) -> List[str]:
    """Draw one lane per (core, pipe) that did any work; bars are instructions, x is cycles.  Returns the
    labels of the cores drawn."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("save_timeline needs matplotlib: pip install 'pypto-portable[plot]' "
                          "(or pip install matplotlib); save_trace(path) works without it") from None
    drawn, left = cores_to_draw(report.blocks, max_cores)
    chosen = set(drawn)
    per_lane: Dict[Tuple[int, str], list] = {}
    for ins in report.instructions:
        if ins.core in chosen and ins.end > ins.start:
            per_lane.setdefault((ins.core, "S" if ins.pipe == "ALL" else ins.pipe), []).append(ins)
    lanes = [(f"{report.labels[ci]} {p}", p, per_lane[ci, p]) for ci in drawn for p in PIPES if (ci, p) in per_lane]
    note = omitted_text(report, drawn, left)
    width = max(1, report.total_cycles)
    fig, ax = plt.subplots(figsize=(12, 0.4 * len(lanes) + 1.6 + (0.3 if note else 0)))
    for y, (_, pipe, instrs) in enumerate(lanes):
        ax.broken_barh([(i.start, i.end - i.start) for i in instrs], (y - 0.38, 0.76), facecolors=COLORS[pipe],
                       edgecolor="black", linewidth=0.3)
    fig.tight_layout()
    px_per_cycle = ax.get_window_extent().width / width
    for y, (_, pipe, instrs) in enumerate(lanes):
        for start, end, text in _runs(instrs, RUN_GAP * width):
            if (end - start) * px_per_cycle >= len(text) * FONT * 0.62 * fig.dpi / 72:
                ax.text((start + end) / 2, y, text, ha="center", va="center", fontsize=FONT, clip_on=True)
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels([name for name, _, _ in lanes], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, width)
    ax.set_xlabel("cycles (estimated)" + (f"\n{note}" if note else ""), color="black")
    source = ""
    first = next((i for i in report.instructions if i.loc is not None), None)
    if first is not None:
        source = f" ({os.path.basename(first.loc.filename)}; bars labelled op:line)"
    ax.set_title(title or f"{report.kernel}: {report.total_cycles} cycles, bound by {report.bound_pipe}{source}",
                 fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [report.labels[ci] for ci in drawn]
