"""The counter-based random word generator behind ``pypto.uniform`` / ``pypto.normal`` (internal op).

``philox(dst, src, key, counter)``: ``dst[i]`` is word ``src[i]`` of the Philox4x32-10 stream
(Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) with the 64-bit ``key`` and
the 64-bit ``counter``: word ``w`` is lane ``w & 3`` of the block computed from the 128-bit counter
``(w >> 2, counter)`` (low 64 bits first, each 64-bit value as its low then high 32-bit half) and
the key halves ``(key & 0xFFFFFFFF, key >> 32)``.  This is the stream of the official ops (their
documented 4x4 examples are reproduced bit for bit).  The words are INT32 bit patterns; every value
is a pure function of its index, so tiles, cores and backends agree whatever the split.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes as dt
from ..ir.optable import Arg, In, Out, op
from ..ir.types import MemorySpace
from .common import window, write_result

ROUNDS = 10
MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
#: the Weyl increments of the key halves between rounds
KEY_STEPS = (0x9E3779B9, 0xBB67AE85)
INDEX_DTYPES = (dt.DT_INT32, dt.DT_INT64)
_LOW = np.uint64(0xFFFFFFFF)


def philox_words(index: np.ndarray, key: int, counter: int) -> np.ndarray:
    """Word ``index`` (non-negative integers) of the stream as uint32 (see the module docstring)."""
    w = np.asarray(index).astype(np.uint64)
    block = w >> np.uint64(2)
    c = [block & _LOW, block >> np.uint64(32), np.full_like(w, counter & 0xFFFFFFFF),
         np.full_like(w, (counter >> 32) & 0xFFFFFFFF)]
    k0, k1 = key & 0xFFFFFFFF, (key >> 32) & 0xFFFFFFFF
    m0, m1 = np.uint64(MULTIPLIERS[0]), np.uint64(MULTIPLIERS[1])
    for _ in range(ROUNDS):
        p0, p1 = c[0] * m0, c[2] * m1  # 32 x 32 -> 64 bits: no wrap in uint64
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ np.uint64(k0), p1 & _LOW,
             (p0 >> np.uint64(32)) ^ c[3] ^ np.uint64(k1), p0 & _LOW]
        k0, k1 = (k0 + KEY_STEPS[0]) & 0xFFFFFFFF, (k1 + KEY_STEPS[1]) & 0xFFFFFFFF
    lane = w & np.uint64(3)
    out = np.choose(lane.astype(np.intp), c)
    return out.astype(np.uint32)


@op("philox", [Out("dst"), In("src"), Arg("key"), Arg("counter")], "V", internal=True, cost="random")
class Philox:
    """philox(dst, src, key, counter): dst (INT32) = word src (INT32/INT64, >= 0) of the Philox4x32-10
    stream of ``key`` and ``counter`` (compile-time 64-bit integers), bit for bit."""

    @staticmethod
    def check(c, a):
        for n in ("dst", "src"):
            c.space(n, a[n], MemorySpace.Vec)
        c.dtype_in("dst", a["dst"], (dt.DT_INT32,))
        c.dtype_in("src", a["src"], INDEX_DTYPES)
        c.same_shape(dst=a["dst"], src=a["src"])
        for n in ("key", "counter"):
            if not isinstance(a[n], int) or not 0 <= a[n] < 2 ** 64:
                c.fail(f"'{n}' must be an int in [0, 2**64), got {a[n]!r}")

    @staticmethod
    def run(ctx, a):
        d, s = ctx.tile(a["dst"]), ctx.tile(a["src"])
        rows, cols = window(ctx, d, s)
        index = s.read(rows, cols)
        if np.any(index < 0):
            raise ctx.error("philox: a negative word index")
        write_result(d, philox_words(index, a["key"], a["counter"]).view(np.int32), rows, cols)
