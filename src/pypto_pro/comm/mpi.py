"""The cross-host transport: MPI one-sided communication, one RMA window per group as the heap.

Why MPI: it is the established engine for one-sided transfers between processes of different
machines (RDMA where the network has it, TCP otherwise), and its RMA model matches ours: every PE
exposes a window (its heap), puts/gets/atomic accumulates address another PE's window by byte
offset, and passive-target epochs need no action by the target.  It comes from PyPI wheels
(``mpi4py`` over the ``mpich`` wheel; ``make venv`` installs both) and is optional: without it,
only this transport is unavailable.

No ``mpiexec``: the processes are started by torchrun / ``torch.multiprocessing`` and each is an MPI
*singleton*.  The group's communicator is built from the torch.distributed group itself: PE 0
opens an MPI port (``MPI_Open_port``) and hands its name to the others with the group's own
``broadcast_object_list``; PEs join one at a time (PEs ``0..k-1`` ``MPI_Comm_accept``, PE ``k``
``MPI_Comm_connect``, then ``MPI_Intercomm_merge`` with PE ``k`` high), so the merged
communicator's ranks are the group's ranks.  Then one ``MPI_Win_allocate`` per group (header +
heap), opened once with ``MPI_Win_lock_all``; every operation is completed with ``MPI_Win_flush``
before it returns, so puts are visible at the target before a later signal is.

Operations: data regions move with ``MPI_Put`` / ``MPI_Get`` (an MPI subarray datatype describes the
region at the target); ``AtomicType.ADD`` on a type MPI can add is ``MPI_Accumulate(MPI_SUM)``,
other types (fp16, bf16, bool) add under a per-PE mutex (``MPI_Compare_and_swap`` on a header
word) with get-add-put; signals and ordering metadata are atomic (``MPI_Accumulate`` with
``MPI_REPLACE`` / ``MPI_SUM`` / ``MPI_MAX``, read with ``MPI_Get_accumulate(MPI_NO_OP)``,
``MPI_Fetch_and_op``), so waits poll the PE's own window with atomic reads.

Progress: MPICH carries out accumulates (and, off-node, puts and gets) by messages that the
*target* process must handle, which it does only inside MPI calls; a target busy elsewhere (in a
gloo collective, compiling a kernel, computing) would stall every origin's ``MPI_Win_flush``.  So
each process runs one progress thread (:func:`_progress`) that polls MPI every millisecond
(``MPI_Iprobe`` on each group's communicator; MPI is initialised ``MPI_THREAD_MULTIPLE``).

The MPICH wheel's singleton connect/accept works in 4.3 (5.0.x rejects it: pmodels/mpich#7805,
"Local and remote groups ... must not overlap"), hence the pinned version.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np

from ..errors import KernelRuntimeError
from .groups import GroupInfo
from .segment import DIR_ENTRIES, Box, RemoteArray, Segment, accumulate, norm_box

_HEADER = 64 * 1024
_MUTEX = DIR_ENTRIES * 8  # byte offset of each PE's add-mutex word (int64: 0 free, else holder + 1)
_INSTALL = "pip install 'mpi4py==4.1.2' 'mpich==4.3.2' (make venv installs them)"


def _mpi():
    try:
        import mpi4py

        mpi4py.rc.finalize = False  # MPI_Finalize is collective over connected processes: a dead peer hangs it
        from mpi4py import MPI
    except (ImportError, RuntimeError) as e:
        raise KernelRuntimeError(f"the MPI transport of pypto.distributed needs mpi4py and an MPI library: {_INSTALL} "
                                 f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})") from None
    return MPI


_pumped: List[Any] = []  # communicators the progress thread polls
_pump_lock = threading.Lock()


def _progress(comm) -> None:
    """Have this process's progress thread poll ``comm`` (started on first use)."""
    with _pump_lock:
        first = not _pumped
        _pumped.append(comm)
    if first:
        threading.Thread(target=_pump, name="pypto-mpi-progress", daemon=True).start()


def _pump() -> None:
    while True:
        with _pump_lock:
            comms = list(_pumped)
        for comm in comms:
            comm.Iprobe()
        time.sleep(1e-3)


def _base_types(MPI) -> Dict[str, Any]:
    return {"float32": MPI.FLOAT, "float64": MPI.DOUBLE, "int8": MPI.INT8_T, "int16": MPI.INT16_T,
            "int32": MPI.INT32_T, "int64": MPI.INT64_T, "uint8": MPI.UINT8_T, "uint16": MPI.UINT16_T,
            "uint32": MPI.UINT32_T, "uint64": MPI.UINT64_T}


def _communicator(group: GroupInfo):
    """An MPI intracommunicator of the group's processes, ranks = group ranks (see the module doc)."""
    import torch.distributed as dist

    MPI = _mpi()
    comm = MPI.COMM_SELF.Dup()
    for k in range(1, group.size):
        port: List[Any] = [MPI.Open_port() if group.rank == 0 else None]
        dist.broadcast_object_list(port, src=group.global_ranks[0], group=group.pg)
        if group.rank < k:
            inter = comm.Accept(port[0], root=0)
            if group.rank == 0:
                MPI.Close_port(port[0])
        elif group.rank == k:
            inter = comm.Connect(port[0], root=0)
        else:
            continue
        merged = inter.Merge(high=group.rank == k)
        inter.Free()
        comm.Free()
        comm = merged
    if comm.Get_rank() != group.rank or comm.Get_size() != group.size:
        raise KernelRuntimeError(f"group '{group.name}': the MPI communicator has rank {comm.Get_rank()} of "
                                 f"{comm.Get_size()}, expected {group.rank} of {group.size}")
    return comm


class MpiArray(RemoteArray):
    """``shape`` of ``dtype`` at byte ``disp`` of PE ``pe``'s window."""

    def __init__(self, seg: "MpiSegment", pe: int, disp: int, np_dtype: Any, shape: Tuple[int, ...], atomic: bool):
        self.seg, self.pe, self.disp = seg, pe, disp
        self.dtype = np.dtype(np_dtype)
        self.shape = tuple(int(d) for d in shape)
        self.atomic = atomic
        self.base = seg.base_type(self.dtype)
        self.summable = self.dtype.name in seg.types
        if atomic and not self.summable:
            raise KernelRuntimeError(f"MPI transport: atomic counters of {self.dtype} are not supported")
        self._targets: Dict[Tuple[Tuple[int, ...], Tuple[int, ...]], Any] = {}

    def _target(self, starts: List[int], sizes: List[int]):
        key = (tuple(starts), tuple(sizes))
        t = self._targets.get(key)
        if t is None:
            if key[1] == self.shape:
                t = (self.disp, int(np.prod(self.shape)), self.base)
            else:
                dt = self.base.Create_subarray(list(self.shape), list(sizes), list(starts)).Commit()
                self.seg.datatypes.append(dt)
                t = (self.disp, 1, dt)
            if len(self._targets) < 256:
                self._targets[key] = t
        return t

    def _region(self, box: Box):
        return norm_box(box, self.shape)

    def __getitem__(self, box: Box) -> np.ndarray:
        starts, sizes, squeeze = self._region(box)
        out = np.empty(sizes, self.dtype)
        if out.size:
            MPI, win = self.seg.MPI, self.seg.win
            with self.seg.op(self.pe):
                target = self._target(starts, sizes)
                if self.atomic:
                    win.Get_accumulate([np.empty_like(out), self.base], [out, self.base], self.pe, target, op=MPI.NO_OP)
                else:
                    win.Get([out, self.base], self.pe, target)
        return out.reshape([s for a, s in enumerate(sizes) if a not in squeeze])

    def _write(self, box: Box, values: Any, op_name: Optional[str]) -> None:
        starts, sizes, squeeze = self._region(box)
        shape = [s for a, s in enumerate(sizes) if a not in squeeze]
        vals = np.ascontiguousarray(np.broadcast_to(np.asarray(values), shape), dtype=self.dtype).reshape(sizes)
        if not vals.size:
            return
        MPI, win = self.seg.MPI, self.seg.win
        with self.seg.op(self.pe):
            target = self._target(starts, sizes)
            if op_name is None and not self.atomic:
                win.Put([vals, self.base], self.pe, target)
            else:
                win.Accumulate([vals, self.base], self.pe, target, op=getattr(MPI, op_name or "REPLACE"))

    def __setitem__(self, box: Box, values: Any) -> None:
        self._write(box, values, None)

    def add(self, box: Box, values: Any) -> None:
        if self.summable:
            self._write(box, values, "SUM")
            return
        with self.seg.mutex(self.pe):  # get-add-put, exclusive among the adders of this PE's heap
            current = self[box]
            accumulate(current, values)
            self._write(box, current, None)

    def maximum(self, box: Box, values: Any) -> None:
        self._write(box, values, "MAX")

    def fetch_add(self, index: int, value: int) -> int:
        MPI, win = self.seg.MPI, self.seg.win
        res = np.zeros(1, np.int64)
        with self.seg.op(self.pe):
            win.Fetch_and_op([np.array([value], np.int64), MPI.INT64_T], [res, MPI.INT64_T], self.pe,
                             self.disp + 8 * index, op=MPI.SUM)
        return int(res[0])

    def compare_swap(self, index: int, expected: int, new: int) -> int:
        return self.seg.compare_swap(self.pe, self.disp + 8 * index, expected, new)


class MpiSegment(Segment):
    """This process's part of one group's MPI window: its own heap, and access to every PE's."""

    transport = "mpi"

    def __init__(self, group: GroupInfo, infos: List[Tuple[str, int]]):
        super().__init__(group, infos)
        self.MPI = MPI = _mpi()
        self.types = _base_types(MPI)
        self._bytes: Dict[int, Any] = {}
        self.datatypes: List[Any] = []
        self._thread_lock = threading.RLock()
        if MPI.Query_thread() != MPI.THREAD_MULTIPLE:
            raise KernelRuntimeError("the MPI transport needs MPI initialised with MPI_THREAD_MULTIPLE (its progress "
                                     f"thread); this MPI gives level {MPI.Query_thread()} (mpi4py.rc.thread_level)")
        self.comm = _communicator(group)
        self.comm.Set_errhandler(MPI.ERRORS_RETURN)
        _progress(self.comm)
        self.win = MPI.Win.Allocate(_HEADER + self.cap, 1, comm=self.comm)
        self.win.Set_errhandler(MPI.ERRORS_RETURN)
        self.win.Lock_all()
        self._directory = MpiArray(self, 0, 0, np.int64, (DIR_ENTRIES,), atomic=True)
        self.comm.Barrier()  # every window exists before any PE addresses another's

    def base_type(self, dtype: np.dtype):
        t = self.types.get(dtype.name)
        if t is None:  # no MPI type (fp16, bf16, bool): moved as bytes
            t = self._bytes.get(dtype.itemsize)
            if t is None:
                t = self._bytes[dtype.itemsize] = self.MPI.BYTE.Create_contiguous(dtype.itemsize).Commit()
        return t

    @contextmanager
    def op(self, pe: int) -> Iterator[None]:
        """One operation on PE ``pe``'s window, complete there (``MPI_Win_flush``) when it returns."""
        with self._thread_lock:
            try:
                yield
                self.win.Flush(pe)
            except self.MPI.Exception as e:
                raise KernelRuntimeError(f"MPI transport of group '{self.group.name}': an operation on PE {pe} "
                                         f"failed ({e.Get_error_string()})") from None

    def compare_swap(self, pe: int, disp: int, expected: int, new: int) -> int:
        MPI = self.MPI
        res = np.zeros(1, np.int64)
        with self.op(pe):
            self.win.Compare_and_swap([np.array([new], np.int64), MPI.INT64_T], [np.array([expected], np.int64),
                                      MPI.INT64_T], [res, MPI.INT64_T], pe, disp)
        return int(res[0])

    @contextmanager
    def mutex(self, pe: int) -> Iterator[None]:
        """Exclusive among all PEs' updates of PE ``pe``'s heap that MPI cannot make atomic."""
        me = self.group.rank + 1
        start = time.monotonic()
        while self.compare_swap(pe, _MUTEX, 0, me) != 0:
            if time.monotonic() - start > 60:
                raise KernelRuntimeError(f"MPI transport of group '{self.group.name}': the add mutex of PE {pe} "
                                         "was not released within 60 s (its holder died?)")
            time.sleep(0)
        try:
            yield
        finally:
            self.compare_swap(pe, _MUTEX, me, 0)

    def array(self, pe: int, offset: int, np_dtype: Any, shape: Tuple[int, ...], atomic: bool = False) -> MpiArray:
        return MpiArray(self, pe, _HEADER + offset, np_dtype, shape, atomic)

    def directory(self) -> MpiArray:
        return self._directory
