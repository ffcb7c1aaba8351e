"""Launch capture: kernel launches made while a capture is active are recorded, not run, and run when
the capture is replayed (graph capture such as ``torch.npu.graph`` under the CPU stand-in,
:mod:`pypto_pro.npu.graphs`).  A replay runs the recorded launches in order on the tensors they were
given, so it sees whatever those tensors hold at replay time, as a replayed device graph does."""
from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List, Optional, Tuple

_local = threading.local()
_count_lock = threading.Lock()

#: How many captures are active in the process: launch paths test this int first (a module attribute
#: read), so a process that never captures pays nothing for the thread-local lookup of :func:`active`.
capturing = 0


class LaunchCapture:
    """The launches recorded by one capture."""

    def __init__(self) -> None:
        self.launches: List[Tuple[Callable, tuple, Dict[str, Any]]] = []

    def record(self, fn: Callable, args: tuple, kwargs: Dict[str, Any]) -> None:
        self.launches.append((fn, tuple(args), dict(kwargs)))

    def replay(self) -> None:
        """Run the recorded launches in order (outside any capture)."""
        previous = getattr(_local, "capture", None)
        _local.capture = None
        try:
            for fn, args, kwargs in self.launches:
                fn(*args, **kwargs)
        finally:
            _local.capture = previous


def active() -> Optional[LaunchCapture]:
    """The capture recording this thread's launches, if any."""
    return getattr(_local, "capture", None)


def begin(capture: LaunchCapture) -> None:
    global capturing
    if active() is not None:
        raise RuntimeError("a launch capture is already active in this thread (captures do not nest)")
    _local.capture = capture
    with _count_lock:
        capturing += 1


def end() -> None:
    global capturing
    if active() is None:
        return
    _local.capture = None
    with _count_lock:
        capturing -= 1


def launch_later(kernel: Any, key: Any, *args: Any, **kwargs: Any) -> Any:
    """``kernel[key](*args, **kwargs)``: a tile-level ``kernel[stream, block_dim]`` launch, replayed."""
    return kernel[key](*args, **kwargs)


def deferred_launcher(kernel: Any, key: Any) -> Callable[..., None]:
    """What ``kernel[key]`` gives inside a capture: a launcher that records the launch."""
    capture = active()

    def record(*args: Any, **kwargs: Any) -> None:
        capture.record(launch_later, (kernel, key) + args, kwargs)

    return record
