"""A CPU stand-in for the NPU layer (``torch_npu``) so that NPU scripts and test suites run unchanged.

Programs written for Ascend NPUs ``import torch_npu``, call ``torch.npu.set_device("npu:0")``, make
tensors with ``device="npu:0"`` or ``.npu()`` and end with ``torch.npu.synchronize()``.  Our kernels
run on the host, so this module maps that layer onto the CPU:

* ``import torch_npu`` gives :mod:`pypto_pro.npu.torch_npu_module` (device queries, streams and
  events that are synchronous, ``get_soc_version`` / ``get_device_name`` of the arch we model);
* ``torch.npu`` is that module's ``npu`` namespace;
* a ``device="npu"`` / ``"npu:N"`` / ``torch.device("npu", N)`` anywhere a torch function takes a
  device, ``Tensor.to("npu")``, ``Tensor.npu()`` and ``Module.npu()`` mean the CPU;
* ``TILE_FWK_DEVICE_ID`` (the official scripts' device index) defaults to ``0``, the one device;
* NPU-only facilities (on-board profiling, device dumps, the CANN ``torch_npu.npu_*`` operators)
  raise :class:`NpuOnlyFacilityError` naming the facility -- never a silent stand-in result.

It is active only when asked for -- ``python -m pypto_pro.npu script.py``, the ``pypto-npu`` console
script, ``pytest -p pypto_pro.npu.plugin`` or :func:`install` -- and never when a real ``torch_npu``
is installed (then it does nothing and says so at INFO).
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from typing import Optional

from ..log import logger

SHIM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_shim")
"""Directory holding the ``torch_npu`` package that imports this stand-in (put on ``PYTHONPATH`` by
the runner so that child processes get the stand-in too)."""

_installed = False


class NpuOnlyFacilityError(NotImplementedError):
    """An NPU-only facility was used under the CPU stand-in (it has no CPU meaning here)."""

    def __init__(self, facility: str, hint: str = ""):
        message = (f"{facility} is an NPU-only facility: the CPU stand-in for torch_npu "
                   f"(pypto_pro.npu) cannot provide it")
        if hint:
            message += f"; {hint}"
        super().__init__(message)
        self.facility = facility


def real_torch_npu_spec() -> Optional[importlib.machinery.ModuleSpec]:
    """The spec of an installed ``torch_npu`` other than our shim, or ``None``."""
    shim = os.path.normcase(os.path.realpath(SHIM_DIR))
    search = [p for p in sys.path if os.path.normcase(os.path.realpath(p or os.getcwd())) != shim]
    return importlib.machinery.PathFinder.find_spec("torch_npu", search)


def install() -> bool:
    """Activate the stand-in in this process; return whether it is active.

    Idempotent.  Does nothing (and returns ``False``) when a real ``torch_npu`` is installed.
    """
    global _installed
    if _installed:
        return True
    if real_torch_npu_spec() is not None:
        logger.info("a real torch_npu is installed: the CPU stand-in (pypto_pro.npu) stays inactive")
        return False
    from . import devices, hccl, torch_npu_module
    devices.activate(torch_npu_module)
    hccl.register()
    sys.modules.setdefault("torch_npu", torch_npu_module)
    # the official scripts read their device from TILE_FWK_DEVICE_ID and quietly do nothing without it
    os.environ.setdefault("TILE_FWK_DEVICE_ID", "0")
    _installed = True
    logger.info("torch_npu CPU stand-in active: device 'npu' means the CPU; arch %s (%s)",
                torch_npu_module.ARCH.name, torch_npu_module.npu.get_device_name())
    return True


def is_active() -> bool:
    """Whether :func:`install` has activated the stand-in in this process."""
    return _installed
