"""``python -m pypto_pro.npu script.py [args]`` (also ``pypto-npu``): run an NPU script on the CPU.

The script runs as ``__main__`` with ``sys.argv`` = ``[script.py, args...]`` and the stand-in active
(:mod:`pypto_pro.npu`); child processes that ``import torch_npu`` get it too.  ``-m module`` runs a
module instead of a file, like ``python -m``.
"""
from __future__ import annotations

import os
import runpy
import sys
from typing import List, Optional

from . import SHIM_DIR, install, real_torch_npu_spec

USAGE = "usage: python -m pypto_pro.npu script.py [args...]   |   python -m pypto_pro.npu -m module [args...]"


def export_shim_path() -> None:
    """Put the ``torch_npu`` shim on ``PYTHONPATH`` so child processes find it (not when a real one exists)."""
    if real_torch_npu_spec() is not None:
        return
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if SHIM_DIR not in parts:
        os.environ["PYTHONPATH"] = os.pathsep.join([SHIM_DIR] + parts)
    if SHIM_DIR not in sys.path:  # multiprocessing's spawn gives children this process's sys.path
        sys.path.append(SHIM_DIR)


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    export_shim_path()
    install()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    if not os.path.exists(script):
        print(f"pypto-npu: no such script: {script}", file=sys.stderr)
        return 2
    sys.argv = argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
