"""Only the backend protocol names backends: no module of the layers above or below them imports a
backend (``pypto_pro.backends.<name>``), at module level or inside a function.

The op table's ``run`` functions work on the views their ``ctx`` hands them; the runtime and the tensor
frontend reach the backends through ``pypto_pro.backends`` (docs/architecture.md, "Backends and
layering").  A backend-specific need (a C launcher, a block count, declining a frozen relaunch) is a
protocol entry the backend fills in, not an import of it.
"""
from __future__ import annotations

import ast
import pathlib
from typing import Iterator, Tuple

SRC = pathlib.Path(__file__).resolve().parents[2] / "src"
LAYERS = ("pypto_pro/ir", "pypto_pro/ops", "pypto_pro/passes", "pypto_pro/language", "pypto_pro/runtime",
          "pypto_pro/comm", "pypto")


def _imports(path: pathlib.Path) -> Iterator[Tuple[int, str]]:
    """(line, absolute module name) of every import in ``path``."""
    package = list(path.relative_to(SRC).with_suffix("").parts)[:-1]  # the package holding the module
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            yield node.lineno, module
            for alias in node.names:  # from pypto_pro.backends import cpu
                yield node.lineno, f"{module}.{alias.name}"


def _names_a_backend(module: str) -> bool:
    parts = module.split(".")
    return parts[:2] == ["pypto_pro", "backends"] and len(parts) > 2 and parts[2] in ("cpu", "interp", "sim")


def test_relative_imports_resolve():
    found = {module for _, module in _imports(SRC / "pypto_pro" / "runtime" / "jit.py")}
    assert {"pypto_pro.backends", "pypto_pro.runtime.args", "pypto_pro.ir.verify"} <= found


def test_no_layer_imports_a_backend():
    found = []
    for layer in LAYERS:
        root = SRC / layer
        for path in sorted(root.rglob("*.py")):
            if layer == "pypto" and path.is_relative_to(SRC / "pypto_pro"):
                continue
            for line, module in _imports(path):
                if _names_a_backend(module):
                    found.append(f"{path.relative_to(SRC)}:{line} imports {module}")
    assert not found, "go through the backend protocol (pypto_pro/backends/__init__.py):\n" + "\n".join(found)
