"""The one-host transport: a group's symmetric heap is one shared-memory segment.

Layout of the segment (a file in ``/dev/shm`` that every member maps ``MAP_SHARED`` and that is
unlinked as soon as all members mapped it, so nothing is left behind when a process dies):

    [ header: directory of allocations ][ PE 0's heap ][ PE 1's heap ] ... [ PE n-1's heap ]

The segment is created by the group's PE 0 and its path handed to the others with the group's own
collectives (``broadcast_object_list``).  A put or get is a numpy copy into or out of the mapping;
updates that must be atomic (``AtomicType.ADD`` puts, signals, the directory) hold the segment's
``flock`` (the ops take :meth:`ShmSegment.lock`).
"""
from __future__ import annotations

import fcntl
import mmap
import os
import threading
import uuid
from contextlib import contextmanager
from typing import Any, Iterator, List, Tuple

import numpy as np

from .groups import GroupInfo
from .segment import DIR_ENTRIES, Box, RemoteArray, Segment, accumulate

_HEADER = 64 * 1024


def _view(box: Box) -> Box:
    """``box`` as an index that gives a view even when it names one element (a 0-d view, not a scalar)."""
    box = box if isinstance(box, tuple) else (box,)
    return box if Ellipsis in box else (*box, Ellipsis)


class ShmArray(RemoteArray):
    """A numpy view of the mapping (callers hold the segment's lock for atomic updates)."""

    def __init__(self, view: np.ndarray):
        self.view = view
        self.shape = view.shape

    def __getitem__(self, box: Box) -> np.ndarray:
        return self.view[box]

    def __setitem__(self, box: Box, values: Any) -> None:
        self.view[box] = values

    def add(self, box: Box, values: Any) -> None:
        accumulate(self.view[_view(box)], values)

    def maximum(self, box: Box, values: Any) -> None:
        region = self.view[_view(box)]
        np.maximum(region, values, out=region)

    def fetch_add(self, index: int, value: int) -> int:
        before = int(self.view[index])
        self.view[index] += value
        return before

    def compare_swap(self, index: int, expected: int, new: int) -> int:
        before = int(self.view[index])
        if before == expected:
            self.view[index] = new
        return before


class ShmSegment(Segment):
    """This process's mapping of one group's shared-memory segment."""

    transport = "shm"

    def __init__(self, group: GroupInfo, infos: List[Tuple[str, int]]):
        import torch.distributed as dist

        super().__init__(group, infos)
        size = _HEADER + group.size * self.cap
        path: List[Any] = [None]
        if group.rank == 0:
            path[0] = f"/dev/shm/pypto_heap_{os.getpid()}_{uuid.uuid4().hex[:12]}"
            fd = os.open(path[0], os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
            os.ftruncate(fd, size)
            os.close(fd)
        dist.broadcast_object_list(path, src=group.global_ranks[0], group=group.pg)
        self.fd = os.open(path[0], os.O_RDWR)
        self.mm = mmap.mmap(self.fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        mapped: List[Any] = [None] * group.size  # (not dist.barrier: it asks for the accelerator's device)
        dist.all_gather_object(mapped, True, group=group.pg)
        if group.rank == 0:
            os.unlink(path[0])
        self._directory = ShmArray(np.frombuffer(self.mm, np.int64, DIR_ENTRIES, 0))
        self._thread_lock = threading.RLock()

    def array(self, pe: int, offset: int, np_dtype: Any, shape: Tuple[int, ...], atomic: bool = False) -> ShmArray:
        count = int(np.prod(shape))
        return ShmArray(np.frombuffer(self.mm, np_dtype, count, _HEADER + pe * self.cap + offset).reshape(shape))

    def directory(self) -> ShmArray:
        return self._directory

    @contextmanager
    def lock(self) -> Iterator[None]:
        with self._thread_lock:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
