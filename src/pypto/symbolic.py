"""``pypto.SymbolicScalar``: a runtime scalar (dynamic dim, loop index) seen while recording.

It wraps a tile-IR scalar expression; arithmetic and comparisons build new expressions, and a
Python ``if`` on a symbolic condition becomes a runtime branch (see :mod:`pypto.frontend.tracer`).
"""
from __future__ import annotations

import itertools
import weakref
from typing import Dict, Optional, Tuple, Union

from pypto_pro.dtypes import DT_BOOL, DT_INDEX, DT_INT64
from pypto_pro.errors import KernelTypeError, KernelValueError
from pypto_pro.ir import nodes as ir
from . import state

Number = Union[int, float, bool]

_anonymous = itertools.count()


def to_expr(value) -> ir.Expr:
    """A Python number or SymbolicScalar as an IR expression."""
    if isinstance(value, SymbolicScalar):
        return value.expr
    if isinstance(value, ir.Expr):
        return value
    if not isinstance(value, (int, float)) and type(value).__name__ == "Tensor":
        raise NotImplementedError("value-dependent scalars: a tensor element used as a run-time scalar (a loop "
                                  "bound, offset or shape read from tensor data)")
    return ir.const(value)


_FOLD = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y, "//": lambda x, y: x // y,
         "%": lambda x, y: x % y, "/": lambda x, y: x / y, "<": lambda x, y: x < y, "<=": lambda x, y: x <= y,
         ">": lambda x, y: x > y, ">=": lambda x, y: x >= y, "==": lambda x, y: x == y, "!=": lambda x, y: x != y,
         "min": min, "max": max}


def _wrap(op: str, a, b) -> "SymbolicScalar":
    """``a op b`` as a new SymbolicScalar; two immediates fold into an immediate."""
    ea, eb = to_expr(a), to_expr(b)
    if isinstance(ea, ir.Const) and isinstance(eb, ir.Const) and op in _FOLD and not (op in "//%" and eb.value == 0):
        return SymbolicScalar(ir.const(_FOLD[op](ea.value, eb.value)))
    return SymbolicScalar(ir.BinOp(op, ea, eb, ir.binop_dtype(op, ea.dtype, eb.dtype)))


class SymbolicScalar:
    """A scalar known only at run time.  Supports + - * // % comparisons, ``pypto.min/max``.

    ``SymbolicScalar(expr)`` wraps an IR expression; the official constructor forms are accepted too:
    ``SymbolicScalar("N")`` is a named dynamic dim (what ``pypto.frontend.dynamic("N")`` returns: used
    in parameter annotations it stands for that axis, and in the kernel for its run-time size) and
    ``SymbolicScalar(128)`` (or ``SymbolicScalar("n", 128)``) an immediate (concrete) value; arithmetic
    on immediates folds.  ``SymbolicScalar()`` is a symbol with a fresh name (``sym0``, ``sym1``, ...)."""

    def __init__(self, expr: Union[ir.Expr, str, int, "SymbolicScalar", None] = None, value: Optional[int] = None):
        if expr is None:
            expr = f"sym{next(_anonymous)}"
        if value is not None and not isinstance(expr, int):  # SymbolicScalar("n", 10): that immediate
            expr = value  # (an int first argument wins: SymbolicScalar(5, 7) is 5, as officially)
        if isinstance(expr, SymbolicScalar):  # a copy
            expr = expr.expr
        if isinstance(expr, str):
            expr = ir.Var(expr, DT_INT64)  # as the dims of DYNAMIC axes
        elif isinstance(expr, int):  # a bool is the int 0 or 1, as the official (pybind11) constructor takes it
            expr = ir.const(int(expr))
        elif not isinstance(expr, ir.Expr):
            raise KernelTypeError(f"pypto.SymbolicScalar takes a dim name (str) or an int, got {expr!r}")
        self.expr = expr

    # arithmetic -------------------------------------------------------------------------
    def __add__(self, o): return _wrap("+", self, o)
    def __radd__(self, o): return _wrap("+", o, self)
    def __sub__(self, o): return _wrap("-", self, o)
    def __rsub__(self, o): return _wrap("-", o, self)
    def __mul__(self, o): return _wrap("*", self, o)
    def __rmul__(self, o): return _wrap("*", o, self)
    def __floordiv__(self, o): return _wrap("//", self, o)
    def __rfloordiv__(self, o): return _wrap("//", o, self)
    def __mod__(self, o): return _wrap("%", self, o)
    def __rmod__(self, o): return _wrap("%", o, self)
    def __truediv__(self, o): return _wrap("/", self, o)
    def __neg__(self): return _wrap("-", 0, self)

    # comparisons ------------------------------------------------------------------------
    def __lt__(self, o): return _wrap("<", self, o)
    def __le__(self, o): return _wrap("<=", self, o)
    def __gt__(self, o): return _wrap(">", self, o)
    def __ge__(self, o): return _wrap(">=", self, o)
    def __eq__(self, o): return _wrap("==", self, o)  # type: ignore[override]
    def __ne__(self, o): return _wrap("!=", self, o)  # type: ignore[override]
    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        if isinstance(self.expr, ir.Const):  # an immediate (comparisons of immediates fold) is known now
            return bool(self.expr.value)
        from .frontend.tracer import current_recorder

        return current_recorder().branch(self)

    def __float__(self) -> float:
        if isinstance(self.expr, ir.Const):
            return float(self.expr.value)
        from .slips import no_float

        raise no_float()

    def __index__(self):
        raise KernelTypeError("a SymbolicScalar (a DYNAMIC dim or loop index) has no value while recording, so "
                              "Python's range() and indexing cannot use it: loop with pypto.loop(...), use it in "
                              "shapes and offsets, or annotate the dim as a fixed int / pypto.STATIC")

    def min(self, other) -> "SymbolicScalar":
        """``a.min(b)``: the method spelling of ``pypto.min(a, b)`` (used by official examples)."""
        return sym_min(self, other)

    def max(self, other) -> "SymbolicScalar":
        """``a.max(b)``: the method spelling of ``pypto.max(a, b)``."""
        return sym_max(self, other)

    def as_variable(self) -> None:
        """The official hint that marks an expression as an intermediate variable, to simplify the
        expressions built from it.  Accepted without effect: here every expression is kept as IR and
        the C++ compiler folds common subexpressions."""

    def is_concrete(self) -> bool:
        """True only for an immediate: a dim or loop index exists only at run time (DYNAMIC dims
        never recompile)."""
        return isinstance(self.expr, ir.Const)

    def is_immediate(self) -> bool:
        return isinstance(self.expr, ir.Const)

    def is_symbol(self) -> bool:
        """A named run-time value (a dynamic dim or a loop index)."""
        return isinstance(self.expr, ir.Var)

    def is_expression(self) -> bool:
        return isinstance(self.expr, ir.BinOp)

    def concrete(self) -> int:
        if isinstance(self.expr, ir.Const):
            return self.expr.value
        raise KernelValueError(f"{self!r} is a runtime value (a DYNAMIC dim or loop index) and has no concrete value "
                         f"while recording")

    @property
    def dtype(self):
        return DT_BOOL if self.expr.dtype == DT_BOOL else DT_INDEX

    def __repr__(self) -> str:
        return f"SymbolicScalar({self.expr!r})"


Affine = Dict[Optional[int], int]  # Var uid (None: the constant term) -> coefficient


def affine_form(e: ir.Expr) -> Optional[Affine]:
    """``e`` as an integer affine form over its Vars (so ``(i + 1) * 4 - i * 4`` becomes ``4``), or None."""
    if isinstance(e, ir.Const) and is_static(e.value):
        return {None: int(e.value)}
    if isinstance(e, ir.Var):
        return {e.uid: 1}
    if not isinstance(e, ir.BinOp) or e.op not in ("+", "-", "*"):
        return None
    a, b = affine_form(e.lhs), affine_form(e.rhs)
    if a is None or b is None:
        return None
    if e.op == "*":
        if set(a) == {None}:
            a, b = b, a
        if set(b) != {None}:
            return None  # a product of two variables
        return {k: c * b[None] for k, c in a.items()}
    sign = 1 if e.op == "+" else -1
    out = dict(a)
    for k, c in b.items():
        out[k] = out.get(k, 0) + sign * c
    return {k: c for k, c in out.items() if c != 0 or k is None}


#: value ranges [lo, hi] of loop indices with fixed bounds (``pypto.loop(4)``: [0, 3]), for bounds()
_LOOP_RANGES: "weakref.WeakKeyDictionary[ir.Var, Tuple[int, int]]" = state.LOOP_RANGES  # process-wide: state.py


def note_loop_range(var: ir.Var, start, stop, step) -> None:
    """Record the values loop index ``var`` takes when start/stop/step are fixed and it runs at all
    (and forget an earlier recording's range: the recorder hands out the same variables again)."""
    _LOOP_RANGES.pop(var, None)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in (start, stop, step)) and step != 0:
        values = range(start, stop, step)
        if len(values) > 0:
            _LOOP_RANGES[var] = (min(values[0], values[-1]), max(values[0], values[-1]))


def bounds(value) -> Optional[Tuple[int, int]]:
    """[lo, hi] that an integer dim/offset expression provably stays in (interval arithmetic over the
    loop indices' ranges), or None when unknown (a DYNAMIC dim, an index of a loop with runtime bounds)."""
    e = to_expr(value) if isinstance(value, (SymbolicScalar, ir.Expr)) or is_static(value) else None
    if isinstance(e, ir.Const):
        return (e.value, e.value) if is_static(e.value) else None
    if isinstance(e, ir.Var):
        return _LOOP_RANGES.get(e)
    form = affine_form(e) if e is not None else None
    if form is not None:  # each variable once: exact (``(i + 4) - i`` is 4)
        ranges = {v.uid: r for v, r in _LOOP_RANGES.items()}
        lo = hi = form.get(None, 0)
        for uid, c in form.items():
            if uid is None:
                continue
            if uid not in ranges:
                return None
            ends = (c * ranges[uid][0], c * ranges[uid][1])
            lo, hi = lo + min(ends), hi + max(ends)
        return lo, hi
    if not isinstance(e, ir.BinOp) or e.op not in ("+", "-", "*", "//", "min", "max"):
        return None
    x, y = bounds(e.lhs), bounds(e.rhs)
    if x is None or y is None:
        return None
    if e.op == "+":
        return x[0] + y[0], x[1] + y[1]
    if e.op == "-":
        return x[0] - y[1], x[1] - y[0]
    if e.op == "*":
        corners = [p * q for p in x for q in y]
        return min(corners), max(corners)
    if e.op == "//":
        return (x[0] // y[0], x[1] // y[0]) if y[0] == y[1] and y[0] > 0 else None
    pick = min if e.op == "min" else max
    return pick(x[0], y[0]), pick(x[1], y[1])


def _proved_smaller(a, b):
    """``(smaller, larger)`` of ``a`` and ``b`` where the loop ranges prove one never exceeds the other
    (each as an immediate where its range is one value), else ``None``."""
    ba, bb = bounds(a), bounds(b)
    if ba is not None and bb is not None:
        a = SymbolicScalar(ba[0]) if ba[0] == ba[1] else SymbolicScalar(a)
        b = SymbolicScalar(bb[0]) if bb[0] == bb[1] else SymbolicScalar(b)
        if ba[1] <= bb[0]:
            return a, b
        if bb[1] <= ba[0]:
            return b, a
    return None


def sym_min(a, b):
    """``pypto.min(a, b)``: works on ints and SymbolicScalars; where the loop ranges prove one side
    never larger, that side (so ``min(8, 32 - 8*i)`` over ``pypto.loop(4)`` is the immediate 8)."""
    if not isinstance(a, SymbolicScalar) and not isinstance(b, SymbolicScalar):
        return min(a, b)
    proved = _proved_smaller(a, b)
    return proved[0] if proved else _wrap("min", a, b)


def sym_max(a, b):
    """``pypto.max(a, b)``: works on ints and SymbolicScalars; folds like :func:`sym_min`."""
    if not isinstance(a, SymbolicScalar) and not isinstance(b, SymbolicScalar):
        return max(a, b)
    proved = _proved_smaller(a, b)
    return proved[1] if proved else _wrap("max", a, b)


def is_static(d) -> bool:
    return isinstance(d, int) and not isinstance(d, bool)


def format_dims(shape) -> str:
    """``[8, ?, 64]``: a shape in messages, "?" for a dim known only at run time."""
    return "[" + ", ".join(str(d) if is_static(d) else "?" for d in shape) + "]"
