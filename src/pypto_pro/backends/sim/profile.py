"""Per-core profile of a simulated launch: bottleneck, roofline numbers and the stalls of the bound pipe.

Everything here is computed *per core* (pipes of different cores never overlap, so totals summed
over cores say nothing about what one core waits for).  For each core:

* the **bound pipe**: the pipe with the most busy cycles on that core, and its busy fraction of the
  core's span (first instruction to last);
* the **bytes moved** per memory (GM read / written, L1, UB, L0A/L0B/L0C) and the **work** of each
  pipe (bytes for the transfer and vector pipes, MACs for the cube), against the arch's peak rate;
* the **stalls of the bound pipe**: every gap before one of its data instructions, attributed to what
  ended it.  A gap ends with a wait (a flag, a mutex hand-over, a cross-core event) or with the
  scalar unit's issue; the analysis looks, in program order, for the earlier instruction of another
  pipe the stalled one depends on through the bytes it touches:

  - ``reuse`` (write after read/write): the stalled instruction overwrites a tile another pipe still
    used, the previous contents of a single buffer.  More buffers (a deeper tile group) remove it;
  - ``data`` (read after write): it needs what another pipe produces; buffers cannot remove it;
  - ``cross-core``: its wait was released by another core;
  - ``issue``: nothing it waited for explains the gap: the scalar unit issued it late.

How many times each data line runs on a core (``repeats``) tells whether there is anything to
overlap at all: with one tile per core, load, compute and store form a single dependency chain.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from .costs import CostParams
from .instr import PIPES, Access, Instr

#: memory label of an on-chip access's space
MEMORY = {"Vec": "UB", "Mat": "L1", "Left": "L0A", "Right": "L0B", "Acc": "L0C"}
#: the order memories are listed in
MEMORY_ORDER = ("GM read", "GM write", "L1", "UB", "L0A", "L0B", "L0C")


def peak_rates(p: CostParams) -> Dict[str, Tuple[float, str]]:
    """The arch's peak rate per pipe and its unit (what :mod:`.costs` charges per cycle)."""
    return {"MTE2": (p.gm_read_bytes_per_cycle, "B/cycle"), "MTE3": (p.gm_write_bytes_per_cycle, "B/cycle"),
            "MTE1": (p.mte1_bytes_per_cycle, "B/cycle"), "FIX": (p.fix_bytes_per_cycle, "B/cycle"),
            "V": (p.vec_bytes_per_cycle, "B/cycle"), "M": (float(p.cube_macs_per_cycle.get("FP16", 1024)), "MAC/cycle"),
            "S": (1.0 / p.scalar_op, "op/cycle")}


def line_of(ins: Optional[Instr]) -> str:
    """``file.py:12`` of an instruction's kernel line (``?`` when unknown)."""
    if ins is None or ins.loc is None:
        return "?"
    return f"{os.path.basename(ins.loc.filename)}:{ins.loc.lineno}"


@dataclass
class Stall:
    """One gap of a core's bound pipe before ``ins`` (``cycles`` long), and what ended it."""

    ins: Instr
    cycles: int
    cause: str                       # "reuse", "data", "cross-core", "issue"
    other: Optional[Instr] = None    # the instruction waited for (the earlier user of the bytes, the releaser)
    tile: Optional[str] = None       # the tile the dependency goes through
    first: bool = False              # the pipe's first data instruction on the core (pipeline fill)


@dataclass
class CoreProfile:
    """What one core did (see the module docstring)."""

    index: int
    label: str
    block: int
    start: int
    end: int
    busy: Dict[str, int]
    bound: str
    moved: Dict[str, int]            # bytes per memory label (MEMORY_ORDER)
    work: Dict[str, int]             # per pipe: bytes (transfers, vector) or MACs (cube)
    repeats: int                     # the most times one data-op line ran on this core
    stalls: List[Stall] = field(default_factory=list)
    latency: int = 0                 # fixed-latency cycles of the bound pipe's transfers
    #: per pipe, one instruction of its most frequent data line (to name the line)
    typical: Dict[str, Instr] = field(default_factory=dict)
    #: per kernel line, the tiles its executions on this core wrote (a group slot that never changes
    #: means the group is not advanced)
    written: Dict[object, set] = field(default_factory=dict)

    @property
    def span(self) -> int:
        return max(0, self.end - self.start)

    @property
    def busy_fraction(self) -> float:
        return self.busy[self.bound] / self.span if self.span else 0.0

    @property
    def role(self) -> str:
        """The kind of core, without block or sub-core ("AIC", "AIV"), to group alike cores."""
        return self.label.split()[-1].rstrip("0123456789")


def _data(ins: Instr) -> bool:
    return bool(ins.accesses) and ins.sync is None or (ins.sync is not None and ins.sync[0].startswith("phase_"))


def _pipe(ins: Instr) -> str:
    return "S" if ins.pipe == "ALL" else ins.pipe


def _work(ins: Instr) -> int:
    """What ``ins`` processes on its pipe: MACs on the cube, bytes written elsewhere (the widest operand on V)."""
    if ins.pipe == "M":
        left = [a for a in ins.accesses if a.space == "Left" and not a.write]
        right = [a for a in ins.accesses if a.space == "Right" and not a.write]
        return left[0].rows * left[0].cols * right[0].cols if left and right else 0
    if ins.pipe == "V":
        return max((a.nbytes for a in ins.accesses), default=0)
    return sum(a.nbytes for a in ins.accesses if a.write)


def _latency(p: CostParams, pipe: str, ins: Instr) -> int:
    """The fixed-latency part of a transfer's cost (:mod:`.costs`)."""
    if pipe == "MTE2":
        return p.mte2_latency
    if pipe in ("MTE3", "FIX"):
        gm = any(a.gm and a.write for a in ins.accesses)
        base = p.mte3_latency if pipe == "MTE3" else p.fix_latency
        return base if gm else base // 2
    if pipe == "MTE1":
        return p.mte1_latency
    return 0


def _key(acc: Access) -> Tuple:
    return (acc.region, acc.lo, acc.hi)


def profile_core(ci: int, label: str, block: int, stream: Sequence[Instr], params: CostParams) -> CoreProfile:
    """The profile of core ``ci`` from its instruction stream (program order, timing filled in)."""
    busy = {p: 0 for p in PIPES}
    moved = {m: 0 for m in MEMORY_ORDER}
    work = {p: 0 for p in PIPES}
    runs: Dict[Tuple, int] = {}
    first_of: Dict[Tuple, Instr] = {}
    written: Dict[object, set] = {}
    start = min((ins.start for ins in stream), default=0)
    end = max((ins.end for ins in stream), default=0)
    for ins in stream:
        pipe = _pipe(ins)
        busy[pipe] += ins.end - ins.start
        if not _data(ins):
            continue
        work[pipe] += _work(ins)
        key = (id(ins.loc), ins.op, pipe)  # per statement: two statements may share a line
        runs[key] = runs.get(key, 0) + 1
        first_of.setdefault(key, ins)
        for a in ins.accesses:
            moved[("GM write" if a.write else "GM read") if a.gm else MEMORY.get(a.space, a.space)] += a.nbytes
            if a.write and not a.gm:
                written.setdefault(ins.loc, set()).add(a.what)
    # ties go to the data pipes: a scalar-bound verdict needs the scalar unit to be strictly busiest
    bound = max(PIPES, key=lambda p: (busy[p], p != "S"))
    prof = CoreProfile(ci, label, block, start, end, busy, bound, moved, work, max(runs.values(), default=0))
    for key in sorted(runs, key=runs.get):
        prof.typical[key[2]] = first_of[key]
    prof.written = written
    prof.stalls, prof.latency = _stalls(stream, bound, start, params)
    return prof


def _stalls(stream: Sequence[Instr], bound: str, start: int, params: CostParams) -> Tuple[List[Stall], int]:
    """The gaps of pipe ``bound`` before each of its data instructions, with their causes."""
    last_user: Dict[Tuple, Tuple[Instr, bool]] = {}   # on-chip box -> last instruction touching it, wrote?
    stalls: List[Stall] = []
    waits: List[Instr] = []                           # waits on the bound pipe since its last data instruction
    prev_end, first, latency = start, True, 0
    for ins in stream:
        pipe = _pipe(ins)
        if pipe == bound and not _data(ins):
            if ins.after is not None:
                waits.append(ins)
            continue
        if not _data(ins):
            continue
        if pipe == bound:
            latency += _latency(params, pipe, ins)
            if ins.after is not None:
                waits.append(ins)
            gap = ins.start - prev_end
            if gap > 0:
                stalls.append(_cause(ins, gap, waits, last_user, first))
            prev_end, first, waits = ins.end, False, []
        for a in ins.accesses:
            if not a.gm:
                last_user[_key(a)] = (ins, a.write)
    return stalls, latency


def _cause(ins: Instr, gap: int, waits: List[Instr], last_user: Dict, first: bool) -> Stall:
    """Why pipe ``ins.pipe`` sat idle ``gap`` cycles before ``ins`` (see the module docstring)."""
    binding = max(waits, key=lambda w: w.start, default=None)
    if binding is not None and binding.after is not None and binding.after.core != ins.core:
        return Stall(ins, gap, "cross-core", binding.after, None, first)
    reuse = data = None
    for a in ins.accesses:
        if a.gm:
            continue
        found = last_user.get(_key(a))
        if found is None or _pipe(found[0]) == _pipe(ins):
            continue
        other, wrote = found
        if a.write and (reuse is None or other.end > reuse[0].end):
            reuse = (other, a.what)
        elif not a.write and wrote and (data is None or other.end > data[0].end):
            data = (other, a.what)
    # the dependency that finished last is the one the pipe waited for
    best = max((d for d in (reuse, data) if d is not None), key=lambda d: d[0].end, default=None)
    if best is None or best[0].end < ins.start - gap:
        return Stall(ins, gap, "issue", None, None, first)
    cause = "reuse" if best is reuse else "data"
    return Stall(ins, gap, cause, best[0], best[1], first)


def profile(labels: Sequence[str], blocks: Sequence[int], streams: Sequence[Sequence[Instr]],
            params: CostParams) -> List[CoreProfile]:
    """Profiles of every core that ran something."""
    return [profile_core(ci, labels[ci], blocks[ci], stream, params)
            for ci, stream in enumerate(streams) if stream]


__all__ = ["CoreProfile", "Stall", "profile", "profile_core", "peak_rates", "line_of", "MEMORY_ORDER"]
