"""``torch.npu.NPUGraph`` / ``torch.npu.graph`` under the CPU stand-in: capture work, replay it.

On the device, work issued inside ``with torch.npu.graph(g):`` is recorded, not run, and
``g.replay()`` runs it again on the same memory.  Here the pypto kernel launches (tensor level and tile
level) made during the capture are recorded (:mod:`pypto_pro.runtime.capture`), and so are the torch
operators: each runs once at capture (so that its result exists, with its shape and dtype) and is
recorded with that result; ``replay()`` runs launches and operators in their captured order, writing
each operator's new value into the tensor the capture returned, so later steps read it as they read the
device graph's static memory.  Allocations and tensor metadata run at capture only, as the device's
memory pool would.  Reading a value to the host inside a capture (``.item()``, ``bool(t)``, ``.tolist()``)
raises :class:`~pypto_pro.npu.NpuOnlyFacilityError`, as a device capture cannot synchronise either.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator, Optional

import torch
from torch.overrides import TorchFunctionMode

from pypto_pro.runtime import capture as _capture

from . import NpuOnlyFacilityError

#: torch functions a capture runs once and does not record: allocation, metadata and views (no data computed)
CAPTURE_SAFE = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "size", "dim", "stride", "numel",
    "element_size", "data_ptr", "is_contiguous", "storage_offset", "__get__", "__len__", "__hash__",
    "__format__", "__repr__", "is_floating_point", "is_complex", "get_device", "untyped_storage", "nbytes",
    "itemsize", "view", "reshape", "as_strided", "__getitem__", "npu", "detach",
    "device", "dtype", "shape", "ndim", "layout", "requires_grad", "is_cpu", "is_npu",  # metadata reads
    torch.Tensor.cpu.__name__,  # Tensor.cpu(): the tensor itself here
})


def _copy_into(captured: Any, fresh: Any) -> None:
    """Write a replayed operator's value into the tensors its capture returned."""
    if isinstance(captured, torch.Tensor):
        if fresh is not captured:  # an in-place operator returns its own target, already written
            captured.copy_(fresh)
    elif isinstance(captured, (tuple, list)):
        for c, f in zip(captured, fresh):
            _copy_into(c, f)


def _replay_torch_op(func: Any, args: tuple, kwargs: dict, captured: Any) -> None:
    """One captured torch operator, run again at replay on the tensors it was given."""
    _copy_into(captured, func(*args, **kwargs))


def _holds_tensor(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return True
    return isinstance(value, (tuple, list)) and bool(value) and all(_holds_tensor(v) for v in value)


class CaptureGuardMode(TorchFunctionMode):
    """Sees every torch call of the capturing thread while a capture is open: records the operators,
    refuses host reads.  Pushed by ``capture_begin`` and popped by ``capture_end``: outside a capture no
    torch call pays for it."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", str(func))
        result = func(*args, **kwargs)
        if name in CAPTURE_SAFE:
            return result
        if result is not None and not _holds_tensor(result):
            raise NpuOnlyFacilityError(f"reading a value to the host ({name!r}) inside torch.npu.graph capture",
                                       "a captured graph cannot synchronise with the host; read the value "
                                       "after capture_end() and replay()")
        _capture.active().record(_replay_torch_op, (func, tuple(args), dict(kwargs), result), {})
        return result


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
        """How many kernel launches the capture recorded (its torch operators not counted)."""
        if self._capture is None:
            return 0
        return sum(fn is not _replay_torch_op for fn, _, _ in self._capture.launches)


@contextlib.contextmanager
def graph(npu_graph: NPUGraph, pool: Any = None, stream: Any = None, **_kwargs: Any) -> Iterator[NPUGraph]:
    """``with torch.npu.graph(g):`` capture into ``g`` (``pool``/``stream`` are device memory and queue
    choices with no meaning here)."""
    npu_graph.capture_begin()
    try:
        yield npu_graph
    finally:
        npu_graph.capture_end()
