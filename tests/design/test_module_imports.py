"""Every module of ``pypto_pro`` and ``pypto`` imports on its own, in an interpreter where none of the
project's modules is loaded yet: no circular imports, no module that only works when another was
imported first (an emitter table that needs the op table filled, a runtime that needs the language).

Each module gets a fresh child process.  To keep this to seconds on a small machine the children are
forked from one server process that has loaded only third-party libraries (numpy, ml_dtypes, torch): a forked child holds
no module of the project, so its import of the module under test runs the project's import graph from
scratch, exactly as ``python -c "import <module>"`` would.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGES = ("pypto_pro", "pypto")

#: the server: preloads third-party libraries, then forks one child per module name read from stdin
#: (os.fork keeps the parent free of project modules) and prints "ok <module>" or "FAIL <module> <error>".
_SERVER = r"""
import os, sys, traceback
import importlib
for lib in ("numpy", "ml_dtypes", "torch"):  # third-party, shared by every child (torch is optional)
    try:
        importlib.import_module(lib)
    except ImportError:
        pass
assert not any(m.split(".")[0] in ("pypto", "pypto_pro") for m in sys.modules), "server imported the project"
names = sys.stdin.read().split()
children = {}
for name in names:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            __import__(name)
            msg = "ok " + name
        except BaseException as e:
            last = traceback.format_exception_only(type(e), e)[-1].strip()
            msg = "FAIL " + name + " " + last
        os.write(w, msg.encode())
        os._exit(0)
    os.close(w)
    children[pid] = r
    if len(children) >= 4:
        done, _ = os.wait()
        with os.fdopen(children.pop(done)) as f:
            print(f.read(), flush=True)
for pid, r in children.items():
    os.waitpid(pid, 0)
    with os.fdopen(r) as f:
        print(f.read(), flush=True)
"""


def _modules() -> list:
    names = []
    for pkg in PACKAGES:
        for path in sorted((SRC / pkg).rglob("*.py")):
            rel = path.relative_to(SRC).with_suffix("")
            parts = list(rel.parts)
            if "_shim" in parts:  # the torch_npu stand-in's files are imported as top-level `torch_npu`
                continue
            if parts[-1] == "__main__":  # `python -m <package>` entry points are scripts, run, not imported
                continue
            if parts[-1] == "__init__":
                parts.pop()
            names.append(".".join(parts))
    return names


def test_every_module_imports_alone():
    modules = _modules()
    assert len(modules) > 100
    env = dict(os.environ, PYTHONPATH=str(SRC))
    proc = subprocess.run([sys.executable, "-c", _SERVER], input=" ".join(modules), capture_output=True,
                          text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(("ok ", "FAIL "))]
    failed = [ln for ln in lines if not ln.startswith("ok ")]
    assert not failed, "modules that fail to import in a fresh interpreter:\n" + "\n".join(failed)
    assert len(lines) == len(modules)


@pytest.mark.parametrize("module", ["pypto_pro.runtime.jit", "pypto_pro.backends.cpu.emit"])
def test_reported_modules_import_with_plain_python(module):
    """The two imports the design review found broken, run literally as ``python -c``."""
    env = dict(os.environ, PYTHONPATH=str(SRC))
    proc = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
