"""The tensor level's process-wide state, all of it in this one module.

``pypto`` keeps a few things between calls, as the official API does: options set outside a kernel,
tile shapes set outside a kernel, recorded ``pypto.function`` programs, golden data for pass
verification, which NPU-only knobs were already logged.  Each lives here, named and documented, and the
modules that use them import them from here (``from ..state import TILE_SHAPES``), so a reader (or a
test that must start clean: :func:`reset`) sees the whole of the tensor level's global state at once.
Everything else in ``pypto`` is per kernel or per call.  The per-thread recording in progress is
:data:`RECORDING` (a ``threading.local``): recordings in two threads do not see each other.
"""
from __future__ import annotations

import itertools
import threading
import weakref
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from pypto_pro.errors import KernelSyntaxError

if TYPE_CHECKING:
    from .frontend.graph_function import RecordedFunction

# ------------------------------------------------------------------ options (options.py, experimental.py)
#: ``pypto.set_<group>_options`` outside a kernel: group -> key -> value (filled per group by options.py)
GLOBAL_OPTIONS: Dict[str, Dict[str, Any]] = {}
#: the root scope under GLOBAL_OPTIONS (``pypto.pypto_impl.SetGlobalConfig``), kept by ``reset_options``
ROOT_OPTIONS: Dict[str, Dict[str, Any]] = {}
#: bumped on every change of the process-wide options (callers cache the effective options by it)
OPTIONS_VERSION: List[int] = [0]
#: (group, key) of the NPU tuning knobs already logged (once per process, see options.note_knob)
NOTED_KNOBS: set = set()
#: ``pypto.experimental`` operation options and runtime options set process-wide
OPERATION_OPTIONS: Dict[str, bool] = {}
RUNTIME_OPTIONS: Dict[str, List[int]] = {}


# ------------------------------------------------------------------ tile shapes (frontend/control.py)
class TileShapes:
    """Tile shapes set outside a kernel: the defaults every later recording starts from (and part of
    each kernel's cache key), plus the shapes set last anywhere, which the getters report outside a
    kernel (the official examples read them back after a call)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget every shape set (``pypto.reset_options()`` calls this too)."""
        self.default_vec: Optional[Tuple[int, ...]] = None
        self.default_cube: Optional[Dict[str, Tuple[int, ...]]] = None
        self.last_vec: Optional[Tuple[int, ...]] = None
        self.last_cube: Optional[Dict[str, Tuple[int, ...]]] = None
        self.last_conv: Optional[Tuple[Any, Any, bool]] = None

    def key(self) -> Tuple:
        cube = tuple(sorted(self.default_cube.items())) if self.default_cube else None
        return self.default_vec, cube


TILE_SHAPES = TileShapes()


# ------------------------------------------------------------------ recorded programs (frontend/graph_function.py)
class Program:
    """The functions recorded with ``pypto.function`` since the last reset (the official process-wide
    program)."""

    def __init__(self) -> None:
        self.functions: List["RecordedFunction"] = []

    def reset(self) -> None:
        self.functions.clear()

    def last(self) -> "RecordedFunction":
        if not self.functions:
            raise KernelSyntaxError("no function was recorded: build one with `with pypto.function(name, *tensors):` "
                                    "before running it")
        return self.functions[-1]


PROGRAM = Program()

# ------------------------------------------------------------------ recording, verification, symbols
#: per thread: the recording in progress (frontend/tracer.py)
RECORDING = threading.local()
#: golden outputs for the tensor-graph check of the next pass-verified runs (frontend/verify.py)
GOLDENS: List[Any] = []
#: value ranges [lo, hi] of loop indices with fixed bounds (``pypto.loop(4)``: [0, 3]), for symbolic bounds
LOOP_RANGES: "weakref.WeakKeyDictionary[Any, Tuple[int, int]]" = weakref.WeakKeyDictionary()
#: numbering of the tensors made by ``pypto.from_torch`` (converter.py)
FROM_TORCH_COUNT: List[int] = [0]
#: uids of graph nodes and buffers (graph.py)
GRAPH_UIDS = itertools.count()


def reset() -> None:
    """Forget the options, tile shapes, recorded programs and goldens set so far (not the knob log)."""
    for scope in (GLOBAL_OPTIONS, ROOT_OPTIONS):
        for group in scope.values():
            group.clear()
    OPTIONS_VERSION[0] += 1
    OPERATION_OPTIONS.clear()
    RUNTIME_OPTIONS.clear()
    TILE_SHAPES.reset()
    PROGRAM.reset()
    GOLDENS.clear()


__all__ = ["FROM_TORCH_COUNT", "GLOBAL_OPTIONS", "GOLDENS", "GRAPH_UIDS", "LOOP_RANGES", "NOTED_KNOBS",
           "OPERATION_OPTIONS", "OPTIONS_VERSION", "PROGRAM", "Program", "RECORDING", "ROOT_OPTIONS",
           "RUNTIME_OPTIONS", "TILE_SHAPES", "TileShapes", "reset"]
