"""Ops the SIMT API (``pl.simt``, :mod:`pypto_pro.language.simt`) needs beyond the scalar element
access ops: a tile's current valid rows / columns as a runtime scalar (``tile.valid_shape``).

A SIMT launch itself is no op: it is a loop nest over the threads around the inlined function body,
so every backend runs it with the ops it already has (``getval``/``setval``, scalar arithmetic).
"""
from __future__ import annotations

from .. import dtypes as dt
from ..ir.optable import Arg, In, Out, op
from .scalar import GetVal, SetVal


@op("tile_valid_dim", [In("tile", "tile"), Arg("axis")], "S", internal=True, descriptor_only=True,
    aliases=("Tile.valid_shape",))
class TileValidDim:
    """The valid rows (axis 0) or columns (axis 1) of a Vec tile as set by ``pl.set_validshape``
    (the full shape when never set)."""

    @staticmethod
    def check(c, a):
        if a["axis"] not in (0, 1):
            c.fail("axis is 0 (rows) or 1 (columns)")
        return dt.DT_INT64

    @staticmethod
    def run(ctx, a):
        return int(ctx.tile(a["tile"]).valid[a["axis"]])


# Element access inside a SIMT function: the same semantics as ``src[i, j]`` / ``dst[i, j] = v``, but the
# threads run on the vector core, so the accesses belong to the V pipe (a SIMT launch is ordered against
# loads and stores with the MTE2 -> V / V -> MTE3 syncs the official kernels write), not to the scalar unit.
@op("simt_getval", [In("src", "tile_or_tensor"), Arg("index", "any")], "V", internal=True,
    aliases=("simt.getval",), element_of="src")
class SimtGetVal(GetVal):
    """``src[i, j]`` read by a SIMT thread (V pipe)."""


@op("simt_setval", [Out("dst", "tile_or_tensor"), Arg("index", "any"), Arg("value", "scalar")], "V", internal=True,
    aliases=("simt.setval",), element_of="dst")
class SimtSetVal(SetVal):
    """``dst[i, j] = value`` written by a SIMT thread (V pipe)."""


#: element-access op -> its SIMT-thread variant
ELEMENT_OPS = {"getval": "simt_getval", "setval": "simt_setval"}
