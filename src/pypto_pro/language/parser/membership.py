"""``x in seq`` / ``x not in seq`` with a runtime ``x`` or a ``range`` whose bounds are runtime.

``seq`` is a compile-time list or tuple (``x == item`` for each item, or-ed) or a ``pl.range``/``range``
call (a bounds test and, for a step other than 1, a divisibility test).  Compile-time operands are still
folded by Python.
"""
from __future__ import annotations

import ast
import builtins

from ... import dtypes as dt
from ...errors import KernelSyntaxError
from ...ir import nodes as ir


def _and(a: ir.Expr, b: ir.Expr) -> ir.Expr:
    return ir.BinOp("and", a, b, dt.DT_BOOL)


class MembershipMixin:
    """The parser's ``in`` / ``not in`` (mixed into KernelParser)."""

    def membership(self, left, right_node: ast.expr, negate: bool, node):
        """(value of ``left in right`` (or ``not in``), the evaluated right operand)."""
        from . import is_runtime, is_scalar, to_expr
        bounds = self._range_bounds(right_node)
        if bounds is not None:
            right = None
            if not is_runtime(left) and not any(is_runtime(b) for b in bounds):
                found = left in builtins.range(*bounds)
            else:
                found = self._in_range(left, *bounds, node)
        else:
            right = self.eval(right_node)
            if not is_runtime(left) and not is_runtime(right) and not (
                    isinstance(right, (list, tuple)) and any(is_runtime(v) for v in right)):
                try:
                    found = left in right
                except TypeError as e:
                    raise self.err(KernelSyntaxError, f"compile-time 'in' failed: {e}", node) from None
            elif isinstance(right, (list, tuple)) and is_scalar(left) and all(is_scalar(v) for v in right):
                found = False
                for item in right:
                    eq = self.binop("==", left, item, node)
                    found = eq if found is False else (
                        True if eq is True or found is True else ir.BinOp("or", to_expr(found), to_expr(eq),
                                                                          dt.DT_BOOL))
            else:
                raise self.err(KernelSyntaxError, "a runtime 'in' tests a scalar against a compile-time list or "
                               "tuple of scalars or a range", node)
        if negate:
            found = ir.UnOp("not", found, dt.DT_BOOL) if is_runtime(found) else not found
        return found, right

    def _range_bounds(self, right_node: ast.expr):
        """(start, stop, step) of a ``pl.range(...)`` / ``range(...)`` call, else None."""
        if not isinstance(right_node, ast.Call) or right_node.keywords and any(
                k.arg != "step" for k in right_node.keywords):
            return None
        func = self.eval(right_node.func)
        if func is not builtins.range and getattr(func, "__pto_intrinsic__", None) != "range":
            return None
        args = [self.eval(a) for a in right_node.args] + [self.eval(k.value) for k in right_node.keywords]
        if not 1 <= len(args) <= 3:
            raise self.err(KernelSyntaxError, "range takes 1 to 3 arguments", right_node)
        for a in args:
            self.require_int(a, "a range bound", right_node)
        start, stop, step = ([0] + args + [1])[:3] if len(args) == 1 else (args + [1])[:3]
        return start, stop, step

    def _in_range(self, x, start, stop, step, node) -> ir.Expr:
        from . import is_runtime, to_expr
        if is_runtime(step):
            raise self.not_implemented("'in' a range with a runtime step", node)
        if step == 0:
            raise self.err(KernelSyntaxError, "range step must not be 0", node)
        x, start, stop = to_expr(x), to_expr(start), to_expr(stop)
        if step > 0:
            inside = _and(ir.BinOp("<=", start, x, dt.DT_BOOL), ir.BinOp("<", x, stop, dt.DT_BOOL))
            offset = ir.BinOp("-", x, start, dt.DT_INT64)
        else:
            inside = _and(ir.BinOp("<", stop, x, dt.DT_BOOL), ir.BinOp("<=", x, start, dt.DT_BOOL))
            offset = ir.BinOp("-", start, x, dt.DT_INT64)
        if abs(step) == 1:
            return inside
        rem = ir.BinOp("%", offset, ir.const(abs(step)), dt.DT_INT64)
        return _and(inside, ir.BinOp("==", rem, ir.const(0), dt.DT_BOOL))
