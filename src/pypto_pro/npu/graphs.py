"""``torch.npu.NPUGraph`` / ``torch.npu.graph`` under the CPU stand-in: capture kernel launches, replay them.

On the device, work issued inside ``with torch.npu.graph(g):`` is recorded, not run, and
``g.replay()`` runs it again on the same memory.  Here the pypto kernel launches (tensor level and tile
level) made during the capture are recorded (:mod:`pypto_pro.runtime.capture`) and ``replay()`` runs
them in order on the tensors they were given.  Allocations (``torch.empty`` ...) and tensor metadata
run at capture time as the device's memory pool would; any other torch operator inside a capture
raises :class:`~pypto_pro.npu.NpuOnlyFacilityError` -- it would have to be replayed too, and the stand-in
records only kernel launches (never a silently stale result).
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator, Optional

import torch
from torch.overrides import TorchFunctionMode

from pypto_pro.runtime import capture as _capture

from . import NpuOnlyFacilityError

#: torch functions a capture may run at once: allocation and metadata, no data computed
CAPTURE_SAFE = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "size", "dim", "stride", "numel",
    "element_size", "data_ptr", "is_contiguous", "storage_offset", "__get__", "__len__", "__hash__", "__eq__",
    "__format__", "__repr__", "is_floating_point", "is_complex", "get_device", "untyped_storage", "nbytes",
    "itemsize", "contiguous", "view", "reshape", "as_strided", "__getitem__", "npu", "to", "detach",
    "device", "dtype", "shape", "ndim", "layout", "requires_grad", "is_cpu", "is_npu",  # metadata reads
    torch.Tensor.cpu.__name__,  # Tensor.cpu(): the tensor itself here
})


def check_capture_op(func: Any) -> None:
    """Refuse a torch operator called inside a capture unless it only allocates or reads metadata."""
    if _capture.active() is None:
        return
    name = getattr(func, "__name__", str(func))
    if name not in CAPTURE_SAFE:
        raise NpuOnlyFacilityError(f"torch operator {name!r} inside torch.npu.graph capture",
                                   "the CPU stand-in captures and replays pypto kernel launches only; run the "
                                   "torch operator outside the capture")


class CaptureGuardMode(TorchFunctionMode):
    """Sees every torch call of the capturing thread while a capture is open (:func:`check_capture_op`).
    Pushed by ``capture_begin`` and popped by ``capture_end``: outside a capture no torch call pays for it."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        check_capture_op(func)
        return func(*args, **(kwargs or {}))


#: the graph whose capture is open in each thread (``capture_begin`` without its ``capture_end`` yet)
_open = threading.local()


def end_open_capture() -> bool:
    """End the capture this thread left open, if any (a test that failed between ``capture_begin`` and
    ``capture_end``); True when there was one.  Without it every later torch call of the thread would be
    refused as captured (the pytest plugin calls it after each test)."""
    graph = getattr(_open, "graph", None)
    if graph is None:
        return False
    graph.capture_end()
    return True


class NPUGraph:
    """A captured sequence of kernel launches (``capture_begin`` / ``capture_end`` / ``replay``)."""

    def __init__(self, *_args: Any, **_kwargs: Any) -> None:
        self._capture: Optional[_capture.LaunchCapture] = None
        self._guard: Optional[CaptureGuardMode] = None

    def capture_begin(self, *_args: Any, **_kwargs: Any) -> None:
        self._capture = _capture.LaunchCapture()
        _capture.begin(self._capture)
        self._guard = CaptureGuardMode()
        self._guard.__enter__()
        _open.graph = self

    def capture_end(self) -> None:
        if self._guard is not None:
            self._guard.__exit__(None, None, None)
            self._guard = None
        if getattr(_open, "graph", None) is self:
            _open.graph = None
        _capture.end()

    def replay(self) -> None:
        if self._capture is None:
            raise RuntimeError("NPUGraph.replay(): nothing was captured")
        self._capture.replay()

    def reset(self) -> None:
        self._capture = None

    @property
    def launches(self) -> int:
        """How many kernel launches the capture recorded."""
        return 0 if self._capture is None else len(self._capture.launches)


@contextlib.contextmanager
def graph(npu_graph: NPUGraph, pool: Any = None, stream: Any = None, **_kwargs: Any) -> Iterator[NPUGraph]:
    """``with torch.npu.graph(g):`` capture into ``g`` (``pool``/``stream`` are device memory and queue
    choices with no meaning here)."""
    npu_graph.capture_begin()
    try:
        yield npu_graph
    finally:
        npu_graph.capture_end()
