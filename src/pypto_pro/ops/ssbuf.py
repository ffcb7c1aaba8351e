"""SSBUF, the shared scalar buffer of an Ascend 950 block (``pl.ssbuf_store`` / ``pl.ssbuf_load``).

SSBUF is a small byte-addressed buffer that the cube core and the vector cores of one block share; the
scalar (S) pipe copies a ``pl.struct`` into it and out of it, word by word, to pass a few numbers
between cores (synchronised with ``set_cross_core`` / ``wait_cross_core``).  The struct is laid out as
the C++ struct the official code generator emits: its fields in order, each of its dtype (Python ints are
INT64), at its natural alignment, the size rounded up to the largest alignment; ``sizeof // 4`` u32 words
are copied.

The parser flattens structs into scalar variables, so it lowers ``ssbuf_store(s, off)`` to one
``ssbuf_put`` (the struct's bytes, built from its field values) and ``ssbuf_load(s, off)`` to one
``ssbuf_get`` per field the copy covers (each field re-assigned from its bytes).  Both are internal ops.

Decisions where the official material is silent: the buffer holds ``arch.extra["ssbuf_bytes"]`` bytes
(256, the docs' "usually 256 bytes"), one per block; offsets must be multiples of 4 (u32 words) and the
copy must stay inside it, else a run-time error; bytes never written read as 0xFF (like on-chip memory)
and the simulator reports such reads as uninitialised.
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

import numpy as np

from .. import dtypes as dt
from ..ir.optable import Arg, op

#: SSBUF size when the arch table does not give one
DEFAULT_SSBUF_BYTES = 256
UNWRITTEN = 0xFF


def supported(dtype: dt.DataType) -> bool:
    """Field dtypes a struct copied through SSBUF may have (plain C scalars)."""
    return dtype.np_dtype is not None and dtype.codec is None and dtype.nbytes in (1, 2, 4, 8)


def struct_layout(dtypes: Sequence[dt.DataType]) -> Tuple[List[int], int]:
    """(byte offset of each field, bytes copied) of a C struct with fields of ``dtypes`` in order."""
    offsets, pos, align = [], 0, 1
    for d in dtypes:
        size = d.nbytes
        pos = -(-pos // size) * size
        offsets.append(pos)
        pos += size
        align = max(align, size)
    sizeof = -(-pos // align) * align
    return offsets, sizeof // 4 * 4


def capacity(arch) -> int:
    return int(arch.extra.get("ssbuf_bytes", DEFAULT_SSBUF_BYTES))


def _buffer(ctx) -> np.ndarray:
    """The executing core's block's SSBUF (created, unwritten, on first use)."""
    buffers = ctx.launch.ssbuf
    buf = buffers.get(ctx.core.block)
    if buf is None:
        buf = buffers[ctx.core.block] = np.full(capacity(ctx.arch), UNWRITTEN, dtype=np.uint8)
    return buf


def _range(ctx, what: str, offset, nbytes: int) -> int:
    lo = int(ctx.scalar(offset))
    cap = capacity(ctx.arch)
    if lo % 4:
        raise ctx.error(f"{what}: SSBUF offset {lo} is not a multiple of 4 (the struct is copied in u32 words)")
    if lo < 0 or lo + nbytes > cap:
        raise ctx.error(f"{what}: bytes [{lo}, {lo + nbytes}) of the struct leave the {cap}-byte SSBUF")
    return lo


def _layout_check(c, a):
    if c.arch.name in ("a2", "a3"):
        c.fail(f"SSBUF exists on Ascend 950 (a5) only, not on {c.arch.name}")


@op("ssbuf_put", [Arg("offset", "scalar"), Arg("values", "scalars", var=True), Arg("fields", kw_only=True),
                  Arg("nbytes", kw_only=True)], "S", internal=True)
class SsbufPut:
    """ssbuf_put(offset, *values, fields=((byte offset, dtype), ...), nbytes=n): write the first ``n`` bytes of
    the struct image of ``values`` at SSBUF byte ``offset`` (padding bytes are written as 0)."""

    @staticmethod
    def check(c, a):
        _layout_check(c, a)

    @staticmethod
    def run(ctx, a):
        n = a["nbytes"]
        lo = _range(ctx, "pl.ssbuf_store", a["offset"], n)
        image = np.zeros(max(n, 1) + 8, dtype=np.uint8)
        for value, (at, dtype) in zip(a["values"], a["fields"]):
            raw = to_bytes(ctx.scalar(value), dtype)
            image[at:at + raw.size] = raw
        _buffer(ctx)[lo:lo + n] = image[:n]
        ctx.note_ssbuf(lo, lo + n, write=True)


@op("ssbuf_get", [Arg("offset", "scalar"), Arg("at", kw_only=True), Arg("dtype", kw_only=True),
                  Arg("nbytes", kw_only=True)], "S", internal=True)
class SsbufGet:
    """ssbuf_get(offset, at=k, dtype=d, nbytes=n) -> the field of ``dtype`` at byte ``k`` of the struct copied
    (``n`` bytes) from SSBUF byte ``offset``."""

    @staticmethod
    def check(c, a):
        _layout_check(c, a)
        return a["dtype"]

    @staticmethod
    def run(ctx, a):
        dtype, at = a["dtype"], a["at"]
        lo = _range(ctx, "pl.ssbuf_load", a["offset"], a["nbytes"]) + at
        raw = _buffer(ctx)[lo:lo + dtype.nbytes]
        ctx.note_ssbuf(lo, lo + dtype.nbytes, write=False)
        return from_bytes(raw, dtype)


def to_bytes(value, dtype: dt.DataType) -> np.ndarray:
    """The bytes of scalar ``value`` stored as ``dtype`` (integers wrap as in C)."""
    if dtype.kind == "bool":
        arr = np.array(bool(value))
    elif dtype.is_float():
        with np.errstate(all="ignore"):
            arr = np.array(float(value)).astype(dtype.np_dtype)
    else:
        arr = np.array(int(value) & 0xFFFFFFFFFFFFFFFF, dtype=np.uint64).astype(dtype.np_dtype)
    return np.frombuffer(arr.astype(dtype.np_dtype).tobytes(), dtype=np.uint8)


def from_bytes(raw: np.ndarray, dtype: dt.DataType):
    """The scalar value the bytes ``raw`` hold as ``dtype`` (as the interpreter computes with it)."""
    v = np.frombuffer(raw.tobytes(), dtype=dtype.np_dtype)[0]
    if dtype.kind == "bool":
        return bool(v)
    if dtype.is_float():
        return float(np.float32(v))
    return int(v)
