"""Element pass of ``argsort`` (``pypto.argsort`` / ``pypto.topk``, see ``pypto/ops/sorting.py``).

Every line along the sorted dim ``d`` is ranked without extra storage: element ``i`` goes to
position ``rank(i)`` = the number of elements ``j`` ahead of it (strictly before it in the order,
or equal to it with ``j < i``), so the ranks of a line are a permutation and the sort is stable.
Positions ``rank < k`` receive ``i``.  Lines (the other axes) are spread over the workers, each
position is written by one element, so the result is the same on every backend and block count.
The cost is ``size**2`` scalar reads per line: correct and portable, meant for short lines.
"""
from __future__ import annotations

from typing import Any, List

from pypto_pro import dtypes as dt
from pypto_pro.ir import nodes as ir

from ..graph import Store
from ..symbolic import is_static, to_expr
from .indexing import ElementPass
from .vector import dim

_B = dt.DT_BOOL


def _or(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return ir.BinOp("or", a, b, _B)


def _and(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return ir.BinOp("and", a, b, _B)


def ahead(a: ir.Expr, b: ir.Expr, earlier: ir.Expr, descending: bool, is_float: bool) -> ir.Expr:
    """Whether element ``a`` sorts before element ``b``; ``earlier``: ``a``'s index is the lower one.
    NaN is larger than every number and equal to NaN."""
    strict = ir.BinOp(">" if descending else "<", a, b, _B)
    tie = _and(ir.BinOp("==", a, b, _B), earlier)
    if is_float:
        nan_a, nan_b = ir.BinOp("!=", a, a, _B), ir.BinOp("!=", b, b, _B)
        if descending:
            strict = _or(strict, _and(nan_a, ir.UnOp("not", nan_b, _B)))
        else:
            strict = _or(strict, _and(ir.UnOp("not", nan_a, _B), nan_b))
        tie = _or(tie, _and(_and(nan_a, nan_b), earlier))
    return _or(strict, tie)


def argsort_pass(lw, s: Store) -> None:
    """``dst`` (INT64) <- the positions of the first ``k`` sorted elements of every line of ``x``."""
    dst, n = s.dst, s.value
    x = n.inputs[0]
    d, k, descending = n.attrs["dim"], n.attrs["k"], n.attrs["descending"]
    size = x.shape[d]
    b = lw.b
    ep = ElementPass(lw)
    is_float = b.param(x.attrs["buf"]).dtype.is_float()
    partial = is_static(k) and not (is_static(size) and k == size)  # topk: only ranks below k are written

    def body(coords: List[Any]) -> None:
        i = coords[d]
        if partial and not is_static(size):  # k above the runtime size: this read raises
            ep.read(x, [k - 1 if a == d else c for a, c in enumerate(coords)], checked=(d,))
        xi = ep.read(x, coords)
        rank = b.new_var("rank")
        b.append(ir.Assign(None, rank, ir.Const(0)))
        j = b.new_var("j")
        inner: List[ir.Stmt] = []
        with b.block(inner):
            xj = ep.read(x, [j if a == d else c for a, c in enumerate(coords)])
            before = ahead(xj, xi, ir.BinOp("<", j, i, _B), descending, is_float)
            step = ir.Select(before, ir.Const(1), ir.Const(0), dt.DT_INT64)
            b.append(ir.Assign(None, rank, ir.BinOp("+", rank, step, dt.DT_INT64)))
        b.append(ir.For(None, j, ir.Const(0), to_expr(dim(size)), ir.Const(1), inner))
        target = [rank if a == d else c for a, c in enumerate(coords)]
        if not partial:
            ep.write(dst, target, i)
            return
        then: List[ir.Stmt] = []
        with b.block(then):
            ep.write(dst, target, i)
        b.append(ir.If(None, ir.BinOp("<", rank, ir.Const(k), _B), then, []))

    ep.run(list(x.shape), d, body, serial=False)
