"""Backends consuming the tile IR.

A backend is a module ``pypto_pro.backends.<name>`` exposing
``run(kernel: KernelIR, tensors: dict[int, ndarray], scalars: dict[int, value], block_dim: int, *, jit=None)``;
its return value (e.g. the simulator's report) becomes ``kernel.last_report``.  ``jit`` is the
:class:`~pypto_pro.runtime.jit.JitKernel` being launched (``None`` for programmatic launches), so
backends may keep per-kernel state such as compiled libraries.
"""
from __future__ import annotations

import importlib
from typing import Callable

KNOWN = ("interp", "cpu", "sim")


def get_runner(name: str) -> Callable:
    """The ``run`` function of backend ``name`` (imported on first use)."""
    module = importlib.import_module(f"{__name__}.{name}")
    runner = getattr(module, "run", None)
    if runner is None:
        raise NotImplementedError(f"the '{name}' backend")
    return runner
