"""Descriptor types of the tile language: memory spaces, layouts, enums and ``TileType``.

These are plain compile-time values: kernel code builds them while the parser evaluates it, and
the IR stores them.  Nothing here touches memory.
"""
from __future__ import annotations

import enum
from typing import List, Optional, Sequence

from ..dtypes import DataType


class MemorySpace(enum.Enum):
    """Where a buffer lives (docs/language.md "Tiles")."""

    DDR = "DDR"
    Vec = "Vec"
    Mat = "Mat"
    Left = "Left"
    Right = "Right"
    Acc = "Acc"
    Bias = "Bias"
    Scaling = "Scaling"
    ScaleLeft = "ScaleLeft"
    ScaleRight = "ScaleRight"
    #: the vector core's register file (Reg/VF API): vector and mask registers, never user tiles
    Reg = "Reg"

    def __repr__(self) -> str:
        return f"pl.MemorySpace.{self.name}"


#: On-chip spaces per core type.
CUBE_SPACES = frozenset({MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc,
                         MemorySpace.Bias, MemorySpace.Scaling, MemorySpace.ScaleLeft, MemorySpace.ScaleRight})
VECTOR_SPACES = frozenset({MemorySpace.Vec})


class Layout(enum.Enum):
    """Element order of a tile or tensor.  Capital letter: order of fractal blocks, small letter:
    order inside a block (Z/z row-major, N/n column-major).  ND is plain row-major, DN column-major."""

    ND = "ND"
    DN = "DN"
    NZ = "NZ"
    ZN = "ZN"
    ZZ = "ZZ"
    NN = "NN"

    def __repr__(self) -> str:
        return f"pl.{self.name}"


class TilePad(enum.IntEnum):
    """Fill value used by ``fillpad`` outside the valid window."""

    null = 0
    zero = 1
    max = 2
    min = 3


class RoundMode(enum.IntEnum):
    CAST_NONE = 0
    CAST_RINT = 1
    CAST_ROUND = 2
    CAST_FLOOR = 3
    CAST_CEIL = 4
    CAST_TRUNC = 5
    CAST_ODD = 6


class PipeType(enum.Enum):
    MTE1 = "MTE1"
    MTE2 = "MTE2"
    MTE3 = "MTE3"
    M = "M"
    V = "V"
    S = "S"
    FIX = "FIX"
    ALL = "ALL"

    def __repr__(self) -> str:
        return f"pl.PipeType.{self.name}"


class AtomicType(enum.IntEnum):
    AtomicNone = 0
    AtomicAdd = 1


class ReluPreMode(enum.IntEnum):
    NoRelu = 0
    NormalRelu = 1


class AccToVecMode(enum.IntEnum):
    SingleModeVec0 = 0
    SingleModeVec1 = 1
    DualModeSplitM = 2
    DualModeSplitN = 3


class FillPadMode(enum.IntEnum):
    NORMAL = 0
    EXPAND = 1
    INPLACE = 2


class CrossCoreSyncMode(enum.IntEnum):
    INTER_BLOCK = 0
    INTER_SUBBLOCK = 1
    INTRA_BLOCK = 2
    UNICAST_BLOCK = 3


class SyncCoreType(enum.IntEnum):
    AIV_ONLY = 0
    AIC_ONLY = 1
    MIX = 2


class SyncAllMode(enum.IntEnum):
    HARD = 0
    SOFT = 1


class CacheLine(enum.IntEnum):
    """``pl.system.dcci`` scope: the 64-byte line of the address, or the whole data cache."""

    SINGLE_CACHE_LINE = 0
    ENTIRE_DATA_CACHE = 1


class DcciDst(enum.IntEnum):
    """``pl.system.dcci`` target cache."""

    AUTO = 0
    CACHELINE_OUT = 1
    CACHELINE_UB = 2
    CACHELINE_ALL = 3
    CACHELINE_ATOMIC = 4


class AccPhase(enum.IntEnum):
    Partial = 0
    Final = 1


class STPhase(enum.IntEnum):
    Partial = 0
    Final = 1


def default_layout(space: MemorySpace, dtype: DataType, arch: str) -> Layout:
    """The layout a tile gets when ``TileType(layout=None)`` (docs/language.md "Tiles")."""
    if space == MemorySpace.Mat:
        return Layout.ND if dtype.name in ("INT64", "UINT64") else Layout.NZ
    if space == MemorySpace.Left:
        return Layout.NZ if arch == "a5" else Layout.ZZ
    if space == MemorySpace.Right:
        return Layout.ZN
    if space == MemorySpace.Acc:
        return Layout.NZ
    if space == MemorySpace.ScaleLeft:
        return Layout.ZZ
    if space == MemorySpace.ScaleRight:
        return Layout.NN
    return Layout.ND


_LEGAL_LAYOUTS = {
    MemorySpace.Vec: {Layout.ND, Layout.DN, Layout.NZ},
    MemorySpace.Mat: {Layout.ND, Layout.DN, Layout.NZ, Layout.ZN, Layout.ZZ, Layout.NN},
    MemorySpace.Left: {Layout.NZ, Layout.ZZ},
    MemorySpace.Right: {Layout.ZN, Layout.NZ},
    MemorySpace.Acc: {Layout.NZ, Layout.ND},
    MemorySpace.Bias: {Layout.ND},
    MemorySpace.Scaling: {Layout.ND},
    MemorySpace.ScaleLeft: {Layout.ZZ},
    MemorySpace.ScaleRight: {Layout.NN},
}


class TileType:
    """Descriptor of an on-chip tile: 2-D shape, dtype, memory space, layout, valid shape, pad.

    ``valid_shape=None`` means the valid window starts as the full shape; ``-1`` in an entry marks a
    dimension set at run time with ``pl.set_validshape`` (it too starts as the full extent).
    """

    def __init__(self, shape: Sequence[int], dtype: DataType, target_memory: MemorySpace = MemorySpace.Vec,
                 valid_shape: Optional[Sequence[int]] = None, layout: Optional[Layout] = None,
                 fractal: Optional[int] = None, pad: Optional[TilePad] = None, compact: Optional[int] = None):
        shape = list(shape) if isinstance(shape, (list, tuple)) else shape
        if target_memory == MemorySpace.Scaling and isinstance(shape, list) and len(shape) != 2:
            raise ValueError(f"a Scaling tile holds the fixpipe's per-channel scales: the scale tile must be 2D with "
                             f"shape [1, N], got {shape!r}")
        if not isinstance(shape, list) or len(shape) != 2 or not all(
                isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in shape):
            raise ValueError(f"TileType shape must be two positive compile-time ints, got {shape!r}")
        if not isinstance(dtype, DataType):
            raise ValueError(f"TileType dtype must be a pl.DT_* type, got {dtype!r}")
        if not isinstance(target_memory, MemorySpace) or target_memory == MemorySpace.DDR:
            raise ValueError(f"TileType target_memory must be an on-chip pl.MemorySpace, got {target_memory!r}")
        if valid_shape is not None:
            valid_shape = list(valid_shape)
            if len(valid_shape) != 2 or not all(isinstance(v, int) and (v == -1 or 0 < v <= s)
                                                for v, s in zip(valid_shape, shape)):
                raise ValueError(f"TileType valid_shape must be two ints in [1, shape] or -1, got {valid_shape!r}")
        if layout is not None:
            if not isinstance(layout, Layout):
                raise ValueError(f"TileType layout must be pl.ND/DN/NZ/ZN/ZZ/NN, got {layout!r}")
            if layout not in _LEGAL_LAYOUTS.get(target_memory, {Layout.ND}):
                raise ValueError(f"layout {layout.name} is not legal for a {target_memory.name} tile")
        if pad is not None and not isinstance(pad, TilePad):
            pad = TilePad(pad)
        if compact not in (None, 0, 1, 2):
            raise ValueError(f"TileType compact must be 0, 1 or 2, got {compact!r}")
        self.shape: List[int] = shape
        self.dtype = dtype
        self.target_memory = target_memory
        self.valid_shape = valid_shape
        self.layout = layout
        self.fractal = fractal
        self.pad = pad if pad is not None else TilePad.null
        self.compact = compact or 0

    @property
    def nbytes(self) -> int:
        """Default tile size in bytes: ``prod(shape) * max(1, ceil(bits/8))``."""
        return self.shape[0] * self.shape[1] * self.dtype.nbytes

    def __repr__(self) -> str:
        extra = f", layout={self.layout!r}" if self.layout else ""
        return f"TileType({self.shape}, {self.dtype!r}, {self.target_memory!r}{extra})"


class QuantMode(enum.IntEnum):
    """``pl.quant``'s mode: symmetric (INT8 result) or asymmetric (UINT8 result with a zero-point offset)."""

    SYM = 0
    ASYM = 1
