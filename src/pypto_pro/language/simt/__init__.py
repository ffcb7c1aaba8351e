"""The SIMT API (``pl.simt``): scalar functions run once per thread of a thread block.

``@pl.simt.function(max_threads=N)`` marks a launchable SIMT function, ``@pl.simt.function`` (no
``max_threads``) a SIMT callee helper.  ``pl.simt.launch(fn, threads=..., args=(...))`` in a
``pl.section_vector()`` runs ``fn``'s body once per thread: the parser emits a runtime loop nest over
the thread coordinates (z outermost, x innermost, i.e. in ``linear_thread_idx`` order) around the
inlined body, so every backend runs it with the statements it already has (interp: a Python loop,
cpu: C++ loops, sim: the same statements, checked as usual).

**Decisions** (the official pages are silent): threads run one after another in linear order, so a
SIMT function sees the writes of the threads before it (the official API has no thread barrier, and
results of data-race-free functions do not depend on the order); ``block_idx()`` is
``(pl.get_block_idx(), 0, 0)`` and ``grid_dim()`` ``(pl.get_block_num(), 1, 1)``; ``warp_size()``
is 32; parameter annotations of SIMT functions document the arguments and do not convert them.
"""
from __future__ import annotations

import inspect
import types
from typing import NamedTuple, Optional

from ... import dtypes as dt
from ...errors import KernelSyntaxError, KernelTypeError
from ...ir import nodes as ir
from ...ir.optable import OPS
from ...ops.simt import ELEMENT_OPS

WARP_SIZE = 32
MAX_BLOCK_THREADS = 2048


class Dim3(NamedTuple):
    """Thread / block coordinates or dimensions (``.x``, ``.y``, ``.z``)."""
    x: object
    y: object
    z: object


class _Launch:
    """The thread loop nest being parsed: loop variables and block dimensions."""

    def __init__(self, idx: Dim3, dims: Dim3):
        self.idx = idx
        self.dims = dims


def _stack(p) -> list:
    st = getattr(p, "_simt_launches", None)
    if st is None:
        st = p._simt_launches = []
    return st


def _current(p, node, what: str) -> _Launch:
    st = _stack(p)
    if not st:
        raise p.err(KernelSyntaxError, f"pl.simt.{what}() can only be used inside a SIMT function (one that "
                    f"pl.simt.launch runs)", node)
    return st[-1]


def _frontend(name: str, handler):
    def public(*args, **kwargs):
        raise KernelSyntaxError(f"pl.simt.{name}() can only be used inside a SIMT function in a @pl.jit kernel")

    def parse(p, node, args, kwargs):
        return handler(p, node, *args, **kwargs)

    public.__name__ = public.__qualname__ = name
    public.__doc__ = handler.__doc__
    public.__pto_frontend__ = parse
    return public


def _no_args(name: str, fn):
    def handler(p, node, *args, **kwargs):
        if args or kwargs:
            raise p.err(KernelSyntaxError, f"pl.simt.{name}() takes no arguments", node)
        return fn(p, node, _current(p, node, name))
    handler.__doc__ = fn.__doc__
    return _frontend(name, handler)


def _thread_idx(p, node, launch: _Launch) -> Dim3:
    """The current thread's coordinates within its thread block."""
    return launch.idx


def _block_dim(p, node, launch: _Launch) -> Dim3:
    """The thread block's dimensions (the launch's ``threads``)."""
    return launch.dims


def _block_idx(p, node, launch: _Launch) -> Dim3:
    """The block's coordinates in the kernel grid: ``(pl.get_block_idx(), 0, 0)``."""
    return Dim3(ir.CoreQuery("block_idx"), 0, 0)


def _grid_dim(p, node, launch: _Launch) -> Dim3:
    """The kernel grid's dimensions: ``(pl.get_block_num(), 1, 1)``."""
    return Dim3(ir.CoreQuery("block_num"), 1, 1)


def _linear_thread_idx(p, node, launch: _Launch):
    """x + y * block_dim.x + z * block_dim.x * block_dim.y."""
    (x, y, z), (bx, by, _) = launch.idx, launch.dims
    return p.binop("+", p.binop("+", x, p.binop("*", y, bx, node), node), p.binop("*", z, bx * by, node), node)


def _warp_size(p, node, launch: _Launch) -> int:
    """The SIMT warp size (32)."""
    return WARP_SIZE


class SimtFunction:
    """``@pl.simt.function``: launchable (``max_threads`` given) or a callee helper; inlined where it
    is launched or called."""

    def __init__(self, fn, max_threads: Optional[int]):
        if max_threads is not None and (not isinstance(max_threads, int) or isinstance(max_threads, bool)
                                        or not 1 <= max_threads <= MAX_BLOCK_THREADS):
            raise KernelTypeError(f"@pl.simt.function: max_threads must be an int in [1, {MAX_BLOCK_THREADS}], "
                                  f"got {max_threads!r}")
        self.fn = fn
        self.max_threads = max_threads
        self.__name__ = getattr(fn, "__name__", "simt_function")
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self.__pto_frontend__ = self._call

    def __call__(self, *args, **kwargs):
        raise KernelSyntaxError(f"{self.__name__} is a @pl.simt.function: launch it with pl.simt.launch inside a "
                                f"@pl.jit kernel, or call it from another SIMT function")

    def _call(self, p, node, args, kwargs):
        if not _stack(p):
            raise p.err(KernelSyntaxError, f"{self.__name__} is a SIMT function: run it with "
                        f"pl.simt.launch({self.__name__}, threads=..., args=(...)) in pl.section_vector()", node)
        return p.inline_call(self.fn, list(args), dict(kwargs), node)


def function(fn=None, *, max_threads: Optional[int] = None):
    """``@pl.simt.function`` / ``@pl.simt.function(max_threads=N)``."""
    if fn is None:
        return lambda f: SimtFunction(f, max_threads)
    return SimtFunction(fn, max_threads)


def _dims(p, node, threads) -> Dim3:
    vals = list(threads) if isinstance(threads, (tuple, list)) else [threads]
    if not 1 <= len(vals) <= 3:
        raise p.err(KernelSyntaxError, "pl.simt.launch: threads is an int or a tuple of one to three ints", node)
    for v in vals:
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise p.err(KernelTypeError, f"pl.simt.launch: thread dimensions are compile-time positive ints, got "
                        f"{v!r}", node)
    vals += [1] * (3 - len(vals))
    return Dim3(*vals)


def _launch(p, node, callee=None, *, threads=None, args=()):
    """Run ``callee``'s body once per thread of a ``threads`` block (see the module docstring)."""
    if _stack(p):
        raise p.err(KernelSyntaxError, "pl.simt.launch cannot be nested inside a SIMT function", node)
    if p.section != "vector":
        raise p.err(KernelSyntaxError, "pl.simt.launch must stand inside 'with pl.section_vector():' (SIMT "
                    "functions run on the vector core)", node)
    if not isinstance(callee, SimtFunction) or callee.max_threads is None:
        raise p.err(KernelTypeError, "pl.simt.launch: the callee must be a @pl.simt.function(max_threads=...) "
                    f"function, got {getattr(callee, '__name__', type(callee).__name__)}", node)
    if threads is None:
        raise p.err(KernelSyntaxError, "pl.simt.launch: threads= is required", node)
    if not isinstance(args, tuple):
        raise p.err(KernelSyntaxError, "pl.simt.launch: args must be a tuple", node)
    dims = _dims(p, node, threads)
    total = dims.x * dims.y * dims.z
    if total > callee.max_threads:
        raise p.err(KernelTypeError, f"pl.simt.launch: {total} threads exceed {callee.__name__}'s max_threads="
                    f"{callee.max_threads}", node)
    try:
        inspect.signature(callee.fn).bind(*args)
    except TypeError as e:
        raise p.err(KernelSyntaxError, f"pl.simt.launch: calling {callee.__name__}: {e}", node) from None
    idx = Dim3(*(ir.Var(f"simt_thread_{a}", dt.DT_INDEX) for a in "xyz"))
    loc = p.loc(node)
    st = _stack(p)
    st.append(_Launch(idx, dims))
    p.blocks.append([])
    p.runtime_depth += 1
    try:
        p.inline_call(callee.fn, list(args), {}, node)
    finally:
        p.runtime_depth -= 1
        st.pop()
        body = p.blocks.pop()
    for var, n in ((idx.x, dims.x), (idx.y, dims.y), (idx.z, dims.z)):
        body = [ir.For(loc, var, ir.const(0), ir.const(n), ir.const(1), body)]
    p.emit(body[0])


def simt_element_op(p, name: str) -> str:
    """The op an element access (``getval``/``setval``) is inside a SIMT function: its V-pipe variant."""
    return ELEMENT_OPS.get(name, name) if getattr(p, "_simt_launches", None) else name


def tile_valid_shape(p, tile: ir.TileRef, node) -> list:
    """``tile.valid_shape``: [rows, cols] as runtime scalars (the window ``pl.set_validshape`` set)."""
    return [p.call_op(OPS["tile_valid_dim"], [tile, axis], {}, node) for axis in (0, 1)]


simt = types.SimpleNamespace(
    function=function,
    launch=_frontend("launch", _launch),
    thread_idx=_no_args("thread_idx", _thread_idx),
    block_dim=_no_args("block_dim", _block_dim),
    block_idx=_no_args("block_idx", _block_idx),
    grid_dim=_no_args("grid_dim", _grid_dim),
    linear_thread_idx=_no_args("linear_thread_idx", _linear_thread_idx),
    warp_size=_no_args("warp_size", _warp_size),
)

__all__ = ["simt", "SimtFunction", "Dim3", "function", "simt_element_op", "tile_valid_shape"]
