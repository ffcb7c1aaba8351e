"""The tensor graph's node ops: every ``Node.op`` of a recorded graph is declared here exactly once.

A :class:`NodeOp` names the node op, says what it computes and what kind of op it is (``elementwise``:
element i of the output depends only on element i of the inputs after broadcasting; ``leaf``: no inputs),
and carries its numpy reference (``reference(ev, node, inputs, shape) -> ndarray``), which
``pypto/reference.py`` runs to compute the golden outputs of pass verification
(``pypto.frontend.verify``).  ``Node`` refuses an op that is not declared here, and
``tests/design/test_op_registries.py`` checks that every op the tensor-level code builds is.

References compute in FP32 (or the integer type) and round once to the node's dtype, like the tile ops
the lowering emits; ``ev`` is the evaluator (``ev.scalar(value)`` evaluates a SymbolicScalar,
``ev.region(node)`` reads a GM region).  The element functions of ``unary``/``binary``/``compare``
nodes (``attrs["fn"]``) are tile op names of the tile-level op table.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Sequence

import numpy as np

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelRuntimeError
from pypto_pro.ir.types import RoundMode
from pypto_pro.ops.casting import cast_values
from pypto_pro.ops.fp32math import exp32
from pypto_pro.ops.random import philox_words

Reference = Callable[[Any, Any, List[np.ndarray], List[int]], np.ndarray]


@dataclass(frozen=True)
class NodeOp:
    """One node op of the tensor graph."""

    name: str
    doc: str
    reference: Reference
    #: output element i depends only on element i of the (broadcast) inputs: fusable into one tile loop
    elementwise: bool = False
    #: the node has no inputs (a GM read or a generated constant)
    leaf: bool = False


NODE_OPS: Dict[str, NodeOp] = {}


def node_op(name: str, doc: str, *, elementwise: bool = False, leaf: bool = False):
    """Decorator declaring node op ``name`` with the decorated function as its numpy reference."""
    def wrap(fn: Reference) -> Reference:
        if name in NODE_OPS:
            raise RuntimeError(f"node op {name} declared twice")
        NODE_OPS[name] = NodeOp(name, doc, fn, elementwise, leaf)
        return fn
    return wrap


# ------------------------------------------------------------------ numpy building blocks
def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """True division for floats, C (truncating) division for integers, like the ``div`` tile op."""
    if np.result_type(a, b).kind == "f":
        return np.divide(a, b)
    q = np.floor_divide(a, b)
    return q + ((q * b != a) & ((a < 0) != (b < 0)))


#: element functions of binary / unary / compare nodes (tile op names), reductions and scans
_BIN = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": _div, "maximum": np.maximum,
        "minimum": np.minimum, "and_": np.bitwise_and, "or_": np.bitwise_or, "xor": np.bitwise_xor,
        "shl": np.left_shift, "shr": np.right_shift}
_UN = {"neg": np.negative, "abs": np.abs, "exp": exp32, "log": np.log, "sqrt": np.sqrt,
       "rsqrt": lambda x: 1 / np.sqrt(x), "recip": lambda x: 1 / x, "relu": lambda x: np.maximum(x, 0),
       "not_": np.invert}
_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
        "ge": np.greater_equal}
_RED = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}
_SCAN = {"sum": np.cumsum, "prod": np.cumprod}


def _comp(dtype: dt.DataType):
    """The numpy type a node computes in: FP32 for floats, the type itself for integers."""
    return np.float32 if dtype.is_float() else dtype.require_numpy()


def _rounded(r, n, shape: Sequence[int]) -> np.ndarray:
    """``r`` broadcast to the node's shape and rounded once to its dtype."""
    return np.broadcast_to(np.asarray(r), shape).astype(n.dtype.require_numpy())


def _positions(n, size: int, index: np.ndarray, d: int):
    """Fancy-index tuple addressing, for each element of ``index``, its own position with coordinate
    ``d`` replaced by the index value (checked against ``size``, like the lowered element access)."""
    bad = (index < 0) | (index >= size)
    if bad.any():
        raise KernelRuntimeError(f"pypto.{n.op}: index {int(index[bad][0])} is out of range for dim {d} of size "
                                 f"{size}")
    pos = list(np.indices(index.shape))
    pos[d] = index
    return tuple(pos)


# ------------------------------------------------------------------ leaves
@node_op("gm", "a region of a GM buffer, read through an axis mapping (slices, transposes)", leaf=True)
def _gm(ev, n, ins, shape):
    view, perm = ev.region(n)
    return np.transpose(view, perm).copy()


@node_op("full", "a tensor filled with attrs['value']", leaf=True)
def _full(ev, n, ins, shape):
    return np.full(shape, ev.scalar(n.attrs["value"])).astype(n.dtype.require_numpy())


@node_op("arange", "start + i * step along the one axis", leaf=True)
def _arange(ev, n, ins, shape):
    return (ev.scalar(n.attrs["start"]) + np.arange(shape[0]) * n.attrs["step"]).astype(n.dtype.require_numpy())


@node_op("iota", "each element's index along attrs['axis']", leaf=True)
def _iota(ev, n, ins, shape):
    axis = n.attrs["axis"]
    idx = np.arange(shape[axis]).reshape([-1 if i == axis else 1 for i in range(len(shape))])
    return np.broadcast_to(idx, shape).astype(n.dtype.require_numpy())


# ------------------------------------------------------------------ element-wise
@node_op("cast", "conversion to the node's dtype with rounding mode attrs['mode']", elementwise=True)
def _cast(ev, n, ins, shape):
    src = n.inputs[0].dtype
    mode = RoundMode(n.attrs.get("mode", 0) or RoundMode.CAST_RINT)
    if src == dt.DT_BOOL or n.dtype == dt.DT_BOOL:
        return ins[0].astype(n.dtype.require_numpy())
    return cast_values(ins[0], src, n.dtype, mode)


@node_op("expand", "the input broadcast to the node's shape", elementwise=True)
def _expand(ev, n, ins, shape):
    return np.broadcast_to(ins[0], shape).copy()


@node_op("unary", "attrs['fn'](x), a unary tile op (philox: counter-based random words)", elementwise=True)
def _unary(ev, n, ins, shape):
    if n.attrs["fn"] == "philox":
        return philox_words(ins[0], n.attrs["key"], n.attrs["counter"]).view(np.int32)
    return _rounded(_UN[n.attrs["fn"]](ins[0].astype(_comp(n.dtype))), n, shape)


@node_op("binary", "attrs['fn'](x, y), a binary tile op", elementwise=True)
def _binary(ev, n, ins, shape):
    c = _comp(n.dtype)
    return _rounded(_BIN[n.attrs["fn"]](ins[0].astype(c), ins[1].astype(c)), n, shape)


@node_op("binary_scalar", "attrs['fn'](x, scalar), or (scalar, x) when attrs['reverse']", elementwise=True)
def _binary_scalar(ev, n, ins, shape):
    c = _comp(n.dtype)
    s = np.asarray(ev.scalar(n.attrs["scalar"])).astype(c)
    x = ins[0].astype(c)
    fn = _BIN[n.attrs["fn"]]
    return _rounded(fn(s, x) if n.attrs["reverse"] else fn(x, s), n, shape)


@node_op("compare", "attrs['fn'](x, y) -> BOOL (eq ne lt le gt ge)", elementwise=True)
def _compare(ev, n, ins, shape):
    return _CMP[n.attrs["fn"]](ins[0], ins[1])


@node_op("compare_scalar", "attrs['fn'](x, scalar) -> BOOL", elementwise=True)
def _compare_scalar(ev, n, ins, shape):
    return _CMP[n.attrs["fn"]](ins[0], ev.scalar(n.attrs["scalar"]))


@node_op("select", "where(cond, x, y or attrs['scalar'])", elementwise=True)
def _select(ev, n, ins, shape):
    other = ins[2] if len(ins) == 3 else ev.scalar(n.attrs["scalar"])
    return _rounded(np.where(ins[0], ins[1], other), n, shape)


@node_op("logical_not", "not x, on BOOL tensors")
def _logical_not(ev, n, ins, shape):
    return ~ins[0]


@node_op("logical_and", "x and y, on BOOL tensors")
def _logical_and(ev, n, ins, shape):
    return np.logical_and(ins[0], ins[1])


@node_op("logical_or", "x or y, on BOOL tensors")
def _logical_or(ev, n, ins, shape):
    return np.logical_or(ins[0], ins[1])


# ------------------------------------------------------------------ along an axis
@node_op("reduce", "attrs['fn'] (sum max min prod argmax argmin) over attrs['axis'], kept as size 1")
def _reduce(ev, n, ins, shape):
    fn, axis = n.attrs["fn"], n.attrs["axis"]
    if fn in ("argmax", "argmin"):
        return np.expand_dims((np.argmax if fn == "argmax" else np.argmin)(ins[0], axis), axis).astype(np.int32)
    return _rounded(_RED[fn](ins[0].astype(_comp(n.dtype)), axis=axis, keepdims=True), n, shape)


@node_op("scan", "inclusive attrs['fn'] (sum, prod) along attrs['axis']")
def _scan(ev, n, ins, shape):
    return _rounded(_SCAN[n.attrs["fn"]](ins[0].astype(_comp(n.dtype)), axis=n.attrs["axis"]), n, shape)


@node_op("argsort", "stable sort positions along attrs['dim'] (NaN largest), the first attrs['k']")
def _argsort(ev, n, ins, shape):
    x = ins[0]
    d, k = n.attrs["dim"], n.attrs["k"]
    x = x if x.dtype.kind in "iub" else x.astype(np.float32)  # fp16 / bf16 compare exactly in FP32
    if n.attrs["descending"]:  # stable descending = reversed stable ascending of the reversed line
        order = x.shape[d] - 1 - np.flip(np.argsort(np.flip(x, d), axis=d, kind="stable"), d)
    else:
        order = np.argsort(x, axis=d, kind="stable")
    return _rounded(np.take(order, np.arange(order.shape[d] if not isinstance(k, int) else k), axis=d), n, shape)


# ------------------------------------------------------------------ indexing
def _gather_ref(ev, n, ins, shape):
    x, index = ins[0], ins[1]
    d = n.attrs["dim"]
    if n.op == "index_select":
        _positions(n, x.shape[d], index, 0)
        return _rounded(np.take(x, index, axis=d), n, shape)
    return _rounded(x[_positions(n, x.shape[d], index, d)], n, shape)


node_op("gather", "x[.., index[i], ..] element by element along attrs['dim']")(_gather_ref)
node_op("index_select", "the slices of x at the 1-D index along attrs['dim']")(_gather_ref)


@node_op("scatter", "a copy of x with src (or attrs['value']) written / combined at the index positions")
def _scatter(ev, n, ins, shape):
    x, index = ins[0], ins[1]
    src = ins[2] if len(ins) == 3 else ev.scalar(n.attrs["value"])
    d, reduce = n.attrs["dim"], n.attrs["reduce"]
    pos = _positions(n, x.shape[d], index, d)
    src = np.broadcast_to(src, index.shape) if np.ndim(src) == 0 else src[tuple(slice(0, k) for k in index.shape)]
    r = x.copy()
    if reduce is None:
        r[pos] = src
    else:
        (np.add if reduce == "add" else np.multiply).at(r, pos, src.astype(r.dtype))
    return _rounded(r, n, shape)


@node_op("index_put", "a copy of x with values written / added at the 1-D indices on dims d, d+1, ..")
def _index_put(ev, n, ins, shape):
    m = n.attrs["count"]
    x, indices = ins[0], ins[1:1 + m]
    values = ins[1 + m] if len(ins) > 1 + m else ev.scalar(n.attrs["value"])
    d, reduce = n.attrs["dim"], n.attrs["reduce"]
    for j, index in enumerate(indices):
        _positions(n, x.shape[d + j], index, 0)
    key = (slice(None),) * d + tuple(np.broadcast_arrays(*indices))
    r = x.copy()
    values = np.broadcast_to(np.asarray(values).astype(r.dtype), r[key].shape)
    if reduce is None:
        r[key] = values
    else:
        np.add.at(r, key, values)
    return _rounded(r, n, shape)


# ------------------------------------------------------------------ cube
@node_op("matmul", "x @ y (+ a [1, n] bias row), accumulated exactly and rounded to FP32")
def _matmul(ev, n, ins, shape):
    r = np.matmul(ins[0].astype(np.float64), ins[1].astype(np.float64))
    return _rounded((r + ins[2] if len(ins) == 3 else r).astype(np.float32), n, shape)


#: node ops whose output element depends only on the same element of their inputs (after broadcasting)
ELEMENTWISE = frozenset(name for name, op in NODE_OPS.items() if op.elementwise)

__all__ = ["ELEMENTWISE", "NODE_OPS", "NodeOp", "node_op"]
