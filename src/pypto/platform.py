"""``pypto.platform.npuarch``: the NPU architecture name of the arch kernels are built for.

The name follows the official ``DAV_<n>`` spelling: a2/a3 (Atlas A2/A3) are ``DAV_2201``, a5
(Ascend 950) is ``DAV_3510``.  The arch is ``$PYPTOPRO_JIT_ARCH`` (default a5), the one the
``torch_npu`` stand-in reports too; setting ``npuarch`` selects the arch of later kernels.
"""
from __future__ import annotations

import os

from pypto_pro.arch import resolve_arch

NPU_ARCH = {"a2": "DAV_2201", "a3": "DAV_2201", "a5": "DAV_3510"}
_FROM_NAME = {"DAV_2201": "a3", "DAV_3510": "a5"}


def get_npu_arch() -> str:
    return NPU_ARCH[resolve_arch(None).name]


def set_npu_arch(name: str) -> None:
    """Select the arch of kernels compiled afterwards (``DAV_2201`` or ``DAV_3510``)."""
    if name not in _FROM_NAME:
        raise ValueError(f"unknown NPU arch {name!r}; expected one of {sorted(_FROM_NAME)}")
    os.environ["PYPTOPRO_JIT_ARCH"] = _FROM_NAME[name]


class _Platform:
    """``pypto.platform``: facts about the NPU kernels are built for."""

    @property
    def npuarch(self) -> str:
        return get_npu_arch()

    @npuarch.setter
    def npuarch(self, value: str) -> None:
        set_npu_arch(value)


platform = _Platform()
