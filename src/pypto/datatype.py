"""The official ``datatype/`` pages' remaining names: enums that select op variants, and ``bytes_of``.

``ScatterMode`` is accepted by ``pypto.scatter``/``scatter_`` as ``reduce=`` (NONE/ADD/MULTIPLY = None/
"add"/"multiply").  The others name variants of official ops that this implementation spells
otherwise or does not have (``LogBaseType``: ``log2``/``log10`` are functions; ``OpType``/``OutType``:
comparisons are the ``eq``... functions and give BOOL tensors; ``ReduceMode``: ``atomic_add``;
``CachePolicy``: an NPU cache hint), so they exist for code that imports them.
"""
from __future__ import annotations

from enum import IntEnum

from pypto_pro.dtypes import DataType


class ScatterMode(IntEnum):
    NONE = 0
    ADD = 1
    MULTIPLY = 2


class ReduceMode(IntEnum):
    ATOMIC_ADD = 0


class LogBaseType(IntEnum):
    LOG_E = 0
    LOG_2 = 1
    LOG_10 = 2


class OpType(IntEnum):
    EQ = 0
    NE = 1
    LT = 2
    LE = 3
    GT = 4
    GE = 5


class OutType(IntEnum):
    BOOL = 0
    BIT = 1


class CachePolicy(IntEnum):
    PREFETCH = 0
    NONE_CACHEABLE = 1


def bytes_of(dtype: DataType) -> float:
    """``pypto.bytes_of(dtype)``: the bytes of one element (0.5 for 4-bit formats)."""
    if not isinstance(dtype, DataType):
        raise TypeError(f"pypto.bytes_of takes a pypto.DT_* type, got {dtype!r}")
    bits = dtype.bits()
    return bits // 8 if bits % 8 == 0 else bits / 8


SCATTER_MODE_REDUCE = {ScatterMode.NONE: None, ScatterMode.ADD: "add", ScatterMode.MULTIPLY: "multiply"}

__all__ = ["ScatterMode", "ReduceMode", "LogBaseType", "OpType", "OutType", "CachePolicy", "bytes_of"]
