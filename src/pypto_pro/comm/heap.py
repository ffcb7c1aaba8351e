"""The symmetric heap of a communication group: one shared-memory segment per group on a host.

Layout of the segment (a file in ``/dev/shm`` that every member maps ``MAP_SHARED`` and that is
unlinked as soon as all members mapped it, so nothing is left behind when a process dies):

    [ header: directory of allocations ][ PE 0's heap ][ PE 1's heap ] ... [ PE n-1's heap ]

Every PE's heap has the same capacity (``$PYPTO_SHMEM_HEAP_MB``, default 256 MiB, sparse: only
touched pages use memory) and the same allocations at the same offsets, because every member
allocates in the same order (SPMD); the directory records each allocation's key so that members
that diverge fail with a clear error instead of corrupting each other's data.

A shared-memory tensor (``create_shmem_tensor``) is an allocation holding its data (``shape`` of
``dtype``) followed by its signal counters: ``int32[n_pes, *shape]`` -- for each source PE one
counter per element, so signals cover exactly the region ``shmem_signal`` names and any tile shape
agrees.  Atomic updates (``AtomicType.ADD`` puts, signals) hold the segment's ``flock``.

The segment is created by the group's PE 0 and its path handed to the others with the group's own
collectives (``broadcast_object_list``); members on different hosts are refused here (see
docs/distributed.md: the cross-host transport).
"""
from __future__ import annotations

import fcntl
import mmap
import os
import socket
import threading
import time
import uuid
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from ..dtypes import DataType
from ..errors import KernelDeadlockError, KernelRuntimeError
from . import order
from .groups import GroupInfo, resolve

_HEADER = 64 * 1024
_DIR_ENTRIES = 2048  # (hash, offset, nbytes) int64 triples
_ALIGN = 256


def heap_capacity() -> int:
    """Bytes of one PE's heap (``$PYPTO_SHMEM_HEAP_MB``, default 256)."""
    return int(float(os.environ.get("PYPTO_SHMEM_HEAP_MB", "256")) * (1 << 20))


def wait_timeout() -> float:
    """Seconds a ``shmem_wait_until`` / barrier waits before it reports a deadlock (``$PYPTO_SHMEM_TIMEOUT``)."""
    return float(os.environ.get("PYPTO_SHMEM_TIMEOUT", "60"))


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


def _process_state(pid: int) -> Optional[str]:
    """The state letter of process ``pid`` (``None`` when it does not exist; 'Z' for a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode(errors="replace")
        return text[text.rindex(")") + 2]
    except (OSError, ValueError, IndexError):
        try:
            os.kill(pid, 0)
            return "R"
        except ProcessLookupError:
            return None
        except PermissionError:
            return "R"


class Segment:
    """This process's mapping of one group's symmetric heap."""

    def __init__(self, group: GroupInfo):
        import torch.distributed as dist

        self.group = group
        self.cap = heap_capacity()
        infos: List[Any] = [None] * group.size
        dist.all_gather_object(infos, (socket.gethostname(), os.getpid()), group=group.pg)
        hosts = {h for h, _ in infos}
        if len(hosts) > 1:
            raise NotImplementedError(
                f"communication group '{group.name}' spans hosts {sorted(hosts)}: the shared-memory transport "
                "connects the processes of one host; the cross-host (MPI one-sided) transport is not "
                "implemented (docs/distributed.md)")
        self.pids = [p for _, p in infos]
        size = _HEADER + group.size * self.cap
        path = [None]
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
        self.directory = np.frombuffer(self.mm, np.int64, _DIR_ENTRIES * 3, 0).reshape(_DIR_ENTRIES, 3)
        self.clock = np.zeros(group.size, np.int64)  # this PE's vector clock (order.py)
        self.allocs: Dict[str, int] = {}
        self.top = 0
        self._thread_lock = threading.RLock()

    # ------------------------------------------------------------------ allocation
    def alloc(self, key: str, nbytes: int) -> int:
        """The offset of allocation ``key`` in every PE's heap (allocated on first request)."""
        off = self.allocs.get(key)
        if off is not None:
            return off
        n = len(self.allocs)
        if n >= _DIR_ENTRIES:
            raise KernelRuntimeError(f"group '{self.group.name}': more than {_DIR_ENTRIES} shared-memory tensors")
        off = -(-self.top // _ALIGN) * _ALIGN
        if off + nbytes > self.cap:
            raise KernelRuntimeError(
                f"group '{self.group.name}': shared-memory tensors need more than the {self.cap >> 20} MiB heap of "
                "each PE; raise $PYPTO_SHMEM_HEAP_MB")
        tag = zlib.crc32(key.encode()) | (1 << 40)
        with self.lock():
            entry = self.directory[n]
            if entry[0] == 0:
                entry[:] = (tag, off, nbytes)
            elif tuple(int(x) for x in entry) != (tag, off, nbytes):
                raise KernelRuntimeError(
                    f"group '{self.group.name}': PE {self.group.rank} creates shared-memory tensor '{key}' as "
                    f"allocation {n}, but another PE created a different one there: every PE of a group must run "
                    "the same kernels with the same shmem tensors in the same order")
        self.allocs[key] = off
        self.top = off + nbytes
        return off

    def array(self, pe: int, offset: int, np_dtype, shape) -> np.ndarray:
        count = int(np.prod(shape))
        return np.frombuffer(self.mm, np_dtype, count, _HEADER + pe * self.cap + offset).reshape(shape)

    @contextmanager
    def lock(self):
        """Exclusive access to the segment among the group's processes (atomic updates)."""
        with self._thread_lock:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(self.fd, fcntl.LOCK_UN)

    # ------------------------------------------------------------------ waiting
    def dead_peer(self) -> Optional[str]:
        for pe, pid in enumerate(self.pids):
            if pe == self.group.rank:
                continue
            state = _process_state(pid)
            if state is None or state in "ZX":
                return f"PE {pe} (pid {pid}) of group '{self.group.name}' has exited"
        return None

    def wait(self, ready: Callable[[], bool], what: str, timeout: Optional[float] = None) -> None:
        """Poll ``ready`` until it holds; ``KernelDeadlockError`` after ``timeout`` seconds or when a
        peer process has died (it can never signal any more)."""
        timeout = wait_timeout() if timeout is None else timeout
        start = time.monotonic()
        pause, last_check, spins = 0.0, start, 0
        while not ready():
            spins += 1
            if spins < 500:  # a peer that is about to arrive: yield the CPU without sleeping first
                time.sleep(0)
                continue
            now = time.monotonic()
            if now - last_check > 0.05:
                last_check = now
                dead = self.dead_peer()
                if dead is not None:
                    raise KernelDeadlockError(f"PE {self.group.rank} of group '{self.group.name}' waits for "
                                              f"{what}, but {dead}: it can never arrive")
            if now - start > timeout:
                raise KernelDeadlockError(
                    f"PE {self.group.rank} of group '{self.group.name}' waited {timeout:g} s for {what}: no PE "
                    "signalled it (a shmem_wait_until without a matching shmem_signal, or PEs that ran "
                    "different programs); $PYPTO_SHMEM_TIMEOUT sets the limit")
            time.sleep(pause)
            pause = min(1e-3, pause * 2 + 1e-6)


_segments: Dict[str, Segment] = {}
_lock = threading.Lock()


def transport() -> str:
    """The transport ``$PYPTO_SHMEM_TRANSPORT`` selects: ``shm`` (the default, one host)."""
    name = os.environ.get("PYPTO_SHMEM_TRANSPORT", "shm") or "shm"
    if name == "mpi":
        raise NotImplementedError("the cross-host transport of pypto.distributed (MPI one-sided communication, "
                                  "$PYPTO_SHMEM_TRANSPORT=mpi) is not implemented; the shared-memory transport "
                                  "connects the processes of one host (docs/distributed.md)")
    if name != "shm":
        raise ValueError(f"$PYPTO_SHMEM_TRANSPORT must be 'shm' or 'mpi', got {name!r}")
    return name


def segment(group_name: str) -> Segment:
    """This process's segment of group ``group_name`` (created collectively on first use)."""
    transport()
    seg = _segments.get(group_name)
    if seg is None:
        with _lock:
            seg = _segments.get(group_name)
            if seg is None:
                seg = _segments[group_name] = Segment(resolve(group_name))
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
            self._signals.append([seg.array(pe, base + slot.nbytes, np.int32, (slot.n_pes, *slot.shape))
                                  for pe in range(slot.n_pes)])
        self.meta = [order.Meta(seg.array(pe, off + each * slot.copies, np.int64, (meta // 8,)), slot.n_pes)
                     for pe in range(slot.n_pes)]
        self.generation = -1 if slot.rotating else 0
        self.barrier_epoch = 0

    @property
    def data(self) -> List[np.ndarray]:
        """Every PE's copy of the data (of the current generation of a rotating tensor)."""
        return self._data[self.generation % self.slot.copies]

    @property
    def signals(self) -> List[np.ndarray]:
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
