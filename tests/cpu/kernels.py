"""Generating tile kernels as Python source (the parser reads kernel source, so programs are files),
and C++ checkers compiled against the backend's headers."""
import ctypes
import importlib.util
import itertools
from pathlib import Path

import pytest

from pypto_pro.backends.cpu.toolchain import compile_shared, find_toolchain

_n = itertools.count()

HEADER = "import pypto_pro.language as pl\n\n"


def load_kernels(tmp_dir: Path, source: str):
    """Import ``source`` from a fresh module file; returns the module."""
    path = Path(tmp_dir) / f"gen_kernel_{next(_n)}.py"
    path.write_text(HEADER + source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def compile_checker(directory: Path, source: str) -> ctypes.CDLL:
    """Build ``source`` (C++ including "pto/..." headers, exporting extern "C" functions) with the
    kernels' compiler and flags, and load it; skips the test where there is no compiler."""
    tc = find_toolchain()
    if tc is None:
        pytest.skip("no C++ compiler")
    (directory / "checker.cpp").write_text(source)
    compile_shared(tc, directory / "checker.cpp", directory / "checker.so", opt="-O2")
    return ctypes.CDLL(str(directory / "checker.so"))
