"""Ordering of one-sided transfers between PEs (the simulator's check): vector clocks.

Each PE keeps a vector clock per group.  A ``shmem_put`` logs (writer PE, its clock, region, kernel
line) in the destination copy's write log, in the shared segment.  A ``shmem_signal`` releases the
sender's clock to the target; a completed ``shmem_wait_until`` acquires the clocks released to this
PE; a barrier releases every PE's clock to every PE.  A ``shmem_get`` that reads a region another
PE's put wrote, with a clock this PE has not acquired, is a race: nothing orders the read after the
write (a missing signal/wait or barrier) -- ``KernelRaceError`` naming both lines.

Only launches on the ``sim`` backend pay for this (the interpreter runs the ops under the
simulator's observer); every PE of a group must then run on ``sim``.
"""
from __future__ import annotations

import zlib
from typing import Dict, Optional, Tuple

import numpy as np

from ..errors import KernelRaceError, SourceLoc

LOG = 256  # write records kept per copy (a ring)
_FIELDS = 6 + 8  # valid, writer, clock, file crc, line, generation, lo[4], hi[4]
_files: Dict[int, str] = {}


def meta_bytes(n_pes: int) -> int:
    """Bytes of ordering metadata of one PE's copy: write log, released clocks (signals, barriers)."""
    return 8 * (1 + LOG * _FIELDS + 2 * n_pes * n_pes)


class Meta:
    """One PE's ordering metadata in its heap at ``offset`` (atomic int64 arrays of the transport)."""

    def __init__(self, seg, pe: int, offset: int, n_pes: int):
        def part(words: int, shape):
            nonlocal offset
            arr = seg.array(pe, offset, np.int64, shape, atomic=True)
            offset += 8 * words
            return arr

        self.head = part(1, (1,))
        self.log = part(LOG * _FIELDS, (LOG, _FIELDS))
        self.signalled = part(n_pes * n_pes, (n_pes, n_pes))  # row = sender's clock
        self.barrier = part(n_pes * n_pes, (n_pes, n_pes))


def _where(loc: Optional[SourceLoc]) -> Tuple[int, int]:
    if loc is None:
        return 0, 0
    crc = zlib.crc32(loc.filename.encode())
    _files[crc] = loc.filename
    return crc, loc.lineno


def _text(crc: int, line: int) -> str:
    if crc == 0:
        return "an unknown line"
    return f"{_files.get(crc, '<a kernel file>')}:{line}"


def _box(box) -> Tuple[list, list]:
    lo = [s.start for s in box] + [0] * (4 - len(box))
    hi = [s.stop for s in box] + [0] * (4 - len(box))
    return lo, hi


def tick(b) -> np.ndarray:
    vc = b.seg.clock
    vc[b.me] += 1
    return vc


def on_put(b, pe: int, box, loc) -> None:
    """Called with the segment locked (the shared-memory transport's updates are atomic under it)."""
    vc = tick(b)
    meta = b.meta[pe]
    i = meta.head.fetch_add(0, 1) % LOG
    crc, line = _where(loc)
    lo, hi = _box(box)
    meta.log[i] = [1, b.me, vc[b.me], crc, line, b.generation, *lo, *hi]


def on_signal(b, target: int) -> None:
    vc = tick(b)
    b.meta[target].signalled.maximum((b.me,), vc)


def on_wait(b) -> None:
    vc = b.seg.clock
    np.maximum(vc, b.meta[b.me].signalled[...].max(axis=0), out=vc)


def on_barrier_arrive(b) -> None:
    vc = tick(b)
    for pe in range(b.slot.n_pes):
        b.meta[pe].barrier.maximum((b.me,), vc)


def on_barrier_leave(b) -> None:
    vc = b.seg.clock
    np.maximum(vc, b.meta[b.me].barrier[...].max(axis=0), out=vc)


def check_get(b, pe: int, box, loc) -> None:
    """Raise ``KernelRaceError`` when a logged put into ``box`` of PE ``pe``'s copy is not ordered before now."""
    vc = b.seg.clock
    lo, hi = _box(box)
    nd = len(box)
    for rec in b.meta[pe].log[...]:
        valid, writer, clock, crc, line, gen = (int(x) for x in rec[:6])
        if not valid or writer == b.me or gen != b.generation or clock <= vc[writer]:
            continue
        rlo, rhi = rec[6:6 + nd], rec[10:10 + nd]
        if all(max(a, c) < min(bb, d) for a, bb, c, d in zip(lo[:nd], hi[:nd], rlo, rhi)):
            region = ", ".join(f"{a}:{z}" for a, z in zip(lo[:nd], hi[:nd]))
            raise KernelRaceError(
                f"race on {b.slot!r}: PE {b.me} reads [{region}] of PE {pe}'s copy (this line), which PE {writer} "
                f"wrote with shmem_put at {_text(crc, line)}, and no shmem_signal/shmem_wait_until or barrier "
                "orders the read after that write", loc=loc)
