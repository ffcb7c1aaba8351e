"""The compiled CPU backend: tile IR -> C++ (``kernel.cpp``) -> ``call_kernel*.so``, run on a thread pool.

``run(kernel, tensors, scalars, block_dim)`` is the backend entry point (see :mod:`pypto_pro.backends`);
:func:`prepare` builds (or fetches from the in-memory and on-disk caches) the library of one kernel
specialization and raises ``NotImplementedError`` naming the first op the backend cannot emit.
Repeated launches skip argument binding (:func:`frozen_launcher` and, for tensor-level calls,
:func:`frozen_call`, ``relaunch.py``) and, for
``kernel[None, n]`` with torch tensors, Python altogether (:data:`native_launcher`, ``clauncher.py``).
"""
from __future__ import annotations

import threading
import weakref
from typing import Any, Dict

import numpy as np

from ...comm.launch import communicates
from ...ir.nodes import KernelIR
from . import clauncher as native_launcher
from . import prebuilt
from .launcher import CompiledKernel, build, run_compiled
from .toolchain import find_toolchain
from .workers import launch_blocks

_compiled: "weakref.WeakKeyDictionary[KernelIR, CompiledKernel]" = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def available() -> bool:
    """Whether a C++ compiler was found (the backend is usable)."""
    return find_toolchain() is not None


def prepare(kernel: KernelIR, relaunch: bool = False) -> CompiledKernel:
    """The loaded library of ``kernel`` (built on first use; cached in memory and on disk).

    ``relaunch``: for a frozen relauncher, which calls the library directly.  A communicating kernel is
    declined (``NotImplementedError``): its comm ops call back into Python, and their errors and PE
    values reach a launch only through the launch's own wrapper (``comm/launch.py``)."""
    if relaunch and communicates(kernel):
        raise NotImplementedError("a frozen relaunch of a communicating kernel (pypto.distributed)")
    ck = _compiled.get(kernel)
    if ck is not None:
        return ck
    with _lock:
        ck = _compiled.get(kernel)
        if ck is None:
            tc = find_toolchain()
            if tc is None:
                raise NotImplementedError("the cpu backend without a C++ compiler (set $CXX or install g++/clang++)")
            prebuilt.start_background_prebuild()  # a new install: the PCH for the next kernels
            ck = build(kernel, tc)
            _compiled[kernel] = ck
    return ck


def launch(ck: CompiledKernel, tensors: Dict[int, np.ndarray], scalars: Dict[int, Any], block_dim: int) -> None:
    """One launch of a prepared kernel (the backend protocol, :class:`pypto_pro.backends.Backend`)."""
    run_compiled(ck, tensors, scalars, block_dim)


def frozen_launcher(kernel_name: str, ck: CompiledKernel, specs):
    """A relauncher of ``ck`` for one argument signature (``relaunch.py`` writes the arguments)."""
    from .relaunch import frozen_launcher as freeze
    return freeze(kernel_name, ck, specs)


def frozen_call(ck: CompiledKernel, tensors: Dict[int, np.ndarray], scalars: Dict[int, Any], block_dim: int,
                feeds):
    """A repeater of one checked launch of ``ck`` whose later calls change only data pointers
    (``relaunch.py``; :class:`pypto_pro.backends.Feeds`)."""
    from .relaunch import frozen_call as repeat
    return repeat(ck, tensors, scalars, block_dim, feeds)


def run(kernel: KernelIR, tensors: Dict[int, np.ndarray], scalars: Dict[int, Any], block_dim: int, *, jit=None):
    """Backend entry point: compile if needed, then launch ``block_dim`` blocks synchronously."""
    run_compiled(prepare(kernel), tensors, scalars, block_dim)
    return None


__all__ = ["available", "frozen_call", "frozen_launcher", "launch", "launch_blocks", "native_launcher", "prepare", "run"]
