"""Loop-carry patterns that recording a ``pypto.loop`` body once still gets right (used by
``control.check_loop_bodies``, which otherwise rejects a Python variable read before it is assigned
in the body):

* a loop of one static iteration (``pypto.loop(1)``) has no next iteration to carry into;
* ``x = pypto.reshape(x, shape, ...)`` re-views the same elements in row-major order, so reshaping an
  already reshaped ``x`` to ``shape`` gives what the first iteration gave;
* inside a plain Python ``for``/``while`` nested in the body, a name that loop assigns may come from
  its own previous (Python) iteration, the usual ``acc = a if k == 0 else acc + a`` of an unrolled
  split; the recorder runs that Python loop in full.
"""
from __future__ import annotations

import ast
from typing import Optional


def _const_int(node: ast.expr) -> Optional[int]:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def single_trip(call: ast.Call) -> bool:
    """``pypto.loop(1)``, ``pypto.loop(0, 1)``, ``pypto.loop(s, s + 1, 1)``-like calls with static bounds
    of exactly one iteration (``stop=`` keywords are not looked at)."""
    args = [_const_int(a) for a in call.args[:3]]
    if len(args) == 1:
        return args[0] == 1
    if len(args) >= 2 and None not in args:
        step = args[2] if len(args) == 3 else 1
        return step != 0 and len(range(args[0], args[1], step)) == 1
    return False


def is_self_reshape(stmt: ast.stmt) -> Optional[str]:
    """The name ``x`` of ``x = <...>.reshape(x, ...)`` / ``x = reshape(x, ...)``, else None."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return None
    call = stmt.value
    if not isinstance(call, ast.Call) or not call.args:
        return None
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    first = call.args[0]
    target = stmt.targets[0].id
    if name == "reshape" and isinstance(first, ast.Name) and first.id == target:
        rest = call.args[1:] + [k.value for k in call.keywords]
        if not any(isinstance(n, ast.Name) and n.id == target for r in rest for n in ast.walk(r)):
            return target
    return None
