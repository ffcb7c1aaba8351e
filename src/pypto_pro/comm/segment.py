"""What every transport's view of a group's symmetric heap shares: allocation, waiting, dead peers.

A transport (``shm.py`` on one host, ``mpi.py`` across hosts) gives a :class:`Segment` subclass with
``array(pe, offset, dtype, shape)`` -- a :class:`RemoteArray` over that range of PE ``pe``'s heap --
``directory()`` (the allocation directory, on PE 0) and ``lock()`` (exclusive section for the
updates the transport does not make atomic itself).  Every op of ``ops/comm.py`` and the order
check of ``order.py`` go through these, so one kernel runs unchanged on either transport.
"""
from __future__ import annotations

import os
import socket
import time
import zlib
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np

from ..errors import KernelDeadlockError, KernelRuntimeError
from .groups import GroupInfo

DIR_ENTRIES = 2048  # int64 words, one per allocation (hash of key, offset and size)
_ALIGN = 256
#: seconds a wait goes on after a peer process exited while other PEs still live (see Segment.wait)
DEAD_PEER_GRACE = 10.0

Box = Tuple[Any, ...]


def heap_capacity() -> int:
    """Bytes of one PE's heap (``$PYPTO_SHMEM_HEAP_MB``, default 256)."""
    return int(float(os.environ.get("PYPTO_SHMEM_HEAP_MB", "256")) * (1 << 20))


def wait_timeout() -> float:
    """Seconds a ``shmem_wait_until`` / barrier waits before it reports a deadlock (``$PYPTO_SHMEM_TIMEOUT``)."""
    return float(os.environ.get("PYPTO_SHMEM_TIMEOUT", "60"))


def peers(group: GroupInfo) -> List[Tuple[str, int]]:
    """(hostname, pid) of every PE of ``group``, exchanged with the group's own collective."""
    import torch.distributed as dist

    infos: List[Any] = [None] * group.size
    dist.all_gather_object(infos, (socket.gethostname(), os.getpid()), group=group.pg)
    return [tuple(i) for i in infos]


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


class RemoteArray:
    """An array of ``shape`` in one PE's heap, read and written by regions (``box``: a tuple of ints
    and slices, ``...`` for all).  Reads return a numpy array (a copy, or a view for local memory
    that the caller must not keep); ``add``/``maximum`` are atomic with respect to each other."""

    shape: Tuple[int, ...]

    def __getitem__(self, box: Box) -> np.ndarray:
        raise NotImplementedError

    def __setitem__(self, box: Box, values: Any) -> None:
        raise NotImplementedError

    def add(self, box: Box, values: Any) -> None:
        raise NotImplementedError

    def maximum(self, box: Box, values: Any) -> None:
        raise NotImplementedError

    def fetch_add(self, index: int, value: int) -> int:
        """Add ``value`` to element ``index`` of a flat int64 array; the value before."""
        raise NotImplementedError

    def compare_swap(self, index: int, expected: int, new: int) -> int:
        """Set element ``index`` of a flat int64 array to ``new`` if it is ``expected``; the value before."""
        raise NotImplementedError


def norm_box(box: Any, shape: Tuple[int, ...]) -> Tuple[List[int], List[int], List[int]]:
    """(starts, sizes, squeezed axes) of a region of an array of ``shape``."""
    if not isinstance(box, tuple):
        box = (box,)
    if len(box) == 1 and box[0] is Ellipsis:
        box = ()
    starts, sizes, squeeze = [], [], []
    for axis, dim in enumerate(shape):
        b = box[axis] if axis < len(box) else slice(None)
        if isinstance(b, slice):
            lo, hi, step = b.indices(dim)
            if step != 1:
                raise ValueError("strided regions are not supported")
            starts.append(lo)
            sizes.append(max(0, hi - lo))
        else:
            i = int(b) + (dim if int(b) < 0 else 0)
            starts.append(i)
            sizes.append(1)
            squeeze.append(axis)
    return starts, sizes, squeeze


class Segment:
    """This process's view of one group's symmetric heap (one transport's subclass)."""

    transport = "?"

    def __init__(self, group: GroupInfo, infos: List[Tuple[str, int]]):
        self.group = group
        self.cap = heap_capacity()
        self.hosts = [h for h, _ in infos]
        self.pids = [p for _, p in infos]
        self.clock = np.zeros(group.size, np.int64)  # this PE's vector clock (order.py)
        self.allocs: Dict[str, int] = {}
        self.top = 0

    # ------------------------------------------------------------------ transport
    def array(self, pe: int, offset: int, np_dtype: Any, shape: Tuple[int, ...], atomic: bool = False) -> RemoteArray:
        """``shape`` of ``np_dtype`` at ``offset`` of PE ``pe``'s heap; ``atomic``: counters that
        several PEs update at once (signals, ordering metadata), read and written atomically."""
        raise NotImplementedError

    def directory(self) -> RemoteArray:
        """The allocation directory: ``int64[DIR_ENTRIES]`` on PE 0."""
        raise NotImplementedError

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Exclusive section among the group's processes for updates the transport does not make atomic."""
        yield

    # ------------------------------------------------------------------ allocation
    def alloc(self, key: str, nbytes: int) -> int:
        """The offset of allocation ``key`` in every PE's heap (allocated on first request)."""
        off = self.allocs.get(key)
        if off is not None:
            return off
        n = len(self.allocs)
        if n >= DIR_ENTRIES:
            raise KernelRuntimeError(f"group '{self.group.name}': more than {DIR_ENTRIES} shared-memory tensors")
        off = -(-self.top // _ALIGN) * _ALIGN
        if off + nbytes > self.cap:
            raise KernelRuntimeError(
                f"group '{self.group.name}': shared-memory tensors need more than the {self.cap >> 20} MiB heap of "
                "each PE; raise $PYPTO_SHMEM_HEAP_MB")
        tag = zlib.crc32(f"{key}|{off}|{nbytes}".encode()) | (1 << 40)
        with self.lock():
            before = self.directory().compare_swap(n, 0, tag)
        if before not in (0, tag):
            raise KernelRuntimeError(
                f"group '{self.group.name}': PE {self.group.rank} creates shared-memory tensor '{key}' as "
                f"allocation {n}, but another PE created a different one there: every PE of a group must run "
                "the same kernels with the same shmem tensors in the same order")
        self.allocs[key] = off
        self.top = off + nbytes
        return off

    # ------------------------------------------------------------------ waiting
    def dead_peers(self) -> List[str]:
        """The PEs of this host whose processes have exited (PEs on other hosts: the wait's timeout)."""
        me = self.hosts[self.group.rank]
        dead = []
        for pe, pid in enumerate(self.pids):
            if pe == self.group.rank or self.hosts[pe] != me:
                continue
            state = _process_state(pid)
            if state is None or state in "ZX":
                dead.append(f"PE {pe} (pid {pid}) of group '{self.group.name}' has exited")
        return dead

    def wait(self, ready: Callable[[], bool], what: str, timeout: Optional[float] = None) -> None:
        """Poll ``ready`` until it holds; ``KernelDeadlockError`` after ``timeout`` seconds, or when a
        peer process has exited and the wait is still not satisfied: at once when every other PE
        has exited (no one can signal any more), else ``DEAD_PEER_GRACE`` seconds later (a peer
        that finished its work and exited normally has sent all its signals; the live PEs may still
        be on their way)."""
        timeout = wait_timeout() if timeout is None else timeout
        start = time.monotonic()
        pause, last_check, spins = 0.0, start, 0
        dead_since: Optional[float] = None
        while not ready():
            spins += 1
            if spins < 500:  # a peer that is about to arrive: yield the CPU without sleeping first
                time.sleep(0)
                continue
            now = time.monotonic()
            if now - last_check > 0.05:
                last_check = now
                dead = self.dead_peers()
                if dead and dead_since is None:
                    dead_since = now
                if dead and (len(dead) == self.group.size - 1 or now - dead_since > DEAD_PEER_GRACE):
                    why = ("it can never arrive" if len(dead) == self.group.size - 1 else
                           f"it did not arrive within {DEAD_PEER_GRACE:g} s after that")
                    raise KernelDeadlockError(f"PE {self.group.rank} of group '{self.group.name}' waits for "
                                              f"{what}, but {dead[0]}: {why}")
            if now - start > timeout:
                raise KernelDeadlockError(
                    f"PE {self.group.rank} of group '{self.group.name}' waited {timeout:g} s for {what}: no PE "
                    "signalled it (a shmem_wait_until without a matching shmem_signal, or PEs that ran "
                    "different programs); $PYPTO_SHMEM_TIMEOUT sets the limit")
            time.sleep(pause)
            pause = min(1e-3, pause * 2 + 1e-6)


def accumulate(dst: np.ndarray, src: Any) -> None:
    """``dst += src`` in place as one rounding of the exact sum (fp16/bf16 added in fp32; integers wrap)."""
    if np.issubdtype(dst.dtype, np.integer):
        dst[...] = (dst.astype(np.int64) + np.asarray(src).astype(np.int64)).astype(dst.dtype)
    elif dst.dtype == np.float64:
        dst[...] = dst + src
    else:
        dst[...] = (dst.astype(np.float32) + np.asarray(src).astype(np.float32)).astype(dst.dtype)
