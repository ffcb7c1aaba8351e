"""No function or method is defined twice in one class or module body.

Python keeps the last definition silently: a second ``Node.__post_init__`` (added for the node-op
declaration check) once replaced the one that records each node's kernel line, and the tensor level's
line attribution regressed with no error anywhere.  Overloads, property setters/deleters and
``register``-style decorators are meant to reuse a name and are allowed.
"""
from __future__ import annotations

import ast
import pathlib
from typing import Iterator, List, Tuple

SRC = pathlib.Path(__file__).resolve().parents[2] / "src"
_REUSES_NAME = ("overload", ".setter", ".deleter", ".getter", "register")


def _redefinitions(tree: ast.AST) -> Iterator[Tuple[str, int, int]]:
    for scope in ast.walk(tree):
        if not isinstance(scope, (ast.Module, ast.ClassDef)):
            continue
        seen = {}
        for st in scope.body:
            if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if any(word in ast.unparse(d) for d in st.decorator_list for word in _REUSES_NAME):
                continue
            if st.name in seen:
                yield st.name, seen[st.name], st.lineno
            seen[st.name] = st.lineno


def test_redefinitions_are_detected():
    src = "class C:\n    def f(self): pass\n    def f(self): return 1\n"
    assert list(_redefinitions(ast.parse(src))) == [("f", 2, 3)]


def test_no_function_is_defined_twice_in_one_scope():
    found: List[str] = []
    for path in sorted(SRC.rglob("*.py")):
        for name, first, again in _redefinitions(ast.parse(path.read_text(), str(path))):
            found.append(f"{path.relative_to(SRC)}: {name} defined at line {first} and again at line {again}")
    assert not found, "a later definition silently replaces the earlier one:\n" + "\n".join(found)
