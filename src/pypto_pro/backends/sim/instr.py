"""Records of the simulator: one memory access, one instruction, one hazard."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, List, Optional, Sequence, Tuple

from ...errors import (KernelDeadlockError, KernelError, KernelRaceError, KernelUninitError, SourceLoc)

#: the pipes of one AI core, in the order of trace tracks
#: (COMM: the one-sided transfers, signals and barriers of pypto.distributed, see ops/comm.py)
PIPES: Tuple[str, ...] = ("S", "MTE2", "MTE1", "M", "V", "MTE3", "FIX", "COMM")
PIPE_INDEX = {p: i for i, p in enumerate(PIPES)}
#: pipes whose transfers may complete out of order: two writes to the same bytes need a barrier
DMA_PIPES = frozenset(("MTE1", "MTE2", "MTE3", "FIX"))


class Access:
    """One access of an instruction: a box of a memory region (bytes on chip, elements in GM).

    ``region`` is the key of the memory: ``("L", core, space, "UB of block 0 AIV0")`` on chip,
    ``("G", data pointer, shape, strides, itemsize)`` for a GM tensor.  The readable :attr:`text`
    is built from it only when a hazard names the access."""

    __slots__ = ("region", "lo", "hi", "write", "atomic", "what", "nbytes", "rows", "cols", "space", "dtype", "gm",
                 "digest", "runs")

    def __init__(self, region: Tuple, lo: Tuple[int, ...], hi: Tuple[int, ...], write: bool, atomic: bool,
                 what: str, nbytes: int, rows: int, cols: int, space: str, dtype: str, gm: bool):
        self.region = region
        self.lo = lo
        self.hi = hi
        self.write = write
        self.atomic = atomic
        self.what = what
        self.nbytes = nbytes
        self.rows = rows
        self.cols = cols
        self.space = space
        self.dtype = dtype
        self.gm = gm
        #: for GM writes: a digest of the bytes written (equal digests = a benign same-value write)
        self.digest = None
        #: on chip, for a window whose bytes are not contiguous (a sub-window, a fractal layout): the sorted,
        #: disjoint [lo, hi) byte runs it touches inside [lo, hi); None when it touches all of [lo, hi)
        self.runs: Optional[Tuple[Tuple[int, int], ...]] = None

    @property
    def text(self) -> str:
        """E.g. "tile t0 (UB of block 0 AIV0, bytes [0, 8192))" or "tensor 'x' [0:8, 0:64] (GM bytes ...)"."""
        if not self.gm:
            return f"tile {self.what} ({self.region[3]}, bytes [{self.lo[0]}, {self.hi[0]}))"
        strides, itemsize = self.region[3], self.region[4]
        first = sum(lo * s for lo, s in zip(self.lo, strides))
        last = sum((hi - 1) * s for hi, s in zip(self.hi, strides)) + itemsize
        box = ", ".join(f"{lo}:{hi}" for lo, hi in zip(self.lo, self.hi))
        return f"tensor '{self.what}' [{box}] (GM bytes [{first}, {last}) of the tensor)"


class Instr:
    """One executed tile instruction of one core, in program order."""

    __slots__ = ("core", "seq", "op", "pipe", "loc", "accesses", "sync", "cost", "start", "end", "issue", "ticket",
                 "after")

    def __init__(self, core: int, seq: int, op: str, pipe: str, loc: Optional[SourceLoc],
                 sync: Optional[Tuple] = None, cost: int = 1):
        self.core = core
        self.seq = seq
        self.op = op
        self.pipe = pipe
        self.loc = loc
        #: the accesses, in the order the op made them (a shared empty tuple until the first one)
        self.accesses: Sequence[Access] = ()
        self.sync = sync
        self.cost = cost
        self.start = 0
        self.end = 0
        self.issue = 0
        self.ticket = -1
        #: for a wait (flag, mutex hand-over between pipes, cross-core event, phase flag): the instruction
        #: whose release it acquired (the trace draws it as a flow arrow); None otherwise
        self.after: Optional["Instr"] = None

    def where(self) -> str:
        if self.loc is None:
            return "<unknown line>"
        return str(self.loc)

    @property
    def line(self) -> str:
        return f"{self.loc.filename}:{self.loc.lineno}" if self.loc else "?"


_ERRORS = {"race": KernelRaceError, "deadlock": KernelDeadlockError, "uninit": KernelUninitError}


@dataclass
class Hazard:
    """A problem the simulator found: kind "race", "deadlock" or "uninit", a message, the lines involved."""

    kind: str
    message: str
    locs: List[SourceLoc] = field(default_factory=list)
    details: Any = None

    def error(self, kernel: str) -> KernelError:
        """The exception strict mode raises for this hazard."""
        return _ERRORS[self.kind](self.message, loc=self.locs[-1] if self.locs else None, kernel=kernel)

    def summary(self) -> str:
        """One line: the kind and the instructions (op, pipe, core, line) involved."""
        if self.kind == "race" and self.details is not None:
            a, b = self.details
            return f"race: pl.{a.op} ({a.pipe}, core {a.core}, line {a.loc.lineno if a.loc else '?'}) vs " \
                   f"pl.{b.op} ({b.pipe}, core {b.core}, line {b.loc.lineno if b.loc else '?'})"
        lines = ", ".join(str(loc.lineno) for loc in self.locs)
        return f"{self.kind}: {self.message.splitlines()[0]}" + (f" (lines {lines})" if lines else "")

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"
