"""The checked-in API files generated from the op table are current and complete.

``src/pypto_pro/language/__init__.pyi``, ``src/pypto/__init__.pyi`` and ``docs/ops.md`` are written by
``tools/gen_stubs.py``; when an op is added or its signature or docstring changes they go stale, and this
test says which file to regenerate."""
import ast
import importlib
import inspect
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import pypto
import pypto_pro.language as pl
from pypto_pro.ir.optable import OPS

ROOT = Path(__file__).resolve().parent.parent


def stub_names(path: Path) -> dict:
    """Module-level names a .pyi declares: name -> its ast node (def, class, annotated name or import)."""
    names = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.AnnAssign):
            names[node.target.id] = node
        elif isinstance(node, ast.Assign):
            names.update({t.id: node for t in node.targets})
        elif isinstance(node, ast.ImportFrom):
            names.update({a.asname or a.name: node for a in node.names})
    return names


def test_generated_files_are_current():
    # a fresh interpreter: what the tool sees must not depend on modules this test session imported
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_stubs.py"), "--check"], capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 0, f"regenerate with `python tools/gen_stubs.py`:\n{proc.stdout}{proc.stderr}"


@pytest.mark.parametrize("module,path", [(pl, "src/pypto_pro/language/__init__.pyi"), (pypto, "src/pypto/__init__.pyi")],
                         ids=["pl", "pypto"])
def test_stub_declares_every_public_name(module, path):
    # every submodule imported first: which ones earlier tests happened to import must not matter
    for sub in pkgutil.iter_modules(module.__path__):
        importlib.import_module(f"{module.__name__}.{sub.name}")
    declared = stub_names(ROOT / path)
    internal = {"annotations", "intrinsics", "spellings", "stubs", "parser", "vf", "simt", "ops", "lower", "tensor",
                "graph", "reference", "symbolic", "options", "converter", "datatype", "element", "slips",
                "data_scalar"}
    missing = [n for n in dir(module) if not n.startswith("_") and n not in declared
               and not (inspect.ismodule(getattr(module, n)) and (n in internal or getattr(module, n).__name__
                                                                 != f"{module.__name__}.{n}"))]
    assert not missing


def test_every_public_op_has_its_signature_and_doc_in_the_stub():
    declared = stub_names(ROOT / "src/pypto_pro/language/__init__.pyi")
    system = {n.name: n for n in declared["system"].body if isinstance(n, ast.FunctionDef)}
    for opdef in OPS.values():
        if opdef.internal:
            continue
        for alias in opdef.aliases:
            node = system.get(alias.split(".", 1)[1]) if alias.startswith("system.") else declared.get(alias)
            if alias.startswith("mutex."):
                node = {n.name: n for n in declared["mutex"].body if isinstance(n, ast.FunctionDef)}[alias[6:]]
            assert isinstance(node, ast.FunctionDef), alias
            params = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
            if node.args.vararg:
                params.append(node.args.vararg.arg)
            assert sorted(params) == sorted(opdef.keywords.get(p.name, p.name) for p in opdef.params), alias
            assert inspect.cleandoc(opdef.doc) in ast.get_docstring(node), alias


def test_op_reference_lists_every_op():
    text = (ROOT / "docs" / "ops.md").read_text()
    for name in OPS:
        assert f"### {name}\n" in text
