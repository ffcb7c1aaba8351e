"""Host-side platform query (``pypto_pro.runtime.platform.get_platform_info()``, docs/language.md).

There is no NPU to ask: the answer describes the arch the kernels are checked and simulated for
(``$PYPTOPRO_JIT_ARCH`` or the default ``a5``), so tiling code written against the official query
computes the same partitions here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..arch import resolve_arch


@dataclass(frozen=True)
class PlatformInfo:
    core_num: int  # cube / mix blocks
    vector_core_num: int  # AIV cores for vector-only kernels
    soc_version: str
    arch: str

    @property
    def cube_core_num(self) -> int:
        """AIC cores (one per block): the same as ``core_num`` (the official Cube tutorial's spelling)."""
        return self.core_num


def get_platform_info(arch: Optional[str] = None) -> PlatformInfo:
    spec = resolve_arch(arch)
    return PlatformInfo(spec.core_num, spec.vector_core_num, spec.soc_version, spec.name)
