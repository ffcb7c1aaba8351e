"""The simulator's report (``kernel.last_report``; docs/contract.md): cycles, pipe use, hazards, trace."""
from __future__ import annotations

import functools
import json
from typing import Dict, List, Optional, Sequence, Tuple

from .advice import Advice, TileInfo, advise
from .costs import CostParams
from .instr import PIPES, Hazard, Instr
from .profile import MEMORY_ORDER, CoreProfile, peak_rates, profile
from .trace import trace_events


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
                 hazards: List[Hazard], tiles: Optional[Dict[str, TileInfo]] = None,
                 summaries: Optional[Sequence[Tuple[Dict[str, int], int, int]]] = None,
                 counts: Optional[Sequence[int]] = None):
        """``summaries``: per core (busy cycles per pipe, start, end) when the replay has them (it counts
        them as it goes, cheaper than a pass over every instruction); computed from ``streams`` otherwise.
        ``counts``: instructions per core, when ``streams`` builds its records only on first access (the
        compiled fast path's; then so does :attr:`instructions`)."""
        self.kernel = kernel
        self.arch = arch
        self.block_dim = block_dim
        #: how many blocks run at once: AIV cores for a vector-only kernel, AI cores otherwise
        self.core_num = core_num
        self.labels = list(labels)
        self.blocks = list(blocks)
        #: tile name -> its group and depth (names the group in advice)
        self.tiles: Dict[str, TileInfo] = dict(tiles or {})
        self.params = params
        self.total_cycles = int(total_cycles)
        self.hazards = list(hazards)
        self._streams = streams
        self.per_core: List[Dict] = []
        self.pipe_busy: Dict[str, int] = {p: 0 for p in PIPES}
        for ci in range(len(streams)):
            if summaries is not None:
                busy, start, end = summaries[ci]
            else:
                stream = streams[ci]
                busy = {p: 0 for p in PIPES}
                for ins in stream:
                    busy["S" if ins.pipe == "ALL" else ins.pipe] += ins.end - ins.start
                start = min((ins.start for ins in stream), default=0)
                end = max((ins.end for ins in stream), default=0)
            for p in PIPES:
                self.pipe_busy[p] += busy[p]
            self.per_core.append({"core": self.labels[ci], "block": blocks[ci], "start": start, "end": end,
                                  "instructions": counts[ci] if counts is not None else len(streams[ci]),
                                  "busy": busy})

    @functools.cached_property
    def instructions(self) -> List[Instr]:
        """Every executed instruction, core by core in program order."""
        return [ins for stream in self._streams for ins in stream]

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

    # ------------------------------------------------------------------ per core
    @functools.cached_property
    def profiles(self) -> List[CoreProfile]:
        """Per core that ran something: bound pipe, busy fraction, bytes moved, stalls (:mod:`.profile`)."""
        return profile(self.labels, self.blocks, self._streams, self.params)

    @property
    def critical_core(self) -> Optional[CoreProfile]:
        """The most loaded core: the one whose busiest pipe has the most busy cycles (the last to finish
        on ties).  A core that finishes last only because it waits for another is not it."""
        return max(self.profiles, key=lambda p: (p.busy[p.bound], p.end), default=None)

    @property
    def bound_pipe(self) -> str:
        """The busiest pipe of the most loaded core (:attr:`critical_core`); pipes of different cores never
        overlap, so this is not judged from totals summed over cores."""
        crit = self.critical_core
        return crit.bound if crit is not None else "S"

    def utilisation(self) -> Dict[str, float]:
        """Busy cycles of each pipe over (makespan x cores)."""
        denom = max(1, self.total_cycles * max(1, len(self.per_core)))
        return {p: self.pipe_busy[p] / denom for p in PIPES}

    def overlap(self, pipe_a: str, pipe_b: str) -> int:
        """Cycles during which both pipes are busy on the same core, summed over cores."""
        return sum(_overlap(iv[pipe_a], iv[pipe_b]) for iv in self._intervals)

    def roofline(self) -> List[Dict]:
        """Per core: the bound pipe, its busy fraction of the core's span, the bytes moved per memory,
        the work of the bound pipe per cycle of the span and the arch's peak rate of that pipe."""
        peaks = peak_rates(self.params)
        out = []
        for p in self.profiles:
            peak, unit = peaks[p.bound]
            rate = p.work[p.bound] / p.span if p.span else 0.0
            out.append({"core": p.label, "block": p.block, "bound": p.bound, "span": p.span,
                        "busy_fraction": p.busy_fraction, "moved": dict(p.moved), "rate": rate, "peak": peak,
                        "unit": unit, "peak_fraction": rate / peak if peak else 0.0,
                        "peaks": {pipe: v for pipe, (v, _) in peaks.items()}})
        return out

    @functools.cached_property
    def _advice(self) -> Tuple[List[Advice], List[Advice]]:
        return advise(self.profiles, self.labels, self.tiles, self.block_dim, self.core_num)

    def advice(self) -> List[Advice]:
        """The suggestions as :class:`~.advice.Advice` records (text, evidence, cores, stall cycles)."""
        return list(self._advice[0])

    def suggestions(self) -> List[str]:
        """Advice that can help, each naming its cores, tile or group and lines, and why (docs/simulator.md)."""
        return [a.render() for a in self._advice[0]]

    def notes(self) -> List[str]:
        """What limits cores that no advice changes (one tile per core, waits for another core, ...)."""
        return [a.render() for a in self._advice[1]]

    def _roofline_lines(self, limit: int = 8) -> List[str]:
        """One line per group of alike cores (same role, bound pipe, busy fraction and bytes)."""
        groups: Dict[Tuple, List[Dict]] = {}
        for row in self.roofline():
            key = (row["core"].split()[-1].rstrip("0123456789"), row["bound"], round(20 * row["busy_fraction"]),
                   tuple(row["moved"].values()))
            groups.setdefault(key, []).append(row)
        lines = []
        for rows in list(groups.values())[:limit]:
            r = rows[0]
            moved = ", ".join(f"{m} {_size(r['moved'][m])}" for m in MEMORY_ORDER if r["moved"][m])
            who = r["core"] + (f" (+{len(rows) - 1} alike)" if len(rows) > 1 else "")
            lines.append(f"    {who}: {r['bound']}-bound, busy {100 * r['busy_fraction']:.0f}% of {r['span']} "
                         f"cycles, {r['rate']:.1f} of {r['peak']:g} {r['unit']} peak "
                         f"({100 * r['peak_fraction']:.0f}%); moved {moved or 'nothing'}")
        if len(groups) > limit:
            lines.append(f"    ... {len(groups) - limit} more kinds of core (report.roofline() lists every core)")
        return lines

    def __str__(self) -> str:
        us = self.params.cycles_to_us(self.total_cycles)
        util = self.utilisation()
        crit = self.critical_core
        lines = [f"sim report: kernel {self.kernel} on {self.arch}, block_dim {self.block_dim} "
                 f"({len(self.per_core)} cores; {self.core_num} blocks run at once)",
                 f"  total: {self.total_cycles} cycles (~{us:.2f} us at {self.params.clock_ghz} GHz, estimated)",
                 f"  bound by pipe {self.bound_pipe}" + (f" on {crit.label}, the most loaded core"
                                                         if crit is not None else ""),
                 "  pipe   busy cycles  utilisation  (summed over cores)"]
        for p in PIPES:
            lines.append(f"  {p:<5} {self.pipe_busy[p]:>12}  {100 * util[p]:6.1f}%")
        lines.append("  roofline per core (bound pipe, its busy share of the core's span, its rate vs the arch's "
                     "peak, bytes moved):")
        lines += self._roofline_lines()
        if self.hazards:
            lines.append(f"  hazards: {len(self.hazards)}")
            lines += [f"    - {h.summary()}" for h in self.hazards]
        else:
            lines.append("  hazards: none")
        tips = self.suggestions()
        if tips:
            lines.append("  suggestions:")
            lines += [f"    - {t}" for t in tips]
        notes = self.notes()
        if notes:
            lines.append("  notes (nothing to change for these):")
            lines += [f"    - {t}" for t in notes]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<SimReport {self.kernel}: {self.total_cycles} cycles, bound by {self.bound_pipe}, " \
               f"{len(self.hazards)} hazards>"

    # ------------------------------------------------------------------ outputs
    def trace_events(self) -> List[Dict]:
        """Chrome-trace events: one process per core, one thread per pipe, one "X" slice per instruction
        (args: op, pipe, line, source, tiles, bytes) and flow arrows from each release to the wait it
        satisfied (flags, mutex hand-overs between pipes, cross-core events, phase flags)."""
        return trace_events(self)

    def save_trace(self, path) -> None:
        """Write Chrome-trace JSON (open it in https://ui.perfetto.dev or chrome://tracing)."""
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"traceEvents": self.trace_events(), "displayTimeUnit": "ns",
                       "otherData": {"kernel": self.kernel, "arch": self.arch, "total_cycles": self.total_cycles}}, f)

    def save_timeline(self, path, *, max_cores: int = 8, title: str = None) -> List[str]:
        """Write a PNG swimlane picture (one lane per core x pipe) of the first whole blocks that fit in
        ``max_cores`` cores (never part of a block; the picture names the blocks it leaves out); long bars
        are labelled op:line.  Returns the labels of the cores drawn."""
        from .timeline import draw_timeline

        return draw_timeline(self, path, max_cores=max_cores, title=title)


def _size(n: int) -> str:
    """Bytes as B / KiB / MiB."""
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    if n >= 1 << 10:
        return f"{n / (1 << 10):.1f} KiB"
    return f"{n} B"
