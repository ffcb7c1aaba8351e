"""Generating tile kernels as Python source (the parser reads kernel source, so programs are files)."""
import importlib.util
import itertools
from pathlib import Path

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
