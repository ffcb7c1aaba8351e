"""Record mode: executing a kernel function builds the tensor graph.

A :class:`Recorder` collects ``Store`` statements in program order, keeps the scoped tile shapes
and the runtime loop nest.  A Python ``if`` on a :class:`~pypto.symbolic.SymbolicScalar` cannot be
decided while recording, so :func:`record` re-runs the function once per branch outcome (the
rest of the enclosing scope is recorded into the taken branch) and merges the runs into one tree
of ``Branch`` statements.  Runtime variables and workspace buffers are created deterministically
per run, so every run shares them.
"""
from __future__ import annotations

import functools
import linecache
import os
import sys
from types import TracebackType
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import pypto_pro
from pypto_pro.dtypes import DT_INT64, DataType
from pypto_pro.errors import KernelError, KernelSyntaxError, KernelValueError, SourceLoc
from pypto_pro.ir import nodes as ir

from .. import state
from ..graph import Branch, Buffer, Graph, Loop, Node, Store
from .snapshots import LiveValues

_local = state.RECORDING  # the recording in progress, per thread (state.py)
#: branches explored per recording before giving up (2**k paths for k runtime ifs)
MAX_PATHS = 64
#: the tiles of a plain GM -> GM copy stored where the kernel set no vector tiles (any shape is exact)
COPY_TILE = (64, 64)


#: the packages' own source directories (pypto_pro/ and pypto/): frames there are the library, not the kernel
_LIBRARY_DIRS = (os.path.dirname(os.path.abspath(pypto_pro.__file__)) + os.sep,
                 os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep)


@functools.lru_cache(maxsize=1024)
def _user_frame(filename: str) -> bool:
    path = os.path.abspath(filename)
    return not path.startswith(_LIBRARY_DIRS) and not filename.startswith("<frozen")


def _loc(filename: str, lineno: int) -> SourceLoc:
    return SourceLoc(filename, lineno, linecache.getline(filename, lineno))


def caller_location() -> Optional[SourceLoc]:
    """The kernel source line executing now: the innermost frame outside pypto/pypto_pro."""
    frame = sys._getframe(1)
    while frame is not None and not _user_frame(frame.f_code.co_filename):
        frame = frame.f_back
    return _loc(frame.f_code.co_filename, frame.f_lineno) if frame is not None else None


def recording_location(skip: int = 1) -> Optional[SourceLoc]:
    """:func:`caller_location` while a kernel is recording, else None (the lowering's own nodes);
    ``skip`` frames above this one are passed over first (a dataclass's generated ``__init__``)."""
    if getattr(_local, "recorder", None) is None:
        return None
    frame = sys._getframe(skip)
    while frame is not None and not _user_frame(frame.f_code.co_filename):
        frame = frame.f_back
    return _loc(frame.f_code.co_filename, frame.f_lineno) if frame is not None else None


def traceback_location(tb: Optional[TracebackType]) -> Optional[SourceLoc]:
    """The innermost kernel source line of a traceback (where a recorded call failed)."""
    found = None
    while tb is not None:
        if _user_frame(tb.tb_frame.f_code.co_filename):
            found = _loc(tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return found


def current_recorder() -> "Recorder":
    rec = getattr(_local, "recorder", None)
    if rec is None:
        raise KernelSyntaxError("this pypto call is only valid while a @pypto.frontend.jit kernel is recording")
    return rec


def recording() -> bool:
    return getattr(_local, "recorder", None) is not None


class Session:
    """State shared by every run of one recording: runtime Vars and workspace buffers by creation order."""

    def __init__(self, kernel_name: str):
        self.kernel_name = kernel_name
        self.vars: List[ir.Var] = []
        self.temps: List[Buffer] = []
        #: (file, line) of a pypto.loop -> the error recording it raises (frontend/control.py: check_loop_bodies)
        self.loop_rejects: Dict[Tuple[str, int], Exception] = {}
        #: (size expression, divisor) of each pypto.experimental.assume_divisible (checked at launch in
        #: runtime_debug_mode 4)
        self.assumptions: List[Tuple[ir.Expr, int]] = []
        #: (dim, dim, op, axis, location) of dims an op takes to be equal at run time (ops/core.py
        #: note_equal_at_run_time; checked at every launch)
        self.dim_agreements: List[Tuple[Any, Any, str, int, Any]] = []


class Recorder:
    """One execution of the kernel function in record mode."""

    def __init__(self, session: Session, decisions: Sequence[bool]):
        self.session = session
        self.decisions = list(decisions)
        self.made: List[bool] = []
        self.body: List[Any] = []
        self.stack: List[List[Any]] = [self.body]
        self.loops: List[Tuple[Loop, int]] = []
        from .control import TILE_SHAPES  # the defaults set outside any kernel

        self.vec_tile: Optional[Tuple[int, ...]] = TILE_SHAPES.default_vec
        self.cube_tile: Optional[Dict[str, Any]] = TILE_SHAPES.default_cube
        self._var_count = 0
        self._temp_count = 0
        self.early_exit: Optional[SourceLoc] = None  # a pypto.loop whose body was left by break/return
        self.single_run = False  # the body runs once (with pypto.function): runtime ifs cannot be explored
        self.live = LiveValues()  # computed tensors, to keep their values across writes (frontend/snapshots.py)
        self.snapshotting = False
        self.exploring = 0  # ... except inside a pypto.loop, which then re-runs its body per path

    # ---------------------------------------------------------------- deterministic creation
    def new_var(self, name: str) -> ir.Var:
        s = self.session
        if self._var_count < len(s.vars):
            var = s.vars[self._var_count]
        else:
            var = ir.Var(name or f"i{self._var_count}", DT_INT64)
            s.vars.append(var)
        self._var_count += 1
        return var

    def new_temp(self, shape: Sequence[Any], dtype: DataType, name: str = "") -> Buffer:
        s = self.session
        key = (tuple(repr(d) for d in shape), dtype.name)
        while self._temp_count < len(s.temps):
            buf = s.temps[self._temp_count]
            self._temp_count += 1
            if (tuple(repr(d) for d in buf.shape), buf.dtype.name) == key:
                return buf
        buf = Buffer(name or f"ws{len(s.temps)}", dtype, tuple(shape), "temp")
        s.temps.append(buf)
        self._temp_count = len(s.temps)
        return buf

    # ---------------------------------------------------------------- statements
    def store(self, dst: Node, value: Node, loc: Optional[SourceLoc] = None) -> None:
        """Record ``dst = value`` with the tile shapes in scope (the vec tile may still be unset: a
        statement that needs vector passes fails in the lowering) and the kernel line it came from
        (``loc``, else the line executing now)."""
        if not self.snapshotting:
            self.snapshotting = True
            try:
                self.live.before_store(self, dst, value)
            finally:
                self.snapshotting = False
        vec_tile = self.vec_tile
        if vec_tile is None and value.op == "gm":  # a GM -> GM copy (the NPU's DMA) needs no vector tiles
            vec_tile = COPY_TILE
        self.stack[-1].append(Store(dst, value, vec_tile, self.cube_tile, loc or caller_location()))
        dst.attrs["buf"].root.version += 1

    def push_loop(self, loop: Loop) -> None:
        self.stack[-1].append(loop)
        self.loops.append((loop, len(self.stack)))
        self.stack.append(loop.body)

    def pop_loop(self, loop: Loop) -> None:
        top, depth = self.loops.pop()
        assert top is loop
        del self.stack[depth:]

    def left_loop_early(self, where: Optional[SourceLoc]) -> None:
        """A pypto.loop body ended without reaching its end (reported once recording finishes: an
        exception leaving the body propagates on its own)."""
        if self.early_exit is None:
            self.early_exit = where or SourceLoc("<kernel>", 0)

    def loop_of(self, var: ir.Var) -> Loop:
        for loop, _ in reversed(self.loops):
            if loop.var is var:
                return loop
        raise KernelValueError("is_loop_begin/is_loop_end need the index of an enclosing pypto.loop")

    def branch(self, cond) -> bool:
        """Decide a runtime ``if``: the rest of the enclosing scope is recorded into the taken branch."""
        if self.single_run and not self.exploring:
            raise NotImplementedError("a runtime `if` on a symbolic value directly in a `with pypto.function(...)` "
                                      "block (outside any pypto.loop): the block runs once and cannot be re-run per "
                                      "outcome; iterate it (`with pypto.function(...) as f: for _ in f:`), or write "
                                      "the function as a @pypto.frontend.jit kernel")
        n = len(self.made)
        decision = self.decisions[n] if n < len(self.decisions) else True
        self.made.append(decision)
        node = Branch(cond.expr)
        body: List[Any] = []
        if decision:
            node.then = body
        else:
            node.orelse = body
        self.stack[-1].append(node)
        self.stack[-1] = body
        # an enclosing loop body keeps collecting into the branch until the loop closes
        return decision


def _held(s: Any) -> bool:
    return isinstance(s, Store) and s.held


def _merge(a: List[Any], b: List[Any]) -> None:
    """Merge run ``b``'s statements into run ``a``'s, position by position.  A held value's store
    (``Store.held``) is inserted where the value was made only on the paths that write its inputs
    later, so the two runs may differ by such stores: one only ``b`` has is added to ``a`` (storing a
    value that a path does not need is harmless), and the statements after it still pair up."""
    i = j = 0
    while i < len(a) and j < len(b):
        x, y = a[i], b[j]
        if _held(x) != _held(y) or (_held(x) and x.dst.attrs["buf"] is not y.dst.attrs["buf"]):
            if _held(y):
                a.insert(i, y)
                j += 1
            i += 1
            continue
        if isinstance(x, Loop) and isinstance(y, Loop):
            _merge(x.body, y.body)
        elif isinstance(x, Branch) and isinstance(y, Branch):
            for attr in ("then", "orelse"):
                xa, ya = getattr(x, attr), getattr(y, attr)
                if xa is None:
                    setattr(x, attr, ya)
                elif ya is not None:
                    _merge(xa, ya)
        i += 1
        j += 1


def record(fn: Callable, session: Session, make_args: Callable[[], Tuple[List[Any], Dict[str, Any]]],
           params: List[Buffer]) -> Graph:
    """Run ``fn`` in record mode once per runtime-branch outcome and merge the runs."""
    pending: List[List[bool]] = [[]]
    merged: Optional[List[Any]] = None
    runs = 0
    while pending:
        decisions = pending.pop()
        runs += 1
        if runs > MAX_PATHS:
            raise KernelSyntaxError(f"more than {MAX_PATHS} runtime-branch paths; restructure the kernel",
                                    kernel=session.kernel_name)
        rec = Recorder(session, decisions)
        prev = getattr(_local, "recorder", None)
        _local.recorder = rec
        for p in params:
            p.version = 0
        for t in session.temps:
            t.version = 0
        try:
            args, kwargs = make_args()
            result = fn(*args, **kwargs)
        except KernelError as e:  # an op rejected its operands: say where in the kernel
            raise e.attach(loc=traceback_location(e.__traceback__), kernel=session.kernel_name)
        except NotImplementedError as e:  # the same for a feature that is not implemented (still this type)
            if str(e).startswith("[kernel "):
                raise
            loc = traceback_location(e.__traceback__)
            raise NotImplementedError(f"[kernel {session.kernel_name}] {e}" + (f"\n  at {loc}" if loc else "")) from e
        finally:
            _local.recorder = prev
        if result is not None:
            raise KernelSyntaxError("a @pypto.frontend.jit kernel returns nothing: write outputs with out[:] = ...",
                                    kernel=session.kernel_name)
        if rec.early_exit is not None:
            raise KernelSyntaxError("break/return inside a pypto.loop body: the body is recorded once and runs as "
                                    "a runtime loop, so it cannot stop early (guard the rest of the body with a "
                                    "runtime if on the loop index instead)", loc=rec.early_exit,
                                    kernel=session.kernel_name)
        for k in range(len(decisions), len(rec.made)):
            pending.append(rec.made[:k] + [False])
        if merged is None:
            merged = rec.body
        else:
            _merge(merged, rec.body)
    return Graph(params, merged or [], list(session.temps))
