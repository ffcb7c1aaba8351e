"""Architecture descriptions as data (docs/language.md "Tiles", docs/architecture.md).

One table per arch gives memory capacities, address alignments and the core topology.  The
verifier, every backend and (later) the cost model read these tables, so a kernel that overflows
UB on a5 fails the same way everywhere.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Dict

from .errors import KernelLaunchError


@dataclass(frozen=True)
class ArchSpec:
    """Static facts about one Ascend AI-Core generation."""

    name: str
    soc_version: str
    #: bytes of each on-chip memory, keyed by MemorySpace name.
    capacity: Dict[str, int]
    #: required byte alignment of a tile's address, keyed by MemorySpace name (absent = none).
    addr_align: Dict[str, int]
    #: number of AI-Core blocks (each one cube core plus ``vector_per_block`` vector cores).
    #: a2/a3: 24 (soc.cpp fallback); a5: 32 is our assumption (not stated in the sources we have).
    core_num: int
    vector_per_block: int = 2
    #: Acc fractal (rows, cols) of the L0C result layout.
    acc_fractal: tuple = (16, 16)
    extra: Dict[str, int] = field(default_factory=dict)

    @property
    def vector_core_num(self) -> int:
        return self.core_num * self.vector_per_block


_COMMON_ALIGN = {"Vec": 32, "Mat": 32, "Left": 512, "Right": 512, "Acc": 64, "ScaleLeft": 32, "ScaleRight": 32}

ARCHS: Dict[str, ArchSpec] = {
    "a2": ArchSpec(
        name="a2", soc_version="Ascend910B",
        capacity={"Vec": 196_608, "Mat": 524_288, "Left": 65_536, "Right": 65_536, "Acc": 131_072,
                  "Bias": 1_024, "Scaling": 2_048},
        addr_align=_COMMON_ALIGN, core_num=24,
    ),
    "a3": ArchSpec(
        name="a3", soc_version="Ascend910_93",
        capacity={"Vec": 196_608, "Mat": 524_288, "Left": 65_536, "Right": 65_536, "Acc": 131_072,
                  "Bias": 1_024, "Scaling": 2_048},
        addr_align=_COMMON_ALIGN, core_num=24,
    ),
    "a5": ArchSpec(
        name="a5", soc_version="Ascend950PR",
        capacity={"Vec": 253_952, "Mat": 524_288, "Left": 65_536, "Right": 65_536, "Acc": 262_144,
                  "Bias": 4_096, "Scaling": 4_096, "ScaleLeft": 4_096, "ScaleRight": 4_096,
                  # registers of the Reg/VF API, one 256-byte slot per register the kernel names
                  "Reg": 262_144},
        addr_align=_COMMON_ALIGN, core_num=32,
        extra={"ssbuf_bytes": 256},  # the shared scalar buffer of a block (ops/ssbuf.py)
    ),
}

DEFAULT_ARCH = "a5"


def resolve_arch(arch) -> ArchSpec:
    """``None``/``"auto"`` -> ``$PYPTOPRO_JIT_ARCH`` -> ``"a5"`` (docs/contract.md "Backends and their selection")."""
    if arch in (None, "auto"):
        arch = os.environ.get("PYPTOPRO_JIT_ARCH") or DEFAULT_ARCH
    if isinstance(arch, ArchSpec):
        return arch
    try:
        return ARCHS[str(arch)]
    except KeyError:
        raise KernelLaunchError(f"unknown arch {arch!r}; expected one of {sorted(ARCHS)}") from None
