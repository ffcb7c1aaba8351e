"""Runtime scalars against compile-time collections: ``x in seq``, ``x in pl.range(...)``, ``seq[i]``.

The official frontend lowers these when ``x`` or ``i`` is known only at run time, so a kernel may
write ``if i in (0, 2, 4):``, ``if i not in pl.range(6, n, 2):`` or ``event_id=IDS[slot]``.  Here:

* ``x in seq`` (seq a compile-time list/tuple/set of scalars) is ``x == s0 or x == s1 ...``;
* ``x in pl.range(start, stop, step)`` / ``range(...)`` (bounds may be runtime, the step must be a
  compile-time int) is Python's range membership: between the bounds and on the step;
* ``seq[i]`` (seq a compile-time list/tuple of numbers, ``i`` a runtime int) selects the element,
  Python's negative indices included; an index outside ``[-len, len)`` stops the kernel with a
  KernelRuntimeError at the subscript's line (``pl.trap``), as an IndexError would.
"""
from __future__ import annotations

import ast
import builtins
import numbers
from typing import Any, Optional, Tuple

from ... import dtypes as dt
from ...errors import KernelSyntaxError, KernelTypeError
from ...ir import nodes as ir

_SEQUENCES = (list, tuple, set, frozenset, builtins.range)


def _and(a, b):
    if not isinstance(a, ir.Expr) and not isinstance(b, ir.Expr):
        return bool(a) and bool(b)
    if not isinstance(a, ir.Expr):
        return b if a else False
    if not isinstance(b, ir.Expr):
        return a if b else False
    return ir.BinOp("and", a, b, dt.DT_BOOL)


def _or(a, b):
    if not isinstance(a, ir.Expr) and not isinstance(b, ir.Expr):
        return bool(a) or bool(b)
    if not isinstance(a, ir.Expr):
        return True if a else b
    if not isinstance(b, ir.Expr):
        return True if b else a
    return ir.BinOp("or", a, b, dt.DT_BOOL)


def range_call(parser, node: ast.expr) -> Optional[Tuple[Any, Any, Any]]:
    """(start, stop, step) when ``node`` is a ``pl.range(...)`` or ``range(...)`` call, else None."""
    if not isinstance(node, ast.Call) or node.keywords and any(k.arg != "step" for k in node.keywords):
        return None
    func = parser.eval(node.func)
    if func is not builtins.range and getattr(func, "__pto_intrinsic__", None) != "range":
        return None
    bounds = [parser.eval(a) for a in node.args]
    step = [parser.eval(k.value) for k in node.keywords]
    if len(bounds) + len(step) > 3 or not bounds or (step and len(bounds) == 3):
        raise parser.err(KernelSyntaxError, "range(...) takes stop, start/stop or start/stop/step", node)
    bounds = ([0] if len(bounds) == 1 else []) + bounds + step
    start, stop, step = (bounds + [1])[:3]
    return start, stop, step


def contains(parser, x, right_node: ast.expr, node):
    """``x in <right_node>`` as a compile-time bool or a runtime BOOL expression."""
    bounds = range_call(parser, right_node)
    if bounds is not None:
        return _in_range(parser, x, *bounds, node)
    seq = parser.eval(right_node)
    runtime = isinstance(x, ir.Expr)
    if not runtime and not isinstance(seq, ir.Expr):
        try:
            return x in seq
        except TypeError as e:
            raise parser.err(KernelSyntaxError, f"compile-time 'in' failed: {e}", node) from None
    if not isinstance(seq, _SEQUENCES):
        raise parser.err(KernelSyntaxError, "'in' with a runtime value needs a compile-time list, tuple or set, or "
                         "a pl.range(...), on its right", node)
    result: Any = False
    for item in seq:
        if not isinstance(item, (numbers.Number, ir.Expr)):
            raise parser.err(KernelTypeError, f"'in' compares a runtime scalar with the items of a sequence; "
                             f"{item!r} is no scalar", node)
        result = _or(result, parser.binop("==", x, item, node))
    return result


def _in_range(parser, x, start, stop, step, node):
    for what, v in (("start", start), ("stop", stop), ("step", step), ("value", x)):
        if not ir.is_integral(v):
            raise parser.err(KernelTypeError, f"'in range(...)': the {what} must be an integer, got "
                             f"{ir.describe_value(v)}", node)
    if isinstance(step, ir.Expr) or step == 0:
        raise parser.err(KernelSyntaxError, "'in pl.range(start, stop, step)' needs a compile-time, non-zero step",
                         node)
    if not any(isinstance(v, ir.Expr) for v in (x, start, stop)):
        return x in builtins.range(start, stop, step)
    lo, hi = ((start, stop) if step > 0 else (stop, start))
    below, above = (">=", "<") if step > 0 else ("<=", ">")
    inside = _and(parser.binop(below, x, start, node), parser.binop(above, x, stop, node))
    if abs(step) == 1:
        return inside
    offset = parser.binop("-", x, start, node) if step > 0 else parser.binop("-", start, x, node)
    return _and(inside, parser.binop("==", parser.binop("%", offset, abs(step), node), 0, node))


def select(parser, seq, index, node):
    """``seq[index]`` for a compile-time sequence and a runtime integer index."""
    if not isinstance(seq, (list, tuple)) or not seq or isinstance(index, tuple):
        raise parser.err(KernelSyntaxError, "indexing a compile-time value (list, tuple, tensor shape) needs a "
                         "compile-time index, or a runtime int indexing a non-empty list or tuple of numbers", node)
    if not all(isinstance(v, numbers.Number) for v in seq):
        raise parser.err(KernelSyntaxError, "a runtime index selects from a list or tuple of numbers only (here "
                         "it holds " + ", ".join(sorted({type(v).__name__ for v in seq})) + "); use a "
                         "compile-time index", node)
    if not ir.is_integral(index):
        raise parser.err(KernelTypeError, f"a list index must be an integer, got {ir.describe_value(index)}", node)
    n = len(seq)
    floats = any(isinstance(v, float) for v in seq)
    items = [ir.Const(float(v), dt.DT_FP32) if floats else ir.const(int(v)) for v in seq]
    i = parser.new_var("list_index", index, node)
    outside = _or(parser.binop("<", i, -n, node), parser.binop(">=", i, n, node))
    parser.emit(ir.If(parser.loc(node), outside, [ir.OpStmt(parser.loc(node), parser.op_named("trap"), {})], []))
    result = items[-1]
    for k in range(n - 2, -1, -1):
        hit = _or(parser.binop("==", i, k, node), parser.binop("==", i, k - n, node))
        result = ir.Select(hit, items[k], result, result.dtype)
    return result
