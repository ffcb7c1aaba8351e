"""``with pypto.function(name, *tensors):`` outside a jit kernel: the official graph-building API.

Tensors declared with ``pypto.tensor(shape, dtype, name)`` outside any kernel are the function's
parameters, in the order given to ``pypto.function``.  The body of the ``with`` block is recorded
exactly like a ``@pypto.frontend.jit`` kernel body (the parameter tensors hold recorded values
while it runs), and at its end the graph is lowered into one tile kernel.  The functions recorded
since the last ``pypto.runtime._device_init()`` (or ``pypto.pypto_impl.Reset()``) form the current
program; ``pypto.runtime._device_run_once_data_from_host(*host_tensors)`` runs its last function on
host data bound to the parameters in order (see :mod:`pypto.runtime`).

``with pypto.function(...) as f: for _ in f: body`` is the official spelling for bodies with runtime
``if``s on symbolic values: iterating ``f`` runs ``body`` once per branch outcome (each run records
the rest of the enclosing scope into the taken branch, as a jit kernel's re-runs do) and merges the
runs.  Without the iteration the body runs once; a ``pypto.loop`` inside it then re-runs its own body
per branch outcome (the official graph API's loops do), and a runtime ``if`` outside any loop raises
``NotImplementedError``.
Inside a kernel that is already recording, ``pypto.function`` only groups statements (recorded
inline).
"""
from __future__ import annotations

import contextlib
import re
from typing import Any, Dict, Iterator, List, Optional, Tuple

from pypto_pro import dtypes as dt
from pypto_pro.arch import resolve_arch
from pypto_pro.errors import KernelError, KernelSyntaxError, KernelTypeError
from pypto_pro.ir import nodes as ir
from pypto_pro.language.annotations import DYNAMIC

from ..graph import Buffer, Graph, full_leaf
from ..symbolic import SymbolicScalar
from ..tensor import Tensor, is_named_dim
from . import tracer
from .tracer import MAX_PATHS, Recorder, Session, _merge, caller_location, recording, traceback_location
from .. import state


class RecordedFunction:
    """One ``with pypto.function(...)`` block: its parameters, graph and lowered program."""

    def __init__(self, name: str, params: List[Buffer], dyn_vars: List[Tuple[int, int, Any]], graph: Graph,
                 program: Any):
        self.name = name
        self.params = params
        self.dyn_vars = dyn_vars  # (param index, axis, Var)
        self.graph = graph
        self.program = program


PROGRAM = state.PROGRAM  # the functions recorded since the last reset (process-wide: state.py)


def _identifier(name: str, index: int) -> str:
    text = re.sub(r"\W", "_", name or f"arg{index}")
    return text if text[:1].isalpha() or text[:1] == "_" else f"t_{text}"


def _param(t: Tensor, index: int, fname: str, dyn_vars: list) -> Buffer:
    if t.node is not None:
        raise KernelTypeError(f"pypto.function({fname!r}): argument {index} is a value computed inside a function, "
                              f"not a tensor declared with pypto.tensor(shape, dtype, name)")
    if t.ann_dims is None or t.ann_dtype is None:
        raise KernelTypeError(f"pypto.function({fname!r}): tensor {index} ({t.name or 'unnamed'}) needs a shape and "
                              f"a dtype (pypto.tensor(shape, dtype, name))")
    name = _identifier(t.name, index)
    shape: List[Any] = []
    for axis, d in enumerate(t.ann_dims):
        if isinstance(d, int) and not isinstance(d, bool):
            shape.append(d)
        elif d is DYNAMIC or is_named_dim(d):
            var = d.expr if is_named_dim(d) else ir.Var(f"{name}_dim{axis}", dt.DT_INT64)
            dyn_vars.append((index, axis, var))
            shape.append(d if is_named_dim(d) else SymbolicScalar(var))
        else:  # STATIC / ...: the official graph API has no inferred dims
            raise KernelTypeError(f"pypto.function({fname!r}): tensor {index} ({t.name or 'unnamed'}) dim {axis} is "
                                  f"{d!r}; declare ints or pypto.DYNAMIC")
    return Buffer(name, t.ann_dtype, tuple(shape), "param", index=index)


class _Paths:
    """What ``with pypto.function(...) as f`` binds: iterating ``f`` runs the loop body once per
    runtime-branch path and merges the paths into the block's recording (see the module doc)."""

    def __init__(self, name: str, session: Session, outer: Recorder, buffers: List[Buffer]):
        self.name = name
        self.session = session
        self.outer = outer
        self.buffers = buffers

    def __iter__(self) -> Iterator[int]:
        outer = self.outer
        versions = [b.version for b in self.buffers] + [t.version for t in self.session.temps]
        pending: List[List[bool]] = [[]]
        merged: Optional[List[Any]] = None
        runs = 0
        counts = (outer._var_count, outer._temp_count)
        while pending:
            decisions = pending.pop()
            runs += 1
            if runs > MAX_PATHS:
                raise KernelSyntaxError(f"more than {MAX_PATHS} runtime-branch paths; restructure the function",
                                        kernel=self.name)
            rec = Recorder(self.session, decisions)
            rec.vec_tile, rec.cube_tile = outer.vec_tile, outer.cube_tile
            rec._var_count, rec._temp_count = counts
            for b, v in zip(self.buffers + list(self.session.temps), versions):
                b.version = v
            tracer._local.recorder = rec
            try:
                yield runs - 1
            finally:
                tracer._local.recorder = outer
            if rec.early_exit is not None:
                raise KernelSyntaxError("break/return inside a pypto.loop body: the body is recorded once",
                                        loc=rec.early_exit, kernel=self.name)
            for k in range(len(decisions), len(rec.made)):
                pending.append(rec.made[:k] + [False])
            if merged is None:
                merged = rec.body
            else:
                _merge(merged, rec.body)
            outer._var_count = max(outer._var_count, rec._var_count)
            outer._temp_count = max(outer._temp_count, rec._temp_count)
            outer.vec_tile, outer.cube_tile = rec.vec_tile, rec.cube_tile
        outer.stack[-1].extend(merged or [])


class _Inline:
    """``pypto.function`` inside a recording kernel: iterating runs the body once (the kernel's own
    re-runs explore its branches)."""

    def __iter__(self) -> Iterator[int]:
        yield 0


@contextlib.contextmanager
def function(name: str, *tensors: Any) -> Iterator[Any]:
    """``with pypto.function(name, *tensors):`` (see the module docstring)."""
    if not isinstance(name, str):
        raise KernelTypeError(f"pypto.function takes a name (str) first, got {name!r}")
    if recording():  # inside a kernel: the body is recorded inline (iterating runs it once)
        yield _Inline()
        return
    args = [t for t in tensors if isinstance(t, Tensor)]
    dyn_vars: List[Tuple[int, int, Any]] = []
    params = [_param(t, i, name, dyn_vars) for i, t in enumerate(args)]
    if len({p.name for p in params}) != len(params):  # names become kernel parameters: keep them apart
        for i, p in enumerate(params):
            p.name = f"{p.name}_{i}"
    session = Session(name)
    rec = Recorder(session, [])
    rec.single_run = True  # a runtime `if` outside a pypto.loop cannot be re-run here (Recorder.branch)
    rec.params = params
    where = caller_location()
    for t, p in zip(args, params):
        t.node = full_leaf(p)
    tracer._local.recorder = rec
    try:
        yield _Paths(name, session, rec, params)
    except KernelError as e:
        raise e.attach(loc=traceback_location(e.__traceback__), kernel=name)
    finally:
        tracer._local.recorder = None
        for t in args:
            t.node = None
    if rec.early_exit is not None:
        raise KernelSyntaxError("break/return inside a pypto.loop body: the body is recorded once",
                                loc=rec.early_exit, kernel=name)
    graph = Graph(params, rec.body, list(session.temps))
    from ..lower.program import LoweredProgram

    try:
        program = LoweredProgram(graph, _identifier(name, 0), resolve_arch(None))
    except KernelError as e:
        raise e.attach(loc=where, kernel=name)
    PROGRAM.functions.append(RecordedFunction(name, params, dyn_vars, graph, program))


def dim_values(fn: RecordedFunction, arrays: Dict[int, Any]) -> Dict[int, int]:
    """Var uid -> size of every DYNAMIC axis for these bound arrays."""
    from pypto_pro.errors import KernelLaunchError

    dyn: Dict[int, int] = {}
    for i, axis, var in fn.dyn_vars:
        size = int(arrays[i].shape[axis])
        if dyn.setdefault(var.uid, size) != size:
            raise KernelLaunchError(f"dynamic dim '{var.name}' is {dyn[var.uid]} on one argument but {size} on axis "
                                    f"{axis} of argument {i}", kernel=fn.name)
    return dyn


__all__ = ["function", "PROGRAM", "RecordedFunction", "dim_values"]
