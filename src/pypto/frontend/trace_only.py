"""Names of a kernel whose values never reach the recorded program (``check_loop_bodies`` lets a
``pypto.loop`` body carry them from one iteration to the next).

A kernel body runs in Python while it is recorded, so a Python counter that is only printed
(``print(f"count: {n}")`` then ``n = n + 1``) counts the times the recorder ran that statement, as
officially ("print runs only at compile time; how often depends on the subgraphs"); it cannot change a
result.  A name qualifies when every read of it in the function is inside the arguments of a
``print(...)`` call or on the right of an assignment to that same name alone (``n = n + 1``,
``n += 1``).  Anything else (an operand, an index, a condition, a return) makes it part of the program.
"""
from __future__ import annotations

import ast
from typing import Dict, Set

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def trace_only_names(tree: ast.AST) -> Set[str]:
    """The names of the (outermost) function in ``tree`` whose every read is a print argument or the
    right side of an assignment to that name alone."""
    ok: Dict[str, bool] = {}

    def visit(node: ast.AST, inert: str) -> None:
        """``inert``: '*' inside print(...) arguments, a name on the right of its own assignment, else ''."""
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            ok[node.id] = ok.get(node.id, True) and inert in ("*", node.id)
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            for child in node.args + [k.value for k in node.keywords]:
                visit(child, "*")
            return
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            visit(node.value, "*" if inert == "*" else node.targets[0].id)
            return
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            visit(node.value, "*" if inert == "*" else node.target.id)
            return
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _SCOPES):
                visit_scope(child)
            else:
                visit(child, inert)

    def visit_scope(scope: ast.AST) -> None:
        # a nested function or class reads names through closures: any read there is a real use
        for n in ast.walk(scope):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                ok[n.id] = False

    root = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), tree)
    for stmt in getattr(root, "body", []):
        visit(stmt, "")
    return {name for name, only in ok.items() if only}
