"""Race detection over memory regions with vector clocks.

Each region (one on-chip memory of one core, or one GM tensor) keeps the accesses that may still
race with future ones: a box (byte range on chip, element box in GM), the agent (core x pipe) and
its clock.  A new access races with a recorded one when the boxes overlap, at least one writes,
they are not both atomic, and the recorded access does not happen before the new one:
``vc[agent] >= clock`` fails.  Program order orders accesses of one agent, except two writes on a
DMA pipe (MTE1/MTE2/MTE3/FIX), whose transfers may complete out of order: those need a barrier or
a release of that pipe in between (the agent's own clock component only advances at such fences).
Accesses covered by a later access that happens after them are pruned (they cannot reveal a race
the later access would not).
"""
from __future__ import annotations

from typing import Dict, Iterator, List, Tuple

import numpy as np

from .instr import Access, Instr


class Region:
    """Growable arrays of the live accesses of one memory region."""

    __slots__ = ("n", "lo", "hi", "agent", "clock", "write", "atomic", "refs")

    def __init__(self, dims: int):
        cap = 8
        self.n = 0
        self.lo = np.zeros((cap, dims), np.int64)
        self.hi = np.zeros((cap, dims), np.int64)
        self.agent = np.zeros(cap, np.int64)
        self.clock = np.zeros(cap, np.int64)
        self.write = np.zeros(cap, bool)
        self.atomic = np.zeros(cap, bool)
        self.refs: List[Tuple[Access, Instr]] = []

    def append(self, acc: Access, ins: Instr, agent: int, clock: int) -> None:
        n = self.n
        if n == self.agent.size:
            for name in ("lo", "hi", "agent", "clock", "write", "atomic"):
                old = getattr(self, name)
                new = np.zeros((2 * old.shape[0],) + old.shape[1:], old.dtype)
                new[:n] = old
                setattr(self, name, new)
        self.lo[n] = acc.lo
        self.hi[n] = acc.hi
        self.agent[n] = agent
        self.clock[n] = clock
        self.write[n] = acc.write
        self.atomic[n] = acc.atomic
        self.refs.append((acc, ins))
        self.n = n + 1

    def keep(self, mask: np.ndarray) -> None:
        n = int(mask.sum())
        for name in ("lo", "hi", "agent", "clock", "write", "atomic"):
            arr = getattr(self, name)
            arr[:n] = arr[:self.n][mask]
        self.refs = [r for r, k in zip(self.refs, mask) if k]
        self.n = n


class Shadow:
    """All regions of one launch."""

    def __init__(self):
        self.regions: Dict[Tuple, Region] = {}

    def access(self, acc: Access, ins: Instr, agent: int, clock: int, vc: np.ndarray,
               dma: bool) -> Iterator[Tuple[Access, Instr, int]]:
        """Record ``acc`` by ``agent`` at ``clock`` (knowing ``vc``); yield the earlier accesses it races with."""
        region = self.regions.get(acc.region)
        if region is None:
            region = self.regions[acc.region] = Region(len(acc.lo))
        n = region.n
        if n:
            lo = np.asarray(acc.lo)
            hi = np.asarray(acc.hi)
            rlo, rhi = region.lo[:n], region.hi[:n]
            if lo.size == 1:
                overlap = (rlo[:, 0] < hi[0]) & (rhi[:, 0] > lo[0])
            else:
                overlap = np.all((rlo < hi) & (rhi > lo), axis=1)
            idx = np.flatnonzero(overlap)
            if idx.size:
                agents = region.agent[idx]
                writes = region.write[idx]
                hb = vc[agents] >= region.clock[idx]
                same = agents == agent
                hb |= (same & ~writes) if (dma and acc.write) else same
                conflict = writes | acc.write
                if acc.atomic:
                    conflict &= ~region.atomic[idx]
                bad = idx[conflict & ~hb]
                for i in sorted(bad, key=lambda k: region.agent[k] == agent):  # other pipes first
                    old_acc, old_ins = region.refs[i]
                    yield old_acc, old_ins, int(region.agent[i])
                if lo.size == 1:
                    covered = (rlo[idx, 0] >= lo[0]) & (rhi[idx, 0] <= hi[0])
                else:
                    covered = np.all((rlo[idx] >= lo) & (rhi[idx] <= hi), axis=1)
                drop = covered & hb & (~writes | acc.write)
                if drop.any():
                    mask = np.ones(n, bool)
                    mask[idx[drop]] = False
                    region.keep(mask)
        region.append(acc, ins, agent, clock)
