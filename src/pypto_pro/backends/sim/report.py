"""The simulator's report (``kernel.last_report``; API.md C3): cycles, pipe use, hazards, trace."""
from __future__ import annotations

import functools
import json
from typing import Dict, List, Sequence, Tuple

from .costs import CostParams
from .instr import PIPES, Hazard, Instr


def _union(intervals: List[Tuple[int, int]]) -> List[Tuple[int, int]]:
    out: List[Tuple[int, int]] = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        elif e > s:
            out.append((s, e))
    return out


def _overlap(a: List[Tuple[int, int]], b: List[Tuple[int, int]]) -> int:
    """Cycles during which both interval sets (each a sorted disjoint union) are busy."""
    i = j = total = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


class SimReport:
    """What one simulated launch did: ``total_cycles``, ``pipe_busy``, ``per_core``, ``hazards``.

    ``str(report)`` is a readable summary; ``save_trace(path)`` writes Chrome-trace JSON (Perfetto),
    ``save_timeline(path)`` a PNG swimlane picture (needs matplotlib, the ``plot`` extra)."""

    def __init__(self, kernel: str, arch: str, block_dim: int, core_num: int, labels: Sequence[str],
                 blocks: Sequence[int], streams: List[List[Instr]], params: CostParams, total_cycles: int,
                 hazards: List[Hazard]):
        self.kernel = kernel
        self.arch = arch
        self.block_dim = block_dim
        #: how many blocks run at once: AIV cores for a vector-only kernel, AI cores otherwise
        self.core_num = core_num
        self.labels = list(labels)
        self.params = params
        self.total_cycles = int(total_cycles)
        self.hazards = list(hazards)
        self.instructions = [ins for stream in streams for ins in stream]
        self._streams = streams
        self.per_core: List[Dict] = []
        self.pipe_busy: Dict[str, int] = {p: 0 for p in PIPES}
        for ci, stream in enumerate(streams):
            busy = {p: 0 for p in PIPES}
            for ins in stream:
                busy["S" if ins.pipe == "ALL" else ins.pipe] += ins.end - ins.start
            for p in PIPES:
                self.pipe_busy[p] += busy[p]
            start = min((ins.start for ins in stream), default=0)
            end = max((ins.end for ins in stream), default=0)
            self.per_core.append({"core": self.labels[ci], "block": blocks[ci], "start": start, "end": end,
                                  "instructions": len(stream), "busy": busy})

    @functools.cached_property
    def _intervals(self) -> List[Dict[str, List[Tuple[int, int]]]]:
        """Per core and pipe, the busy intervals as a sorted disjoint union (built when first needed)."""
        out = []
        for stream in self._streams:
            spans: Dict[str, List[Tuple[int, int]]] = {p: [] for p in PIPES}
            for ins in stream:
                spans["S" if ins.pipe == "ALL" else ins.pipe].append((ins.start, ins.end))
            out.append({p: _union(v) for p, v in spans.items()})
        return out

    # ------------------------------------------------------------------ summary
    @property
    def bound_pipe(self) -> str:
        """The pipe with the most busy cycles over all cores (the one bounding the kernel)."""
        return max(PIPES, key=lambda p: self.pipe_busy[p])

    def utilisation(self) -> Dict[str, float]:
        """Busy cycles of each pipe over (makespan x cores)."""
        denom = max(1, self.total_cycles * max(1, len(self.per_core)))
        return {p: self.pipe_busy[p] / denom for p in PIPES}

    def overlap(self, pipe_a: str, pipe_b: str) -> int:
        """Cycles during which both pipes are busy on the same core, summed over cores."""
        return sum(_overlap(iv[pipe_a], iv[pipe_b]) for iv in self._intervals)

    def suggestions(self) -> List[str]:
        """Advice derived from the schedule (no overlap between loads and compute, idle cores, ...)."""
        tips = []
        bound = self.bound_pipe
        for other in PIPES:
            if other in (bound, "S") or bound == "S":
                continue
            busy_other = sum(c["busy"][other] for c in self.per_core)
            idle = busy_other - self.overlap(bound, other)
            if busy_other and idle > 0.2 * max(1, self.pipe_busy[bound]):
                tips.append(f"{bound} idle while {other} works ({idle} of {busy_other} cycles): deepen the TileGroup "
                            f"(depth >= 2, next() per iteration) so {bound} transfers overlap {other}")
        if self.block_dim < self.core_num:
            tips.append(f"only {self.block_dim} of {self.core_num} cores are used: a larger block_dim finishes "
                        f"sooner if there is enough work")
        elif self.block_dim % self.core_num:
            tips.append(f"block_dim {self.block_dim} is not a multiple of {self.core_num} cores: the last wave "
                        f"leaves cores idle")
        if self.bound_pipe == "S":
            tips.append("scalar-bound: many small instructions; use larger tiles")
        return tips

    def __str__(self) -> str:
        us = self.params.cycles_to_us(self.total_cycles)
        util = self.utilisation()
        lines = [f"sim report: kernel {self.kernel} on {self.arch}, block_dim {self.block_dim} "
                 f"({len(self.per_core)} cores; {self.core_num} blocks run at once)",
                 f"  total: {self.total_cycles} cycles (~{us:.2f} us at {self.params.clock_ghz} GHz, estimated)",
                 f"  bound by pipe {self.bound_pipe}",
                 "  pipe   busy cycles  utilisation"]
        for p in PIPES:
            lines.append(f"  {p:<5} {self.pipe_busy[p]:>12}  {100 * util[p]:6.1f}%")
        if self.hazards:
            lines.append(f"  hazards: {len(self.hazards)}")
            lines += [f"    - {h.summary()}" for h in self.hazards]
        else:
            lines.append("  hazards: none")
        tips = self.suggestions()
        if tips:
            lines.append("  suggestions:")
            lines += [f"    - {t}" for t in tips]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<SimReport {self.kernel}: {self.total_cycles} cycles, bound by {self.bound_pipe}, " \
               f"{len(self.hazards)} hazards>"

    # ------------------------------------------------------------------ outputs
    def trace_events(self) -> List[Dict]:
        """Chrome-trace events: one process per core, one thread per pipe, one "X" event per instruction."""
        to_us = self.params.cycles_to_us
        events: List[Dict] = []
        for ci, label in enumerate(self.labels):
            events.append({"ph": "M", "name": "process_name", "pid": ci, "args": {"name": label}})
            for ti, p in enumerate(PIPES):
                events.append({"ph": "M", "name": "thread_name", "pid": ci, "tid": ti, "args": {"name": p}})
        for ins in self.instructions:
            pipe = "S" if ins.pipe == "ALL" else ins.pipe
            args = {"cycles": ins.end - ins.start, "start_cycle": ins.start}
            if ins.loc is not None:
                args["line"] = f"{ins.loc.filename}:{ins.loc.lineno}"
                args["source"] = ins.loc.source_line.strip()
            events.append({"ph": "X", "name": ins.op, "pid": ins.core, "tid": PIPES.index(pipe),
                           "ts": to_us(ins.start), "dur": to_us(ins.end - ins.start), "args": args})
        return events

    def save_trace(self, path) -> None:
        """Write Chrome-trace JSON (open it in https://ui.perfetto.dev or chrome://tracing)."""
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"traceEvents": self.trace_events(), "displayTimeUnit": "ns",
                       "otherData": {"kernel": self.kernel, "arch": self.arch, "total_cycles": self.total_cycles}}, f)

    def save_timeline(self, path, *, max_cores: int = 8, title: str = None) -> None:
        """Write a PNG swimlane picture (one lane per core x pipe) of the first ``max_cores`` cores."""
        from .timeline import draw_timeline

        draw_timeline(self, path, max_cores=max_cores, title=title)
