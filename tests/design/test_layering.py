"""Only the backend protocol names backends: no module outside ``pypto_pro/backends/`` imports a
backend (``pypto_pro.backends.<name>``), at module level or inside a function, or switches behaviour on
a backend's name; backends import each other only where listed below.

The op table's ``run`` functions work on the views their ``ctx`` hands them; the runtime and the tensor
frontend reach the backends through ``pypto_pro.backends`` (docs/architecture.md, "Backends and
layering").  A backend-specific need (a C launcher, a block count, declining a frozen relaunch, a
frozen tensor-level call) is a protocol entry the backend fills in, not an import of it.
"""
from __future__ import annotations

import ast
import pathlib
from typing import Dict, Iterator, List, Tuple

SRC = pathlib.Path(__file__).resolve().parents[2] / "src"
BACKENDS = ("cpu", "interp", "sim")

#: the only imports of one backend by another: importer backend -> {imported module prefix: why}
BACKEND_IMPORTS: Dict[str, Dict[str, str]] = {
    "sim": {
        # the simulator runs the interpreter's executor under its observer: its values are the oracle's
        "pypto_pro.backends.interp.executor": "recorder.py/simulate.py drive the interpreter",
        "pypto_pro.backends.interp.f16": "the compiled fast path rounds fp16 as the interpreter does",
        # its compiled fast path traces the cpu backend's generated C++ and compiles with its toolchain
        "pypto_pro.backends.cpu": "fast/: the cpu code generator, toolchain and launcher",
    },
    "interp": {"pypto_pro.backends.cpu.toolchain": "f16.py compiles its fp16 encoder with the C++ toolchain"},
    "cpu": {"pypto_pro.backends.sim.fast.replaylib": "prebuilt.py builds the simulator's replay library "
                                                     "with the runtime library (same toolchain)"},
}

#: modules outside the backends that may name a backend as a string constant, and why (selection
#: only: which backend runs, never what it does).  backends/__init__.py (the protocol: KNOWN,
#: PREFERENCE, FALLBACK, REFERENCE) is inside the backends and not scanned.
NAME_ALLOWED: Dict[str, str] = {
    "pypto/options.py": "RUN_MODE_BACKENDS: runtime_options run_mode -> the backend it selects",
}


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


def _outside_backends() -> Iterator[pathlib.Path]:
    """Every module of the source tree that is not part of a backend."""
    for path in sorted(SRC.rglob("*.py")):
        if not path.is_relative_to(SRC / "pypto_pro" / "backends"):
            yield path


def test_no_layer_imports_a_backend():
    found = []
    for path in _outside_backends():
        for line, module in _imports(path):
            if _names_a_backend(module):
                found.append(f"{path.relative_to(SRC)}:{line} imports {module}")
    assert not found, "go through the backend protocol (pypto_pro/backends/__init__.py):\n" + "\n".join(found)


def test_backends_import_each_other_only_where_listed():
    found = []
    for name in BACKENDS:
        allowed = BACKEND_IMPORTS.get(name, {})
        for path in sorted((SRC / "pypto_pro" / "backends" / name).rglob("*.py")):
            for line, module in _imports(path):
                parts = module.split(".")
                # a listed module, inside one, or the package holding one (``from ..interp import f16``)
                if (_names_a_backend(module) and parts[2] != name
                        and not any(module == m or module.startswith(m + ".") or m.startswith(module + ".")
                                    for m in allowed)):
                    found.append(f"{path.relative_to(SRC)}:{line} imports {module}")
    assert not found, ("a backend reaches into another: use the protocol, a neutral module, or list the import "
                       "with its reason in BACKEND_IMPORTS:\n" + "\n".join(found))


def _torch_device_strings(tree: ast.AST) -> set:
    """ids of the string constants that name a torch device, not a backend: ``x.device.type != "cpu"``,
    ``torch.device("cpu")``, ``devices=["cpu", ...]``."""
    found = set()
    for node in ast.walk(tree):
        operands: List[ast.AST] = []
        if isinstance(node, ast.Compare) and any(isinstance(x, ast.Attribute) and x.attr == "type"
                                                 and isinstance(x.value, ast.Attribute) and x.value.attr == "device"
                                                 for x in (node.left, *node.comparators)):
            operands = [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "device":
            operands = list(node.args)
        elif isinstance(node, ast.keyword) and node.arg == "devices":
            operands = [node.value]
        for x in operands:
            found.update(id(c) for c in ast.walk(x) if isinstance(c, ast.Constant))
    return found


def _backend_names(source: str) -> List[Tuple[int, str]]:
    """(line, name) of every string constant naming a backend in ``source``, docstrings and torch device
    names aside."""
    tree = ast.parse(source)
    skip = _torch_device_strings(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skip.add(id(first.value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in BACKENDS and id(node) not in skip]


def test_the_name_scan_tells_a_backend_switch_from_a_torch_device():
    assert _backend_names('if backend == "cpu":\n    pass\n') == [(1, "cpu")]
    assert _backend_names('MODES = {"sim": 1}\n') == [(1, "sim")]
    assert _backend_names('"""runs on "interp" or cpu"""\nok = t.device.type != "cpu" or torch.device("cpu")\n'
                          'f(devices=["cpu"])\n') == []


def test_no_behaviour_is_switched_on_a_backend_name_outside_the_backends():
    found = []
    for path in _outside_backends():
        rel = path.relative_to(SRC).as_posix()
        if rel in NAME_ALLOWED:
            continue
        found += [f"{rel}:{line} names the {name!r} backend" for line, name in _backend_names(path.read_text())]
    assert not found, ("decide through the backend protocol (pypto_pro/backends/__init__.py), not on a backend's "
                       "name; selection belongs in NAME_ALLOWED with its reason:\n" + "\n".join(found))


def test_ops_reach_the_executor_only_through_their_ctx():
    """The op table's ``run`` functions see an ``ExecCtx`` (its tiles, scalars, ``note_*`` hooks and
    ``observed``), not the interpreter behind it (``ctx.interp``)."""
    found = []
    for path in _outside_backends():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "interp":
                found.append(f"{path.relative_to(SRC)}:{node.lineno} reads .interp")
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr" and len(node.args) > 1
                    and isinstance(node.args[1], ast.Constant) and node.args[1].value == "interp"):
                found.append(f"{path.relative_to(SRC)}:{node.lineno} reads .interp")
    assert not found, "use the ExecCtx's own members (backends/interp/executor.py):\n" + "\n".join(found)
