"""Enums of the Reg/VF API (``pl.MaskPattern``, ``pl.LoadDist``, ...): compile-time values that steer
``vf.*`` calls.  Members carry their own name as value; the IR stores the name."""
from __future__ import annotations

import enum


class _Named(enum.Enum):
    def __repr__(self) -> str:
        return f"pl.{type(self).__name__}.{self.name}"


def _make(name: str, members: str):
    return _Named(name, [(m, m) for m in members.split()], module=__name__)


MaskPattern = _make("MaskPattern", "ALL ALLF VL1 VL2 VL3 VL4 VL8 VL16 VL32 VL64 VL128 H Q M3 M4")
LoadDist = _make("LoadDist", "NORM BRC BRC_B8 BRC_B16 BRC_B32 US US_B8 US_B16 DS DS_B8 DS_B16 UNPK UNPK_B8 UNPK_B16 "
                             "UNPK_B32 UNPK4 BLK E2B E2B_B16 E2B_B32 DINTLV_B8 DINTLV_B16 DINTLV_B32")
StoreDist = _make("StoreDist", "NORM NORM_B16 FIRST_ELEMENT PACK PACK4 INTLV INTLV_B32")
MergeMode = _make("MergeMode", "ZEROING MERGING")
CastLayout = _make("CastLayout", "ZERO ONE TWO THREE")
VFRoundMode = _make("VFRoundMode", "CAST_ROUND CAST_RINT CAST_FLOOR CAST_CEIL CAST_TRUNC CAST_ODD CAST_HYBRID")
SaturateMode = _make("SaturateMode", "OFF ON")
DataCopyMode = _make("DataCopyMode", "NORM DATA_BLOCK_LOAD DATA_BLOCK_COPY")
DuplicatePos = _make("DuplicatePos", "LOWEST HIGHEST")
MemBarMode = _make("MemBarMode", "VST_VLD VLD_VST VST_VST VST_LD VST_ST VLD_ST ST_VLD ST_VST LD_VST VV_ALL VS_ALL SV_ALL")
SqueezeMode = _make("SqueezeMode", "NO_STORE_REG STORE_REG")
HistType = _make("HistType", "ACCUMULATE FREQUENCY")
BinType = _make("BinType", "BIN0 BIN1")
PackPart = _make("PackPart", "LOWER UPPER")
MaskWidth = _make("MaskWidth", "B32 B16")
IndexOrder = _make("IndexOrder", "INCREASE_ORDER DECREASE_ORDER")

ENUMS = {e.__name__: e for e in (MaskPattern, LoadDist, StoreDist, MergeMode, CastLayout, VFRoundMode, SaturateMode,
                                 DataCopyMode, DuplicatePos, MemBarMode, SqueezeMode, HistType, BinType, PackPart,
                                 MaskWidth, IndexOrder)}
