"""The symmetric heap of a communication group, over one of two transports.

Every PE's heap has the same capacity (``$PYPTO_SHMEM_HEAP_MB``, default 256 MiB, sparse: only
touched pages use memory) and the same allocations at the same offsets, because every member
allocates in the same order (SPMD); a directory (on PE 0) records each allocation so that members
that diverge fail with a clear error instead of corrupting each other's data.

A shared-memory tensor (``create_shmem_tensor``) is an allocation holding its data (``shape`` of
``dtype``) followed by its signal counters: ``int32[n_pes, *shape]`` -- for each source PE one
counter per element, so signals cover exactly the region ``shmem_signal`` names and any tile shape
agrees -- and its ordering metadata (``order.py``).

Transports (``$PYPTO_SHMEM_TRANSPORT``): ``shm`` (``shm.py``: one shared-memory segment per group,
all members on one host), ``mpi`` (``mpi.py``: MPI one-sided communication, one RMA window per
group, any hosts), ``auto`` (the default: ``shm`` when the group's members share a host, ``mpi``
when they span hosts).  Both are set up with the group's own torch.distributed collectives.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Dict, List, Tuple

import numpy as np

from ..dtypes import DataType
from ..errors import KernelRuntimeError
from . import order
from .groups import resolve
from .segment import RemoteArray, Segment, peers

TRANSPORTS = ("auto", "shm", "mpi")


@dataclass(frozen=True, eq=True)
class ShmemSlot:
    """A shared-memory tensor as a compile-time op argument: its group, a key naming the allocation
    (kernel and creation index: the same on every PE), element type and full shape."""

    group: str
    key: str
    dtype: DataType
    shape: Tuple[int, ...]
    n_pes: int
    #: created inside a loop body: a fresh (zero) tensor at every execution of its creation point
    rotating: bool = False

    def __repr__(self) -> str:
        return f"shmem<{self.group}:{self.key} {self.dtype.name}{list(self.shape)}>"

    @property
    def copies(self) -> int:
        return 2 if self.rotating else 1

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * self.dtype.nbytes

    @property
    def signal_bytes(self) -> int:
        return int(np.prod(self.shape)) * self.n_pes * 4


_segments: Dict[str, Segment] = {}
_lock = threading.Lock()


def transport() -> str:
    """The transport ``$PYPTO_SHMEM_TRANSPORT`` asks for: ``auto`` (the default), ``shm`` or ``mpi``."""
    name = os.environ.get("PYPTO_SHMEM_TRANSPORT", "auto") or "auto"
    if name not in TRANSPORTS:
        raise ValueError(f"$PYPTO_SHMEM_TRANSPORT must be one of {TRANSPORTS}, got {name!r}")
    return name


def _open(group_name: str) -> Segment:
    group = resolve(group_name)
    infos = peers(group)
    hosts = sorted({h for h, _ in infos})
    name = transport()
    if name == "auto":
        name = "mpi" if len(hosts) > 1 else "shm"
    if name == "shm":
        if len(hosts) > 1:
            raise KernelRuntimeError(
                f"communication group '{group_name}' spans hosts {hosts}: the shared-memory transport "
                "($PYPTO_SHMEM_TRANSPORT=shm) connects the processes of one host; use 'auto' or 'mpi'")
        from .shm import ShmSegment

        return ShmSegment(group, infos)
    from .mpi import MpiSegment

    return MpiSegment(group, infos)


def segment(group_name: str) -> Segment:
    """This process's view of group ``group_name``'s heap (set up collectively on first use; the
    transport is chosen then, by ``$PYPTO_SHMEM_TRANSPORT`` and the members' hosts)."""
    seg = _segments.get(group_name)
    if seg is None:
        with _lock:
            seg = _segments.get(group_name)
            if seg is None:
                seg = _segments[group_name] = _open(group_name)
    return seg


class Bound:
    """A :class:`ShmemSlot` allocated in its group's heap: data and signal arrays of every PE."""

    def __init__(self, slot: ShmemSlot):
        seg = segment(slot.group)
        if seg.group.size != slot.n_pes:
            raise KernelRuntimeError(f"{slot!r}: created with n_pes={slot.n_pes}, but group '{slot.group}' has "
                                     f"{seg.group.size} PEs")
        self.slot = slot
        self.seg = seg
        each = slot.nbytes + slot.signal_bytes
        meta = order.meta_bytes(slot.n_pes)
        off = seg.alloc(slot.key, each * slot.copies + meta)
        np_dtype = slot.dtype.require_numpy()
        self._data, self._signals = [], []
        for c in range(slot.copies):
            base = off + c * each
            self._data.append([seg.array(pe, base, np_dtype, slot.shape) for pe in range(slot.n_pes)])
            self._signals.append([seg.array(pe, base + slot.nbytes, np.int32, (slot.n_pes, *slot.shape), atomic=True)
                                  for pe in range(slot.n_pes)])
        self.meta = [order.Meta(seg, pe, off + each * slot.copies, slot.n_pes) for pe in range(slot.n_pes)]
        self.generation = -1 if slot.rotating else 0
        self.barrier_epoch = 0

    @property
    def data(self) -> List[RemoteArray]:
        """Every PE's copy of the data (of the current generation of a rotating tensor)."""
        return self._data[self.generation % self.slot.copies]

    @property
    def signals(self) -> List[RemoteArray]:
        return self._signals[self.generation % self.slot.copies]

    def fresh(self) -> None:
        """A rotating tensor's creation point: the next generation starts (zero, as made ready one
        generation ago) and this PE zeroes its own copy of the one after, which no PE touches before
        this PE's next signal (PEs that synchronise every iteration are at most one generation apart)."""
        self.generation += 1
        after = (self.generation + 1) % self.slot.copies
        self._data[after][self.me][...] = 0
        self._signals[after][self.me][...] = 0

    @property
    def me(self) -> int:
        return self.seg.group.rank


_bound: Dict[ShmemSlot, Bound] = {}


def bind(slot: ShmemSlot) -> Bound:
    """The allocation of ``slot`` in this process (made on first use; every PE makes it in the same order)."""
    b = _bound.get(slot)
    if b is None:
        b = _bound[slot] = Bound(slot)
    return b


def my_pe(group_name: str) -> int:
    return segment(group_name).group.rank
