"""Advice from a simulated launch, each with its evidence: which cores, which tile or group, which lines.

Only advice that can help the core it is about is given (docs/simulator.md, "Suggestions"):

* **buffers** — a core's bound pipe stalls because it overwrites a tile another pipe still uses
  (a ``reuse`` stall, :mod:`.profile`): deepen the tile group (or give a ``make_tile`` tile a second
  buffer), or advance a group that has slots but always uses the same one;
* **grid** — fewer blocks than cores while cores run several tiles each: a larger ``block_dim``;
  a last wave that leaves cores idle;
* **transfer size** — a transfer pipe is bound and most of its time is fixed per-transfer latency;
* **scalar** — the scalar unit is a core's busiest pipe.

What cannot be helped is said as a *note* instead: one tile per core (a single dependency chain,
nothing to overlap), a core that waits for another core, a pipe that waits for the data it consumes.
Alike cores (same role, same finding) are merged into one line naming the first and how many more.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from .profile import CoreProfile, Stall, line_of

#: a reuse stall is worth advice once it costs this share of the core's span
STALL_SHARE = 0.10


class TileInfo(NamedTuple):
    """What the kernel declares about a tile name: its group (None for ``make_tile``) and depth."""

    group: Optional[str]
    depth: int
    line: str


@dataclass
class Advice:
    """One suggestion (or, with ``note``, an explanation) about ``cores``."""

    key: Tuple
    text: str
    why: str
    cores: List[str] = field(default_factory=list)
    cycles: int = 0
    note: bool = False

    def render(self) -> str:
        who = self.cores[0] + (f" (+{len(self.cores) - 1} more cores alike)" if len(self.cores) > 1 else "")
        return f"{who}: {self.text} -- {self.why}"


def _op(ins) -> str:
    return f"pl.{ins.op} at {line_of(ins)} ({ins.pipe})"


def _buffers(p: CoreProfile, tiles: Dict[str, TileInfo]) -> List[Advice]:
    """Advice for the reuse stalls of core ``p``'s bound pipe, per (stalled line, tile, other line)."""
    by: Dict[Tuple, List[Stall]] = {}
    for s in p.stalls:
        if s.cause == "reuse":
            by.setdefault((s.ins.loc, s.tile, s.other.loc), []).append(s)
    out = []
    for (loc, tile, _), stalls in by.items():
        cycles = sum(s.cycles for s in stalls)
        if cycles < STALL_SHARE * p.span or cycles < 32:
            continue
        ins, other = stalls[0].ins, stalls[0].other
        info = tiles.get(tile, TileInfo(None, 1, "?"))
        why = (f"its {p.bound} pipe (the busiest) idles {cycles} cycles ({100 * cycles / max(1, p.span):.0f}% of "
               f"the core's span) before {_op(ins)} overwrites tile {tile} while {_op(other)} still uses it")
        if info.group is None:
            text = (f"double-buffer tile {tile} (declared at {info.line}): a pl.make_tile_group of depth 2 "
                    f"with next() per iteration")
        elif info.depth >= 2 and len(p.written.get(loc, ())) == 1:
            text = (f"advance tile group {info.group} (depth {info.depth}, {info.line}) with next() once per "
                    f"iteration: {_op(ins)} always writes slot {tile}")
        else:
            text = f"deepen tile group {info.group} ({info.line}) from depth {info.depth} to {info.depth + 1}"
            if info.depth == 1:
                text += " and call next() once per iteration"
        out.append(Advice(("buffers", loc, tile, info.group), text, why, [p.label], cycles))
    return out


def _notes(p: CoreProfile, labels: Sequence[str]) -> List[Advice]:
    """What limits core ``p`` that no buffering changes."""
    out = []
    if p.repeats == 1:
        out.append(Advice(("one-tile",), "one tile per core: nothing to overlap",
                          "every data op runs once on the core, so its loads, compute and stores form one "
                          "dependency chain; deeper tile groups cannot shorten it", [p.label],
                          note=True))
    waits: Dict[Tuple, int] = {}
    firsts: Dict[Tuple, Stall] = {}
    for s in p.stalls:
        if s.cause == "cross-core":
            key = ("cross-core", s.ins.loc, s.other.loc)
        elif s.cause == "data" and p.repeats > 1 and not s.first:
            key = ("data", s.ins.loc, s.other.loc)
        else:
            continue
        waits[key] = waits.get(key, 0) + s.cycles
        firsts.setdefault(key, s)
    for key, cycles in waits.items():
        if cycles < STALL_SHARE * p.span:
            continue
        s = firsts[key]
        if key[0] == "cross-core":
            text = f"{p.bound} waits {cycles} cycles for another core"
            why = (f"{_op(s.ins)} starts only after {_op(s.other)} on {labels[s.other.core]} releases it (cross-core "
                   f"event): this core's time follows that core's work")
        else:
            text = f"{p.bound} waits {cycles} cycles for data"
            why = (f"{_op(s.ins)} reads tile {s.tile}, which {_op(s.other)} writes: the producer's pipe sets "
                   f"the pace, more buffers do not")
        out.append(Advice(key, text, why, [p.label], cycles, note=True))
    return out


def _transfer_size(p: CoreProfile) -> List[Advice]:
    if p.bound not in ("MTE2", "MTE3", "MTE1", "FIX") or p.repeats < 2 or p.busy_fraction < 0.5:
        return []
    busy = p.busy[p.bound]
    if not busy or p.latency < 0.5 * busy:
        return []
    ins = p.typical.get(p.bound)
    text = f"move more bytes per transfer on {p.bound} (larger tiles, fewer {_op(ins) if ins else 'transfers'})"
    why = (f"{p.bound} is the busiest pipe ({100 * p.busy_fraction:.0f}% busy) and {p.latency} of its {busy} busy "
           f"cycles ({100 * p.latency / busy:.0f}%) are the fixed latency each transfer pays in the cost model")
    return [Advice(("transfer", p.bound, ins.loc if ins else None), text, why, [p.label], p.latency)]


def _scalar(p: CoreProfile) -> List[Advice]:
    if p.bound != "S":
        return []
    ins = p.typical.get("S")
    where = f" (most often {_op(ins)})" if ins else ""
    return [Advice(("scalar", ins.loc if ins else None), "scalar-bound: use larger tiles (fewer, bigger "
                   "instructions) or fewer scalar ops per tile",
                   f"the scalar unit is the core's busiest pipe{where}", [p.label], p.busy["S"])]


def _grid(profiles: Sequence[CoreProfile], block_dim: int, capacity: int) -> List[Advice]:
    most = max((p.repeats for p in profiles), default=0)
    if block_dim < capacity:
        if most > 1:
            return [Advice(("grid",), f"a larger block_dim (up to {capacity}) spreads the work over more cores",
                           f"only {block_dim} of {capacity} cores run, and a core runs up to {most} tiles one after "
                           f"another", ["launch"])]
        return [Advice(("grid-note",), f"only {block_dim} of {capacity} cores run",
                       "each core has one tile: more blocks would have no tiles to work on", ["launch"], note=True)]
    if block_dim % capacity:
        return [Advice(("waves",), f"make block_dim a multiple of {capacity}",
                       f"block_dim {block_dim} leaves {capacity - block_dim % capacity} cores idle in the last wave",
                       ["launch"])]
    return []


def advise(profiles: Sequence[CoreProfile], labels: Sequence[str], tiles: Dict[str, TileInfo], block_dim: int,
           capacity: int) -> Tuple[List[Advice], List[Advice]]:
    """(suggestions, notes), alike cores merged, the costliest first."""
    merged: Dict[Tuple, Advice] = {}
    order: List[Tuple] = []
    for p in profiles:
        for a in _buffers(p, tiles) + _transfer_size(p) + _scalar(p) + _notes(p, labels):
            key = (a.note, a.key) if a.key == ("one-tile",) else (a.note, p.role, a.key)
            found = merged.get(key)
            if found is None:
                merged[key] = a
                order.append(key)
            else:
                found.cores.append(p.label)
                found.cycles += a.cycles
    items = [merged[k] for k in order] + _grid(profiles, block_dim, capacity)
    # buffers first (they remove waits outright), then per-transfer overheads, then the grid
    rank = {"buffers": 0, "scalar": 1, "transfer": 2}
    tips = sorted((a for a in items if not a.note), key=lambda a: (rank.get(a.key[0], 3), -a.cycles))
    notes = [a for a in items if a.note]
    return tips, notes


__all__ = ["Advice", "TileInfo", "advise", "STALL_SHARE"]
