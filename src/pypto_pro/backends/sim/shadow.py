"""Race detection over memory regions with vector clocks.

Each region (one on-chip memory of one core, or one GM tensor) keeps the accesses that may still
race with future ones: a box (byte range on chip, element box in GM; an on-chip window whose bytes are not contiguous, such as a
sub-window of a fractal tile, also lists the exact byte runs it touches), the agent (core x pipe) and
its clock.  A new access races with a recorded one when the boxes overlap, at least one writes,
they are not both atomic, and the recorded access does not happen before the new one:
``vc[agent] >= clock`` fails.  Program order orders accesses of one agent, except two writes on a
DMA pipe (MTE1/MTE2/MTE3/FIX), whose transfers may complete out of order: those need
``bar_<pipe>`` in between, or a chain through another pipe (a DMA agent's own clock component only
advances at such fences).
Two unordered GM writes of identical bytes (every core storing the same flag value) are benign.
Syncs can also order two conflicting accesses of one core *against* program order (a ``phase=Final``
matmul that is not the last write before its Final store releases the store early): the access that
comes later in the program ran first, so the hardware computes something else than the program says.
Such an inversion is reported like a race.
Accesses covered by a later access that happens after them are pruned (they cannot reveal a race
the later access would not), unless they come after it in program order (an inversion still to find).
"""
from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np

from .instr import Access, Instr

# a record: [lo, hi, agent, clock, write, atomic, access, instr, alive]; lo and hi are the first axis of the
# access's box (the whole box is the access's own lo/hi)
_LO, _HI, _AGENT, _CLOCK, _WRITE, _ATOMIC, _ACC, _INS, _ALIVE = range(9)


class Region:
    """The live accesses of one memory region, bucketed along the box's first axis.

    The bucket width is the first access's extent on that axis (a tile's bytes, or its rows), so a
    new access only looks at the few records near it; a record spanning several buckets sits in each."""

    __slots__ = ("width", "buckets")

    def __init__(self, width: int):
        self.width = max(1, width)
        self.buckets: Dict[int, List[list]] = {}


def _covers(lo, hi, rlo, rhi) -> bool:
    """Box [lo, hi) contains box [rlo, rhi)."""
    for a, b, c, d in zip(lo, hi, rlo, rhi):
        if c < a or d > b:
            return False
    return True


def _overlaps(lo, hi, rlo, rhi) -> bool:
    """Boxes [lo, hi) and [rlo, rhi) share an element."""
    for a, b, c, d in zip(lo, hi, rlo, rhi):
        if c >= b or d <= a:
            return False
    return True


def _spans(acc: Access) -> Tuple[Tuple[int, int], ...]:
    """The byte runs of an on-chip access (one run when its bytes are contiguous)."""
    return acc.runs or ((acc.lo[0], acc.hi[0]),)


def _runs_overlap(a: Access, b: Access) -> bool:
    """On-chip accesses ``a`` and ``b``, whose [lo, hi) ranges overlap, share a byte of their runs."""
    if a.runs is None and b.runs is None:
        return True
    x, y = _spans(a), _spans(b)
    i = j = 0
    while i < len(x) and j < len(y):
        if x[i][0] < y[j][1] and y[j][0] < x[i][1]:
            return True
        if x[i][1] <= y[j][1]:
            i += 1
        else:
            j += 1
    return False


def _runs_cover(acc: Access, rlo: int, rhi: int) -> bool:
    """One run of on-chip access ``acc`` contains bytes [rlo, rhi)."""
    return any(lo <= rlo and rhi <= hi for lo, hi in _spans(acc))


class Shadow:
    """All regions of one launch."""

    def __init__(self):
        self.regions: Dict[Tuple, Region] = {}

    def access(self, acc: Access, ins: Instr, agent: int, clock: int, vc: np.ndarray,
               dma: bool) -> List[Tuple[Access, Instr, int, bool]]:
        """Record ``acc`` by ``agent`` at ``clock`` (knowing ``vc``); return ``(access, instr, agent,
        inverted)`` of the earlier accesses it races with, those of other agents first.  ``inverted``: the
        two are ordered, but against program order (see the module docstring).

        Speed: this runs for every access of every instruction.  The common case, two contiguous byte
        ranges on chip (no runs), is decided with integer comparisons only; boxes and runs are compared
        only where one of the two needs it."""
        lo, hi, write, atomic = acc.lo, acc.hi, acc.write, acc.atomic
        region = self.regions.get(acc.region)
        lo0, hi0 = lo[0], hi[0]
        if region is None:
            region = self.regions[acc.region] = Region(hi0 - lo0)
        width = region.width
        first, last = lo0 // width, (hi0 - 1) // width
        one_dim = len(lo) == 1
        plain = one_dim and acc.runs is None  # a contiguous byte range
        core, seq = ins.core, ins.seq
        races = []
        seen = set() if last > first else None
        buckets = region.buckets
        for b in range(first, last + 1):
            records = buckets.get(b)
            if not records:
                continue
            dropped = False
            for rec in records:
                rlo0, rhi0, ragent, rclock, rwrite, ratomic, racc, rins, alive = rec
                if not alive:
                    dropped = True
                    continue
                if seen is not None:
                    if id(rec) in seen:
                        continue
                    seen.add(id(rec))
                if rlo0 >= hi0 or rhi0 <= lo0:
                    continue
                if plain:
                    if racc.runs is not None and not _runs_overlap(acc, racc):
                        continue
                    covers = lo0 <= rlo0 and rhi0 <= hi0
                elif one_dim:
                    if not _runs_overlap(acc, racc):
                        continue
                    covers = _runs_cover(acc, rlo0, rhi0)
                else:
                    if not _overlaps(lo, hi, racc.lo, racc.hi):
                        continue
                    covers = _covers(lo, hi, racc.lo, racc.hi)
                if ragent == agent and not (dma and write and rwrite):
                    # program order of one pipe (which runs its instructions in program order: not later)
                    if covers and (write or not rwrite):
                        rec[_ALIVE] = False
                        dropped = True
                    continue
                hb = vc.item(ragent) >= rclock
                later = rins.seq > seq and rins.core == core  # ran first, comes later in the program
                if (write or rwrite) and not (atomic and ratomic) and not (
                        write and rwrite and acc.digest is not None and acc.digest == racc.digest):
                    if not hb or later:
                        races.append((racc, rins, ragent, hb))  # hb here: ordered, but inverted
                if hb and covers and (write or not rwrite) and not later:
                    rec[_ALIVE] = False
                    dropped = True
            if dropped:
                buckets[b] = [r for r in records if r[_ALIVE]]
        rec = [lo0, hi0, agent, clock, write, atomic, acc, ins, True]
        for b in range(first, last + 1):
            records = buckets.get(b)
            if records is None:
                buckets[b] = [rec]
            else:
                records.append(rec)
        if len(races) > 1:
            races.sort(key=lambda r: r[2] == agent)
        return races
