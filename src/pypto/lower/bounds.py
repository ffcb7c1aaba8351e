"""Launch-time upper bounds of workspace dims.

A workspace (temp GM buffer) is allocated once, at launch, so its dims must be computable from the
dims of the arguments.  A value computed inside a ``pypto.loop`` may have a shape that depends on the
loop index (a view ``x[i * 4:(i + 1) * 4]`` has extent ``(i + 1) * 4 - i * 4``; ``pypto.view(x, [32, ..],
[i * 32, ..])`` is clipped to ``min(32, M - i * 32)``).  Such a workspace is allocated at an upper bound
over every iteration, while the passes keep addressing it with the value's exact (per-iteration) shape.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

from pypto_pro import dtypes as dt
from pypto_pro.ir import nodes as ir

from ..graph import Branch, Loop
from ..symbolic import Affine, affine_form


def _vars(e: ir.Expr, out: Dict[int, ir.Var]) -> Dict[int, ir.Var]:
    """The Vars ``e`` mentions, by uid."""
    if isinstance(e, ir.Var):
        out[e.uid] = e
    elif isinstance(e, ir.BinOp):
        _vars(e.lhs, out)
        _vars(e.rhs, out)
    return out


def _bin(op: str, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return ir.BinOp(op, a, b, dt.DT_INT64)


class Bounds:
    """Upper / lower bounds, as host expressions over launch dims, of expressions over loop indices.

    ``known``: uids of the Vars bound at launch (the arguments' dynamic dims); ``loops``: loop index
    uid -> (start, stop, step) of the recorded ``pypto.loop`` that defines it."""

    def __init__(self, known: Set[int], loops: Dict[int, Tuple[ir.Expr, ir.Expr, ir.Expr]]):
        self.known = known
        self.loops = loops

    @classmethod
    def of_graph(cls, known: Set[int], body: List) -> "Bounds":
        loops: Dict[int, Tuple[ir.Expr, ir.Expr, ir.Expr]] = {}

        def walk(stmts) -> None:
            for s in stmts or []:
                if isinstance(s, Loop):
                    loops[s.var.uid] = (s.start, s.stop, s.step)
                    walk(s.body)
                elif isinstance(s, Branch):
                    walk(s.then)
                    walk(s.orelse)

        walk(body)
        return cls(known, loops)

    def evaluable(self, e: ir.Expr) -> bool:
        """Whether ``e`` can be evaluated at launch (it mentions launch dims only)."""
        return all(uid in self.known for uid in _vars(e, {}))

    def upper(self, e: ir.Expr) -> Optional[ir.Expr]:
        """An upper bound of the extent ``e`` (a dim: its factors are extents too, never negative)."""
        return self._bound(e, True)

    def _var_bound(self, v: ir.Var, up: bool) -> Optional[ir.Expr]:
        """The first (``up``: last) value of a loop index with a constant step."""
        if v.uid not in self.loops:
            return None  # a runtime scalar that is neither a launch dim nor a loop index
        start, stop, step = self.loops[v.uid]
        if not (isinstance(step, ir.Const) and isinstance(step.value, int)):
            return None
        if (step.value > 0) == up:  # the last value: below stop (ascending) / above it (descending)
            s = self._bound(stop, up)
            return None if s is None else _bin("-" if up else "+", s, ir.Const(1))
        return self._bound(start, up)

    def _bound(self, e: ir.Expr, up: bool) -> Optional[ir.Expr]:
        """An upper (``up``) or lower bound of ``e`` over every loop iteration; None when unknown."""
        if self.evaluable(e):
            return e
        form = affine_form(e)
        if form is not None:
            return self._affine_bound(form, _vars(e, {}), up)
        if not isinstance(e, ir.BinOp):
            return None
        if e.op in ("min", "max"):
            a, b = self._bound(e.lhs, up), self._bound(e.rhs, up)
            if (e.op == "min") == up:  # min's upper bound / max's lower bound: either side bounds it
                return a if b is None else b if a is None else _bin(e.op, a, b)
            return None if a is None or b is None else _bin(e.op, a, b)
        if e.op in ("+", "-"):  # a sum with a non-affine side (min(..) - 0): bound each side
            a = self._bound(e.lhs, up)
            b = self._bound(e.rhs, up if e.op == "+" else not up)
            return None if a is None or b is None else _bin(e.op, a, b)
        if e.op == "//" and isinstance(e.rhs, ir.Const) and isinstance(e.rhs.value, int) and e.rhs.value > 0:
            a = self._bound(e.lhs, up)
            return None if a is None else _bin("//", a, e.rhs)
        if e.op == "*":  # a non-affine product (min(..) * 4) scaled by a positive constant: monotonic
            for x, c in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
                if isinstance(c, ir.Const) and isinstance(c.value, int) and c.value > 0:
                    a = self._bound(x, up)
                    return None if a is None else _bin("*", a, c)
            if up:  # a product of extents (``valid_b * valid_s``, ``min(..) * D``): each factor is >= 0
                a, b = self._bound(e.lhs, True), self._bound(e.rhs, True)
                if a is not None and b is not None:
                    return _bin("*", _bin("max", a, ir.Const(0)), _bin("max", b, ir.Const(0)))
        return None

    def _affine_bound(self, form: Affine, by_uid: Dict[int, ir.Var], up: bool) -> Optional[ir.Expr]:
        total: ir.Expr = ir.Const(form.get(None, 0))
        for uid, c in form.items():
            if uid is None:
                continue
            v = by_uid[uid]
            vb = v if uid in self.known else self._var_bound(v, up == (c > 0))
            if vb is None:
                return None
            total = _bin("+", total, _bin("*", ir.Const(c), vb))
        return total
