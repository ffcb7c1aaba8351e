"""Reinterpreting the bytes of an FP4 tile as another dtype: not implemented (rejected at declaration).

On the NPU a 4-bit tile is packed two elements per byte, and official kernels alias such a buffer with a
``UINT8`` tile of half the columns to move the packed bytes with byte-wise ops (the MXFP4 quant path:
cast to FP4, move the bytes ND -> NZ as ``UINT8``, insert as FP4).  Here on-chip FP4 tiles hold one
element per byte (GM tensors stay packed), so such an alias would read and write other bytes than on
the NPU and compute wrong numbers silently.  A Vec tile of a 4-bit float type sharing bytes with a tile
of another element size is therefore refused with a NotImplementedError naming the feature.
"""
from __future__ import annotations

from typing import Iterable

from ... import dtypes as dt
from ...ir import nodes as ir
from ...ir.types import MemorySpace


def _packed(decl: ir.TileDecl) -> bool:
    return decl.dtype.name in dt.PACKED_GM


def _overlap(a: ir.TileDecl, b: ir.TileDecl) -> bool:
    return a.addr < b.addr + b.size and b.addr < a.addr + a.size


def check_packed_alias(parser, new: Iterable[ir.TileDecl], node) -> None:
    """Raise the parser's NotImplementedError if one of the ``new`` Vec declarations and an earlier one
    share bytes while exactly one of them is a packed 4-bit float tile."""
    for d in new:
        if d.space != MemorySpace.Vec:
            continue
        for other in parser.tiles:
            if other.space == MemorySpace.Vec and _packed(other) != _packed(d) and _overlap(d, other):
                fp4, raw = (d, other) if _packed(d) else (other, d)
                raise parser.not_implemented(
                    f"packed FP4 on-chip storage is not implemented: the {fp4.dtype.name} Vec tile {fp4.name} shares "
                    f"bytes with the {raw.dtype.name} tile {raw.name}, a reinterpretation that needs two 4-bit "
                    f"elements per byte (here each takes one byte)", node)
