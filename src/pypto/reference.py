"""Numpy evaluation of a recorded tensor graph (the golden side of pass verification).

Each op computes in FP32 (or the integer type) and rounds once to its dtype, like the tile ops."""
from __future__ import annotations

from typing import Any, Dict

import numpy as np

from pypto_pro import dtypes as dt
from pypto_pro.errors import KernelRuntimeError
from pypto_pro.ir.types import RoundMode
from pypto_pro.ops.casting import cast_values
from pypto_pro.ops.fp32math import exp32
from pypto_pro.ops.random import philox_words

from .graph import Branch, Graph, Loop, Node, Store
from .lower.program import eval_expr
from .symbolic import SymbolicScalar, to_expr


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """True division for floats, C (truncating) division for integers, like the ``div`` tile op."""
    if np.result_type(a, b).kind == "f":
        return np.divide(a, b)
    q = np.floor_divide(a, b)
    return q + ((q * b != a) & ((a < 0) != (b < 0)))


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


def _positions(n: Node, size: int, index: np.ndarray, d: int):
    """Fancy-index tuple addressing, for each element of ``index``, its own position with coordinate
    ``d`` replaced by the index value (checked against ``size``, like the lowered element access)."""
    bad = (index < 0) | (index >= size)
    if bad.any():
        raise KernelRuntimeError(f"pypto.{n.op}: index {int(index[bad][0])} is out of range for dim {d} of size "
                                 f"{size}")
    pos = list(np.indices(index.shape))
    pos[d] = index
    return tuple(pos)


def _gather(n: Node, x: np.ndarray, index: np.ndarray) -> np.ndarray:
    d = n.attrs["dim"]
    if n.op == "index_select":
        _positions(n, x.shape[d], index, 0)
        return np.take(x, index, axis=d)
    return x[_positions(n, x.shape[d], index, d)]


def _scatter(n: Node, x: np.ndarray, index: np.ndarray, src) -> np.ndarray:
    """A copy of ``x`` with ``src`` written (or combined, in index order) at the index positions."""
    d, reduce = n.attrs["dim"], n.attrs["reduce"]
    pos = _positions(n, x.shape[d], index, d)
    src = np.broadcast_to(src, index.shape) if np.ndim(src) == 0 else src[tuple(slice(0, k) for k in index.shape)]
    r = x.copy()
    if reduce is None:
        r[pos] = src
    else:
        (np.add if reduce == "add" else np.multiply).at(r, pos, src.astype(r.dtype))
    return r


def _index_put(n: Node, x: np.ndarray, indices, values) -> np.ndarray:
    """A copy of ``x`` with ``values`` (broadcast) written / added in index order at the 1-D
    ``indices`` on dims ``d, d+1, ..`` (``pypto.ops.indexing``: the ``index_put`` node)."""
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
    return r


def _argsort(n: Node, x: np.ndarray) -> np.ndarray:
    """Stable sort positions along ``dim`` (NaN largest), the first ``k`` of them."""
    d, k = n.attrs["dim"], n.attrs["k"]
    x = x if x.dtype.kind in "iub" else x.astype(np.float32)  # fp16 / bf16 compare exactly in FP32
    if n.attrs["descending"]:  # stable descending = reversed stable ascending of the reversed line
        order = x.shape[d] - 1 - np.flip(np.argsort(np.flip(x, d), axis=d, kind="stable"), d)
    else:
        order = np.argsort(x, axis=d, kind="stable")
    return np.take(order, np.arange(order.shape[d] if not isinstance(k, int) else k), axis=d)


class _Eval:
    def __init__(self, graph: Graph, user: Dict[int, np.ndarray], env: Dict[int, Any]):
        self.env = env
        self.arrays: Dict[int, np.ndarray] = {}
        #: node uid -> value within the current statement (expressions are DAGs: gcd's unrolled steps)
        self.cache: Dict[int, np.ndarray] = {}
        for b in graph.params:
            self.arrays[b.uid] = user[b.index]

    def scalar(self, v):
        if isinstance(v, SymbolicScalar):
            return eval_expr(v.expr, self.env)
        return v

    def buffer(self, buf) -> np.ndarray:
        arr = self.arrays.get(buf.uid)
        if arr is None:
            if buf.kind == "alias":
                arr = self.buffer(buf.base).reshape([int(self.scalar(d)) for d in buf.shape])
            else:
                arr = np.zeros([int(self.scalar(d)) for d in buf.shape], buf.dtype.require_numpy())
            self.arrays[buf.uid] = arr
        return arr

    def region(self, n: Node):
        a = n.attrs
        arr = self.buffer(a["buf"])
        index = [int(self.scalar(o)) for o in a["offsets"]]
        sl = list(index)
        for j, ax in enumerate(a["axes"]):
            sl[ax] = slice(index[ax], index[ax] + int(self.scalar(n.shape[j])))
        view = arr[tuple(sl)]
        kept = sorted(a["axes"])
        return view, [kept.index(ax) for ax in a["axes"]]

    def value(self, n: Node) -> np.ndarray:
        hit = self.cache.get(n.uid)
        if hit is None:
            hit = self.cache[n.uid] = self._value(n)
        return hit

    def _value(self, n: Node) -> np.ndarray:
        op = n.op
        comp = lambda d: np.float32 if d.is_float() else d.require_numpy()  # noqa: E731
        if op == "gm":
            view, perm = self.region(n)
            return np.transpose(view, perm).copy()
        shape = [int(self.scalar(d)) for d in n.shape]
        if op == "full":
            return np.full(shape, self.scalar(n.attrs["value"])).astype(n.dtype.require_numpy())
        if op == "arange":
            return (self.scalar(n.attrs["start"]) + np.arange(shape[0]) * n.attrs["step"]).astype(
                n.dtype.require_numpy())
        if op == "iota":
            axis = n.attrs["axis"]
            idx = np.arange(shape[axis]).reshape([-1 if i == axis else 1 for i in range(len(shape))])
            return np.broadcast_to(idx, shape).astype(n.dtype.require_numpy())
        ins = [self.value(i) for i in n.inputs]
        with np.errstate(all="ignore"):
            if op == "cast":
                src = n.inputs[0].dtype
                mode = RoundMode(n.attrs.get("mode", 0) or RoundMode.CAST_RINT)
                if src == dt.DT_BOOL or n.dtype == dt.DT_BOOL:
                    return ins[0].astype(n.dtype.require_numpy())
                return cast_values(ins[0], src, n.dtype, mode)
            if op == "expand":
                return np.broadcast_to(ins[0], shape).copy()
            if op == "unary" and n.attrs["fn"] == "philox":
                return philox_words(ins[0], n.attrs["key"], n.attrs["counter"]).view(np.int32)
            if op == "unary":
                r = _UN[n.attrs["fn"]](ins[0].astype(comp(n.dtype)))
            elif op == "binary":
                r = _BIN[n.attrs["fn"]](ins[0].astype(comp(n.dtype)), ins[1].astype(comp(n.dtype)))
            elif op == "binary_scalar":
                s = np.asarray(self.scalar(n.attrs["scalar"])).astype(comp(n.dtype))
                x = ins[0].astype(comp(n.dtype))
                r = _BIN[n.attrs["fn"]](s, x) if n.attrs["reverse"] else _BIN[n.attrs["fn"]](x, s)
            elif op == "compare":
                return _CMP[n.attrs["fn"]](ins[0], ins[1])
            elif op == "compare_scalar":
                return _CMP[n.attrs["fn"]](ins[0], self.scalar(n.attrs["scalar"]))
            elif op == "select":
                other = ins[2] if len(ins) == 3 else self.scalar(n.attrs["scalar"])
                r = np.where(ins[0], ins[1], other)
            elif op == "logical_not":
                return ~ins[0]
            elif op in ("logical_and", "logical_or"):
                return (np.logical_and if op == "logical_and" else np.logical_or)(ins[0], ins[1])
            elif op == "reduce":
                fn, axis = n.attrs["fn"], n.attrs["axis"]
                if fn in ("argmax", "argmin"):
                    return np.expand_dims((np.argmax if fn == "argmax" else np.argmin)(ins[0], axis), axis).astype(
                        np.int32)
                r = _RED[fn](ins[0].astype(comp(n.dtype)), axis=axis, keepdims=True)
            elif op == "scan":
                r = _SCAN[n.attrs["fn"]](ins[0].astype(comp(n.dtype)), axis=n.attrs["axis"])
            elif op in ("gather", "index_select"):
                r = _gather(n, ins[0], ins[1])
            elif op == "scatter":
                value = ins[2] if len(ins) == 3 else self.scalar(n.attrs["value"])
                r = _scatter(n, ins[0], ins[1], value)
            elif op == "index_put":
                m = n.attrs["count"]
                value = ins[1 + m] if len(ins) > 1 + m else self.scalar(n.attrs["value"])
                r = _index_put(n, ins[0], ins[1:1 + m], value)
            elif op == "argsort":
                r = _argsort(n, ins[0])
            elif op == "matmul":
                r = np.matmul(ins[0].astype(np.float64), ins[1].astype(np.float64))
                r = (r + ins[2] if len(ins) == 3 else r).astype(np.float32)  # a [1, n] bias row
            else:
                raise NotImplementedError(f"reference evaluation of {op}")
        return np.broadcast_to(np.asarray(r), shape).astype(n.dtype.require_numpy())

    def run(self, stmts) -> None:
        for s in stmts:
            if isinstance(s, Store):
                self.cache.clear()
                view, perm = self.region(s.dst)
                val = np.broadcast_to(self.value(s.value), [int(self.scalar(d)) for d in s.dst.shape])
                inv = np.argsort(perm)
                view[...] = np.transpose(val, inv).astype(view.dtype)
            elif isinstance(s, Loop):
                start, stop, step = (eval_expr(to_expr(e), self.env) for e in (s.start, s.stop, s.step))
                for i in range(start, stop, step):
                    self.env[s.var.uid] = i
                    self.run(s.body)
            elif isinstance(s, Branch):
                self.run((s.then if eval_expr(s.cond, self.env) else s.orelse) or [])


def run_graph(graph: Graph, user: Dict[int, np.ndarray], dyn: Dict[int, int]) -> Dict[int, np.ndarray]:
    """Execute ``graph`` on numpy; returns the parameter arrays (modified in place) by argument index."""
    ev = _Eval(graph, user, dict(dyn))
    ev.run(graph.body)
    return user


__all__ = ["run_graph"]
